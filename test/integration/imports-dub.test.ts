// Importing a Dub Partners program (CONTRACT part five; docs/importing.md "Dub") from a double of its API built
// from its documentation (scripts/lib/seed/source-doubles.ts: Bearer key, JSON arrays paged by `startingAfter`,
// commissions listed one `status` at a time): groups with their sale reward, hold and discount; partners
// (a banned one left out) with their link keys as link codes; discount codes as partner codes (a disabled
// one skipped); customers by `stripeCustomerId` (one without: customer_not_found); commissions pending and
// processed → pending and approved, paid → paid (in no payout run), canceled, fraud and duplicate →
// rejected, a lead commission not_a_sale. The ledger equals the balances; a second run creates nothing.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { apiProgram } from '../helpers/partners.ts';
import { groupsOf } from '../helpers/rewards.ts';
import { assertMoney } from '../helpers/money.ts';
import { TEST_IMPORT_KEY, errorsOf, runImport } from '../helpers/imports.ts';
import { startDub } from '../../scripts/lib/seed/source-doubles.ts';
import type { DubData, Obj } from '../../scripts/lib/seed/source-doubles.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'import-worker'], {
  IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  OUTBOX_POLL_MS: '50',
});
const owner = await signup(svc);
const program = await apiProgram(svc, owner);
const tag = randomBytes(3).toString('hex');
const KEY = `dub_${tag}`;
const pad = (i: number) => String(i).padStart(4, '0');

// 105 partners: the partners list takes two pages of 100.
const data: DubData = {
  groups: [
    {
      id: 'grp_a',
      name: `Creators ${tag}`,
      slug: 'creators',
      saleReward: { type: 'percentage', amount: 25, maxDuration: 12 },
      holdingPeriodDays: 14,
      discount: { amount: 10, type: 'percentage', maxDuration: 3, couponId: `coup_${tag}` },
    },
    {
      id: 'grp_b',
      name: `Agencies ${tag}`,
      slug: 'agencies',
      saleReward: { type: 'flat', amount: 1500, maxDuration: 0 },
      holdingPeriodDays: 0,
      discount: null,
    },
  ],
  partners: [],
  discountCodes: [],
  customers: [],
  commissions: [],
};
for (let i = 0; i < 105; i++) {
  data.partners.push({
    id: `pn_${pad(i)}`,
    name: `Partner ${i}`,
    email: `dub${i}-${tag}@example.com`,
    groupId: i % 2 === 0 ? 'grp_a' : 'grp_b',
    status: i === 4 ? 'banned' : 'approved',
    links: [
      {
        id: `link_${pad(i)}`,
        domain: 'dub.sh',
        key: `d${i}${tag}`,
        shortLink: `https://dub.sh/d${i}${tag}`,
        url: 'https://shop.example',
      },
    ],
  });
  data.discountCodes.push({
    id: `dc_${pad(i)}`,
    code: `DUB${i}${tag}`.slice(0, 32),
    partnerId: `pn_${pad(i)}`,
    discountId: 'disc_1',
    linkId: `link_${pad(i)}`,
    disabledAt: i === 1 ? new Date().toISOString() : null,
  });
  data.customers.push({
    id: `cust_${pad(i)}`,
    externalId: `ext_${i}`,
    name: `Customer ${i}`,
    email: `c${i}-${tag}@example.com`,
    stripeCustomerId: i === 2 ? null : `cus_${tag}${i}`,
    sales: 1,
    createdAt: new Date(Date.now() - 100 * 86_400_000).toISOString(),
    partner: { id: `pn_${pad(i)}` },
    link: { key: `d${i}${tag}` },
  });
}
const statuses = ['pending', 'processed', 'paid', 'canceled', 'fraud', 'duplicate', 'refunded'];
for (let j = 0; j < 70; j++) {
  const i = j % 10;
  data.commissions.push({
    id: `cm_${pad(j)}`,
    type: j === 68 ? 'lead' : 'sale',
    amount: 10_000,
    earnings: i % 2 === 0 ? 2500 : 1500,
    currency: 'usd',
    status: statuses[j % 7],
    invoiceId: `in_${j}`,
    createdAt: new Date(Date.now() - (j + 1) * 86_400_000).toISOString(),
    updatedAt: new Date(Date.now() - j * 86_400_000).toISOString(),
    partner: { id: `pn_${pad(i)}`, name: `Partner ${i}`, email: `dub${i}-${tag}@example.com` },
    customer: {
      id: `cust_${pad(i)}`,
      externalId: `ext_${i}`,
      name: `Customer ${i}`,
      createdAt: new Date().toISOString(),
    },
  });
}
const double = await startDub(data, KEY);
t.teardown(() => double.close());
const body = { source: 'dub', credentials: { api_key: KEY }, options: { api_base_url: double.url } };

