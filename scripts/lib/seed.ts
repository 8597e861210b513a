// The demo data `npm start` creates: one live program with a partner and a referral link. Idempotent:
// found by slug on later starts. The tracking token is stored hashed; its clear value is kept only in the
// git-ignored stack folder so later starts can print it again.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Sql } from '../../shared/db/sql.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { DEV_STACK, STACK_DIR } from './stack.ts';

/** Where the demo program's clear tracking token is kept between runs (git-ignored). */
export const DEMO_TOKEN_FILE = join(STACK_DIR, DEV_STACK.name, 'demo-tracking-token.txt');

export interface DemoSeed {
  programId: number;
  partnerId: number;
  linkId: number;
  shortLink: string;
  trackingToken: string;
}

export async function seedDemo(sql: Sql, tokenFile = DEMO_TOKEN_FILE): Promise<DemoSeed> {
  let token: string | null = await readFile(tokenFile, 'utf8').then(
    (t) => t.trim(),
    () => null,
  );
  return sql.begin(async (tx) => {
    let [program] = await tx<{ id: string; api_token_hash: Buffer | null }[]>`
      select id, api_token_hash from programs where slug = 'demo'`;
    if (!program) {
      const [ws] = await tx<
        { id: string }[]
      >`insert into workspaces (name) values ('Demo workspace') returning id`;
      [program] = await tx<{ id: string; api_token_hash: Buffer | null }[]>`
        insert into programs (workspace_id, name, slug, status, cookie_window_days, commission, allowed_origins)
        values (${ws!.id}, 'Demo program', 'demo', 'live', 60,
                ${tx.json({ type: 'percentage', percent: 30 })}, ${['http://localhost:3000']})
        returning id, api_token_hash`;
    }
    if (!token || !program!.api_token_hash?.equals(hashSecret(token))) {
      token = generateSecret('aff_');
      await tx`update programs set api_token_hash = ${hashSecret(token)}, api_token_masked = ${maskSecret(token)}
               where id = ${program!.id}`;
      await mkdir(dirname(tokenFile), { recursive: true });
      await writeFile(tokenFile, token + '\n', { mode: 0o600 });
    }
    let [partner] = await tx<{ id: string }[]>`select id from partners where email = 'partner@demo.example'`;
    if (!partner) {
      [partner] = await tx<{ id: string }[]>`
        insert into partners (workspace_id, name, email)
        select workspace_id, 'Demo Partner', 'partner@demo.example' from programs where id = ${program!.id}
        returning id`;
    }
    const [pp] = await tx<{ id: string }[]>`
      insert into partner_programs (partner_id, program_id, status) values (${partner!.id}, ${program!.id}, 'approved')
      on conflict (partner_id, program_id) do update set status = partner_programs.status
      returning id`;
    const [link] = await tx<{ id: string }[]>`
      insert into referral_links (short_link, program_id, partner_id, partner_program_id)
      values ('demo', ${program!.id}, ${partner!.id}, ${pp!.id})
      on conflict (short_link) do update set short_link = excluded.short_link
      returning id`;
    return {
      programId: Number(program!.id),
      partnerId: Number(partner!.id),
      linkId: Number(link!.id),
      shortLink: 'demo',
      trackingToken: token,
    };
  });
}
