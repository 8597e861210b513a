// The demo data `npm start` creates: one live program with two partners and their referral links, a demo
// owner who can log in to the dashboard, and about 30 days of traffic (demo-traffic.ts). Idempotent: found
// by slug, email and a marker on later starts. The tracking token and the owner's password are stored
// hashed; their clear values are kept only in the git-ignored stack folder so later starts can print them.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Sql } from '../../../shared/db/sql.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../shared/domain/secrets.ts';
import { hashPassword, verifyPassword } from '../../../shared/domain/passwords.ts';
import { DEV_STACK, STACK_DIR } from '../stack/stack.ts';
import { seedDemoTraffic } from './demo-traffic.ts';
import type { TrafficSummary } from './demo-traffic.ts';
import { seedDemoPartner } from './partner.ts';

/** Where the demo program's clear tracking token is kept between runs (git-ignored). */
export const DEMO_TOKEN_FILE = join(STACK_DIR, DEV_STACK.name, 'demo-tracking-token.txt');
/** Where the demo owner's clear password is kept between runs (git-ignored). */
export const DEMO_PASSWORD_FILE = join(STACK_DIR, DEV_STACK.name, 'demo-owner-password.txt');
export const DEMO_EMAIL = 'demo@example.com';

async function readSecret(file: string): Promise<string | null> {
  return readFile(file, 'utf8').then(
    (t) => t.trim() || null,
    () => null,
  );
}

async function keepSecret(file: string, value: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, value + '\n', { mode: 0o600 });
}

export interface DemoSeed {
  programId: number;
  partnerId: number;
  linkId: number;
  shortLink: string;
  trackingToken: string;
  workspaceId: number;
  /** Both partners' links: `demo` (Demo Partner) and `demo-blog` (Blog Partner). */
  links: { linkId: number; partnerId: number; partnerProgramId: number; weight: number }[];
}

export async function seedDemo(sql: Sql, tokenFile = DEMO_TOKEN_FILE): Promise<DemoSeed> {
  let token = await readSecret(tokenFile);
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
      await keepSecret(tokenFile, token);
    }
    const links = [];
    for (const p of [
      { name: 'Demo Partner', email: 'partner@demo.example', link: 'demo', weight: 3 },
      { name: 'Blog Partner', email: 'blog@demo.example', link: 'demo-blog', weight: 1 },
    ]) {
      let [partner] = await tx<{ id: string }[]>`select id from partners where email = ${p.email}`;
      if (!partner) {
        [partner] = await tx<{ id: string }[]>`
          insert into partners (workspace_id, name, email)
          select workspace_id, ${p.name}, ${p.email} from programs where id = ${program!.id}
          returning id`;
      }
      const [pp] = await tx<{ id: string }[]>`
        insert into partner_programs (partner_id, program_id, status) values (${partner!.id}, ${program!.id}, 'approved')
        on conflict (partner_id, program_id) do update set status = partner_programs.status
        returning id`;
      const [link] = await tx<{ id: string }[]>`
        insert into referral_links (short_link, program_id, partner_id, partner_program_id)
        values (${p.link}, ${program!.id}, ${partner!.id}, ${pp!.id})
        on conflict (short_link) do update set short_link = excluded.short_link
        returning id`;
      links.push({
        linkId: Number(link!.id),
        partnerId: Number(partner!.id),
        partnerProgramId: Number(pp!.id),
        weight: p.weight,
      });
    }
    const [ws] = await tx<
      { workspace_id: string }[]
    >`select workspace_id from programs where id = ${program!.id}`;
    return {
      programId: Number(program!.id),
      partnerId: links[0]!.partnerId,
      linkId: links[0]!.linkId,
      shortLink: 'demo',
      trackingToken: token,
      workspaceId: Number(ws!.workspace_id),
      links,
    };
  });
}

/**
 * The demo owner (demo@example.com), owner of the demo program's workspace. The password is generated on
 * first use, stored hashed like any other, and its clear value kept in `passwordFile`; when that file is
 * missing or no longer matches, a new password is generated (the only way back into a demo account).
 */
export async function seedDemoOwner(
  sql: Sql,
  workspaceId: number,
  passwordFile = DEMO_PASSWORD_FILE,
): Promise<{ email: string; password: string }> {
  let password = await readSecret(passwordFile);
  const [user] = await sql<{ id: string; password_hash: string }[]>`
    select id, password_hash from users where lower(email) = ${DEMO_EMAIL}`;
  const valid =
    user !== undefined && password !== null && (await verifyPassword(password, user.password_hash));
  if (!valid || password === null) {
    password = randomBytes(12).toString('base64url');
    const hash = await hashPassword(password);
    await sql`
      insert into users (email, name, password_hash) values (${DEMO_EMAIL}, 'Demo Owner', ${hash})
      on conflict ((lower(email))) do update set password_hash = excluded.password_hash`;
    await keepSecret(passwordFile, password);
  }
  await sql`
    insert into memberships (user_id, workspace_id, role)
    select id, ${workspaceId}, 'owner' from users where lower(email) = ${DEMO_EMAIL}
    on conflict (user_id, workspace_id) do nothing`;
  return { email: DEMO_EMAIL, password };
}

export interface FullDemo extends DemoSeed {
  owner: { email: string; password: string };
  /** The demo partner account of the portal (/partner/). */
  partner: { email: string; password: string };
  traffic: TrafficSummary;
}

/** Everything `npm start` seeds on the embedded stack: the program, the owner, the traffic. */
export async function seedFullDemo(
  sql: Sql,
  files: { token?: string; password?: string; partnerPassword?: string } = {},
  now = Date.now(),
): Promise<FullDemo> {
  const demo = await seedDemo(sql, files.token);
  const owner = await seedDemoOwner(sql, demo.workspaceId, files.password);
  const partner = await seedDemoPartner(sql, demo, files.partnerPassword);
  const traffic = await sql.begin((tx) => seedDemoTraffic(tx, demo.programId, demo.links, now));
  return { ...demo, owner, partner, traffic };
}
