// Migration 0026 on a database with history (docs/rewards.md "What older rows show"): a database at 0025
// with a program, its partner, customers, sales and commissions (one priced by today's rate, one by a
// product rule, one by a rate changed since, one reversed), then 0026 applied by the real migrate(): every
// program has its default group and every partner is in it, each commission names the default group and a
// rule derived from the policy where it can be told, the pairs and the partners' figures are backfilled, and
// rows inserted afterwards without a group (seeds, tests) land in the default group.
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import pg from 'pg';
import { createSql } from '../../shared/db/sql.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { stackEnv } from '../helpers/stack.ts';

const DIR = fileURLToPath(new URL('../../shared/db/migrations/', import.meta.url));
const base = stackEnv().DATABASE_URL;
const name = `svc_m${randomBytes(5).toString('hex')}`;
const admin = createSql(base, 1, 'svc-test-admin');
await admin.unsafe(`create database ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await admin.unsafe(`drop database if exists ${name}`).catch(() => {});
  await admin.end({ timeout: 5 });
});

// The migrations before 0026, as migrate() records them.
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query(`create table schema_migrations (
  name text primary key, checksum text not null, applied_at timestamptz not null default now())`);
for (const file of (await readdir(DIR)).filter((f) => f.endsWith('.sql') && f < '0026').sort()) {
  const text = await readFile(DIR + file, 'utf8');
  await client.query(text);
  await client.query('insert into schema_migrations (name, checksum) values ($1, $2)', [
    file,
    createHash('sha256').update(text).digest('hex'),
  ]);
}
await client.end();
const sql = createSql(url.toString(), 2, 'svc-test');

// History from before groups.
const [ws] = await sql<{ id: string }[]>`insert into workspaces (name) values ('old') returning id`;
const policy = {
  type: 'percentage',
  percent: 10,
  product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 500 }],
};
const [program] = await sql<{ id: string }[]>`
  insert into programs (workspace_id, name, slug, commission)
  values (${ws!.id}, 'Old', ${`old-${name}`}, ${sql.json(policy)}) returning id`;
const [partner] = await sql<
  { id: string }[]
>`insert into partners (name, email) values ('P', 'p@old.example') returning id`;
const [pp] = await sql<{ id: string }[]>`
  insert into partner_programs (partner_id, program_id) values (${partner!.id}, ${program!.id}) returning id`;
const customer = async (key: string) =>
  (
    await sql<{ id: string }[]>`
      insert into customers (program_id, partner_id, partner_program_id, customer_status, customer_key)
      values (${program!.id}, ${partner!.id}, ${pp!.id}, 'conversion', ${key}) returning id`
  )[0]!.id;
const c1 = await customer('c1');
const c2 = await customer('c2');
async function sale(
  cust: string,
  cents: number,
  commission: number,
  extra: { product?: string; status?: string; deducted?: number } = {},
) {
  const txn = `old-${randomBytes(4).toString('hex')}`;
  const [s] = await sql<{ id: string }[]>`
    insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, transaction_id,
                       amount_cents, currency, sale_type, product_id, sale_date)
    values (${txn}, ${program!.id}, ${cust}, ${partner!.id}, ${pp!.id}, ${txn}, ${cents}, 'USD', 'payment',
            ${extra.product ?? null}, '2026-11-10T12:00:00Z') returning id`;
  // world-by-hand: rows of a database at migration 0025, older than today's lifecycle, whose insert writes
  // 0026's columns (group_id, rule): the history the migration backfills cannot be made by it.
  const [c] = await sql<{ id: string }[]>`
    insert into commissions (sale_id, program_id, partner_id, partner_program_id, customer_id, amount_cents,
                             currency, status, deducted_cents, refund_reason)
    values (${s!.id}, ${program!.id}, ${partner!.id}, ${pp!.id}, ${cust}, ${commission}, 'USD',
            ${extra.status ?? 'approved'}, ${extra.deducted ?? 0}, ${extra.status === 'reversed' ? 'refund' : null})
    returning id`;
  return Number(c!.id);
}
const byRate = await sale(c1, 10_000, 1000);
const byProduct = await sale(c1, 10_000, 500, { product: 'pro' });
const byOldRate = await sale(c2, 10_000, 1500);
const reversed = await sale(c2, 4_000, 400, { status: 'reversed', deducted: 400 });

await migrate(url.toString(), { info() {} });

t.test('every program has its default group, every partner is in it', async (t) => {
  const groups = await sql<{ id: string; name: string; slug: string; commission: unknown }[]>`
    select id, name, slug, commission from program_groups where program_id = ${program!.id} and is_default`;
  t.match(groups, [{ name: 'Default', slug: 'default', commission: null }], "its policy is the program's");
  const [row] = await sql<{ group_id: string }[]>`select group_id from partner_programs where id = ${pp!.id}`;
  t.equal(row!.group_id, groups[0]!.id);
});

t.test('each commission names the default group and the rule it can be told was applied', async (t) => {
  const rows = await sql<{ id: string; group_id: string; rule: unknown }[]>`
    select id, group_id, rule from commissions where program_id = ${program!.id} order by id`;
  const ruleOf = new Map(rows.map((r) => [Number(r.id), r.rule]));
  t.same(ruleOf.get(byRate), { source: 'group', type: 'percentage', percent: 10, amount_cents: null });
  t.same(ruleOf.get(byProduct), { source: 'product', type: 'flat', percent: null, amount_cents: 500 });
  t.same(
    ruleOf.get(byOldRate),
    { source: 'group', type: null, percent: null, amount_cents: null },
    'priced by a rate changed since: it cannot be told',
  );
  t.same(new Set(rows.map((r) => r.group_id)).size, 1, 'all in the default group');
  t.ok(ruleOf.get(reversed));
});

t.test('pairs and figures from the history', async (t) => {
  const pairs = await sql<{ customer_id: string; commissions: number }[]>`
    select customer_id, commissions from partner_customers where partner_program_id = ${pp!.id} order by customer_id`;
  t.same(
    pairs.map((p) => [p.customer_id, p.commissions]),
    [
      [c1, 2],
      [c2, 2],
    ],
  );
  const [m] = await sql<{ sales_cents: string; customers: string; commission_cents: string }[]>`
    select sales_cents::text, customers::text, commission_cents::text from partner_metrics
    where partner_program_id = ${pp!.id} and period = '1970-01-01'`;
  t.same(
    [Number(m!.sales_cents), Number(m!.customers), Number(m!.commission_cents)],
    [30_000, 2, 3000],
    'the reversed sale counts nothing',
  );
});

t.test('rows written afterwards without a group land in the default group', async (t) => {
  const [p2] = await sql<{ id: string }[]>`
    insert into programs (workspace_id, name, slug) values (${ws!.id}, 'New', ${`new-${name}`}) returning id`;
  const [g] = await sql<
    { id: string }[]
  >`select id from program_groups where program_id = ${p2!.id} and is_default`;
  t.ok(g, 'a new program has its default group');
  const [pp2] = await sql<{ group_id: string }[]>`
    insert into partner_programs (partner_id, program_id) values (${partner!.id}, ${p2!.id}) returning group_id`;
  t.equal(pp2!.group_id, g!.id);
});
