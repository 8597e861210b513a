// What the sale and webhook benchmarks start from: a live program (30 % commission) with one partner, one
// link and `customers` click-stage customers (ids `cust_<pp>_<n>`, keys `bench-<n>` when asked for).
import type { Sql } from '../../../shared/db/sql.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../shared/domain/secrets.ts';

export interface BenchProgram {
  programId: number;
  workspaceId: number;
  token: string;
  clickIds: string[];
}

export async function seedBenchProgram(
  sql: Sql,
  opts: { customers: number; customerKeys: boolean },
): Promise<BenchProgram> {
  const token = generateSecret('aff_');
  const [ws] = await sql<{ id: string }[]>`insert into workspaces (name) values ('bench') returning id`;
  const [program] = await sql<{ id: string }[]>`
    insert into programs (workspace_id, name, slug, status, commission, api_token_hash, api_token_masked)
    values (${ws!.id}, 'Bench', 'bench', 'live', ${sql.json({ type: 'percentage', percent: 30 })},
            ${hashSecret(token)}, ${maskSecret(token)}) returning id`;
  const programId = Number(program!.id);
  const [partner] = await sql<{ id: string }[]>`
    insert into partners (name, email) values ('P', 'p@bench.example') returning id`;
  const [pp] = await sql<{ id: string }[]>`
    insert into partner_programs (partner_id, program_id) values (${partner!.id}, ${programId}) returning id`;
  const [link] = await sql<{ id: string }[]>`
    insert into referral_links (short_link, program_id, partner_id, partner_program_id)
    values ('bench', ${programId}, ${partner!.id}, ${pp!.id}) returning id`;
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_key,
                           customer_status, first_click_at, last_click_at)
    select ${programId}, ${partner!.id}, ${pp!.id}, ${link!.id}, 'cust_' || ${pp!.id} || '_' || g,
           ${opts.customerKeys ? sql`'bench-' || (g - 1)` : sql`null`}, 'click', now(), now()
    from generate_series(1, ${opts.customers}) g`;
  const clickIds = Array.from({ length: opts.customers }, (_, i) => `cust_${pp!.id}_${i + 1}`);
  return { programId, workspaceId: Number(ws!.id), token, clickIds };
}