t.test('a Dub program comes over', async (t) => {
  const done = await runImport(svc, owner, program.id, body);
  t.equal(done.status, 'completed', done.error ?? '');
  t.ok(
    double.requests.some((r) => r.path === '/partners' && r.query.get('startingAfter') === 'pn_0099'),
    'the second page of partners asked for after the first page’s last id',
  );
  t.same(
    [...new Set(double.requests.filter((r) => r.path === '/commissions').map((r) => r.query.get('status')))],
    ['pending', 'processed', 'paid', 'canceled', 'fraud', 'duplicate'],
    'commissions read one status at a time',
  );

  const groups = (await groupsOf(svc, owner, program.id)).filter((g) => !g.is_default);
  t.same(
    groups.map((g) => [
      g.name,
      g.commission.type,
      g.commission.percent ?? g.commission.amount_cents,
      g.hold_days,
    ]),
    [
      [`Creators ${tag}`, 'percentage', 25, 14],
      [`Agencies ${tag}`, 'flat', 1500, 0],
    ],
  );
  t.match(groups[0]!.commission.recurring, { mode: 'recurring', months: 12 });
  t.match(groups[1]!.commission.recurring, { mode: 'one_time' });
  const [disc] = await sql<{ discount: Obj }[]>`
    select discount from program_groups where program_id = ${program.id} and name = ${`Creators ${tag}`}`;
  t.match(disc!.discount, {
    type: 'percentage',
    percent: 10,
    duration: 'repeating',
    months: 3,
    processor_ids: { stripe: `coup_${tag}` },
  });

  t.match(done.counts.partners, { created: 104, skipped: 1 }, 'the banned partner stays out');
  t.match(done.counts.links, { created: 104 });
  t.match(
    done.counts.codes,
    { created: 103, skipped: 1 },
    'the disabled code stays out (and the banned partner’s)',
  );
  const errors = await errorsOf(svc, owner, program.id, done.id);
  const codes = new Set(errors.map((e) => `${e.kind}:${e.code}`));
  for (const c of [
    'partner:inactive_partner',
    'code:archived_coupon',
    'customer:customer_not_found',
    'commission:customer_not_found',
    'commission:partner_not_found',
    'commission:not_a_sale',
  ])
    t.ok(codes.has(c), c);

  const rows = await sql<{ status: string; n: number }[]>`
    select c.status, count(*)::int as n from commissions c where c.program_id = ${program.id} group by 1 order by 1`;
  const n = Object.fromEntries(rows.map((r) => [r.status, r.n]));
  t.ok(
    ['pending', 'approved', 'paid', 'reversed'].every((s) => (n[s] ?? 0) > 0),
    JSON.stringify(n),
  );
  t.notOk('refunded' in n, 'refunded commissions are not read');
  const [paid] = await sql<{ n: number }[]>`
    select count(*)::int as n from commissions where program_id = ${program.id} and status = 'paid'
      and (paid_at is null or payout_id is not null)`;
  t.equal(paid!.n, 0, 'paid history: paid_at set, in no payout');
  const pps = await sql<{ partner_id: string; id: string }[]>`
    select partner_id, id from partner_programs where program_id = ${program.id}`;
  await assertMoney(
    t,
    sql,
    program.id,
    pps.map((p) => ({ partnerId: Number(p.partner_id), partnerProgramId: Number(p.id) })),
  );
});

t.test('a second run creates nothing', async (t) => {
  const again = await runImport(svc, owner, program.id, body);
  t.equal(again.status, 'completed', again.error ?? '');
  for (const [kind, c] of Object.entries(again.counts)) t.equal(c.created, 0, `no ${kind} created`);
});

t.test('a wrong key fails the import, naming the source', async (t) => {
  const done = await runImport(svc, owner, program.id, { ...body, credentials: { api_key: 'dub_wrong' } });
  t.equal(done.status, 'failed');
  t.match(done.error, /^Dub refused the credentials \(401\)/);
});
