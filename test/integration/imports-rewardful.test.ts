// Importing a Rewardful program (CONTRACT part five; docs/importing.md "Rewardful") from a double of its REST
// API built from its documentation (scripts/lib/seed/source-doubles.ts): campaigns become groups with their terms,
// affiliates partners in them (upserted by email; the placeholder last name "Unknown" dropped), link tokens
// link codes, coupons partner codes with their Stripe ids (an archived one skipped), referrals customers by
// Stripe customer id (a null customer, a non-`cus_` id: customer_not_found), commissions in their states
// through the lifecycle (ledger equals balances; paid history in no payout run), a sale tracked here already
// skipped, another currency skipped, the rollups equal to the raw events. Then: a second run creates nothing
// and takes what changed; a source answering 429 twice is waited out; the rate limit is kept; bad
// credentials fail the import; a cancel stops it. Credentials are never answered and are deleted at the end.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram } from '../helpers/partners.ts';
import { commissionsOf, customerOf, groupsOf, trackSale } from '../helpers/rewards.ts';
import { assertMoney, ledgerCaughtUp } from '../helpers/money.ts';
import { TEST_IMPORT_KEY, errorsOf, finished, postImport, runImport } from '../helpers/imports.ts';
import type { Import } from '../helpers/imports.ts';
import { rewardfulFixture, startRewardful } from '../../scripts/lib/seed/source-doubles.ts';
import type { Obj } from '../../scripts/lib/seed/source-doubles.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';

const sql = testSql(t);
// Every source's limit replaced by 5 requests per 2 s (IMPORT_RATE_LIMIT), which the double enforces too:
// an import of a dozen pages must space them to see no 429 of the double's own.
const svc = await startServices(
  t,
  ['web', 'attribution-worker', 'ledger-worker', 'outbox-relay', 'import-worker'],
  {
    IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
    IMPORT_RATE_LIMIT: '5/2s',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    OUTBOX_POLL_MS: '50',
  },
);
const owner = await signup(svc);
const program = await apiProgram(svc, owner);
const P = `${svc.baseUrl}/api/advertiser/affiliate-programs/${program.id}`;
const own = bearer(owner.session);
const tag = randomBytes(3).toString('hex');
const SECRET = `rw_secret_${tag}`;

// ---- the account, with the quirks its API is known for ----
const data = rewardfulFixture({ affiliates: 12, commissions: 230, tag });
const aff = (i: number) => data.affiliates[i]!;
aff(11).state = 'inactive';
aff(2).last_name = 'Unknown';
aff(10).leads = 0;
// A referral with a null customer and no Stripe id (a lead that never reached Stripe).
data.referrals.push({
  ...data.referrals[1]!,
  id: 'ref-null-customer',
  customer: null,
  stripe_customer_id: null,
});
// A customer id that is not Stripe's.
const odd = data.referrals[3]!;
odd.stripe_customer_id = `gcus_${tag}`;
odd.customer = { ...(odd.customer as Obj), id: `gcus_${tag}` };
data.coupons[2]!.archived = true;
data.coupons[2]!.archived_at = new Date().toISOString();
const commission = (j: number) => data.commissions[j]!;
const saleOf = (j: number) => commission(j).sale as Obj;
commission(5).currency = 'EUR';
(saleOf(5) as Obj).currency = 'EUR';
// The customer of affiliate 0 bought here already, tracked natively: its imported twin is already_tracked.
const trackedAt = Date.now();
commission(0).state = 'due';
(saleOf(0) as Obj).charged_at = new Date(trackedAt).toISOString();
(saleOf(0) as Obj).sale_amount_cents = 4242;

const double = await startRewardful(data, SECRET, { limit: { requests: 5, windowMs: 2000 } });
t.teardown(() => double.close());
const body = (over: Record<string, unknown> = {}) => ({
  source: 'rewardful',
  credentials: { api_secret: SECRET },
  options: { api_base_url: double.url, ...over },
});

/** The 429s the double's own limiter answered (the injected ones carry Retry-After). */
const limiterRefusals = () => double.requests.filter((r) => r.status === 429 && !r.injected).length;

let first: Import;

t.before(async () => {
  // Affiliate 0 is a partner here already (added by hand), and its customer bought here, tracked natively.
  const partner = await addPartner(svc, owner, program.id, {
    email: `aff0-${tag}@example.com`,
    name: 'Aff Zero',
  });
  await customerOf(sql, program.id, partner, `cus_${tag}0`);
  const sale = await trackSale(svc, program.token, { customer_key: `cus_${tag}0`, amount_cents: 4242 });
  if (sale.status !== 200) throw new Error(`sale: ${sale.status} ${JSON.stringify(sale.body)}`);
});

t.test('a Rewardful program comes over', async (t) => {
  const started = await postImport(svc, owner, program.id, body());
  t.equal(started.status, 202, started.text);
  t.notOk(started.text.includes(SECRET), 'the answer does not carry the secret');
  const [stored] = await sql<{ credentials: Buffer | null }[]>`
    select credentials from imports where id = ${(started.body.data as Import).id}`;
  t.ok(
    stored!.credentials === null || !stored!.credentials.toString('latin1').includes(SECRET),
    'stored sealed',
  );
  first = await finished(svc, owner, program.id, (started.body.data as Import).id);
  t.equal(first.status, 'completed', first.error ?? '');
  t.equal(first.step, 'done');

  const groups = (await groupsOf(svc, owner, program.id)).filter((g) => !g.is_default);
  t.same(
    groups.map((g) => [
      g.name,
      g.commission.type,
      g.commission.percent ?? g.commission.amount_cents,
      g.hold_days,
    ]),
    [
      [`Friends ${tag}`, 'percentage', 30, 30],
      [`Agencies ${tag}`, 'flat', 2500, 0],
    ],
  );
  t.match(groups[0]!.commission.recurring, { mode: 'recurring', months: 12 }, '12 months of recurring');
  t.match(groups[1]!.commission.recurring, { mode: 'one_time' }, 'max_commissions 1: one-time');
  const discounts = await sql<{ name: string; discount: unknown }[]>`
    select name, discount from program_groups where program_id = ${program.id} and not is_default order by id`;
  t.same(
    discounts.map((d) => d.discount),
    [null, null],
    'Rewardful names a coupon but not its terms: no discount is made up (a null coupon id: none either)',
  );

  const partners = await sql<{ email: string; name: string; group: string }[]>`
    select pa.email, pa.name, g.name as group from partner_programs pp join partners pa on pa.id = pp.partner_id
    join program_groups g on g.id = pp.group_id where pp.program_id = ${program.id} order by pp.id`;
  t.equal(partners.length, 10, 'the inactive affiliate and the one without leads stay out');
  const byEmail = new Map(partners.map((p) => [p.email, p]));
  t.same(
    byEmail.get(`aff2-${tag}@example.com`),
    { email: `aff2-${tag}@example.com`, name: 'Aff2', group: `Friends ${tag}` },
    '"Unknown" is no last name',
  );
  t.same(byEmail.get(`aff1-${tag}@example.com`), {
    email: `aff1-${tag}@example.com`,
    name: 'Aff1 Last1',
    group: `Agencies ${tag}`,
  });
  t.same(
    byEmail.get(`aff0-${tag}@example.com`),
    { email: `aff0-${tag}@example.com`, name: 'Aff Zero', group: 'Default' },
    'a partner of the program already is taken as it is (upserted by email)',
  );
  t.match(first.counts.partners, { created: 9, updated: 1, skipped: 2 });
  const links = await sql`select 1 from referral_links where program_id = ${program.id}`;
  t.equal(links.length, 10, 'one link per partner, its token kept');
  const codes = await sql<{ code: string; processor_ids: Record<string, string> }[]>`
    select code, processor_ids from partner_codes where program_id = ${program.id} order by id`;
  t.equal(codes.length, 9, 'the archived coupon (and those of partners left out) are not imported');
  t.same(codes[0]!.processor_ids, { stripe: `promo_${tag}_0` });

  const errors = await errorsOf(svc, owner, program.id, first.id);
  const has = (kind: string, code: string) => errors.filter((e) => e.kind === kind && e.code === code).length;
  t.equal(has('partner', 'inactive_partner'), 2);
  t.same(
    errors.filter((e) => e.code === 'discount_needs_terms').map((e) => e.external_id),
    [String(data.campaigns[0]!.id)],
    'the campaign with a coupon is told to set its terms; the one with a null coupon id is not',
  );
  t.equal(has('code', 'archived_coupon'), 1);
  t.equal(has('customer', 'customer_not_found'), 2, 'the null customer and the gcus_ id');
  t.ok(has('commission', 'customer_not_found') > 0, "the gcus_ customer's commissions");
  t.equal(has('commission', 'currency_mismatch'), 1);
  t.equal(has('commission', 'already_tracked'), 1);
  t.ok(has('commission', 'partner_not_found') > 0, "the inactive affiliates' commissions");
  t.match(first.counts.commissions, { skipped: 1 }, 'already_tracked is a skip');

  const listed = [...(await commissionsOf(svc, owner, program.id)).values()];
  const imported = await sql<{ id: string; external_id: string }[]>`
    select local_id as id, external_id from import_refs
    where program_id = ${program.id} and kind = 'commission' and dry_run_of is null`;
  t.equal(listed.filter((c) => c.rule?.source === 'imported').length, imported.length);
  t.equal(first.counts.commissions!.created, imported.length);
  const stateOf = new Map(data.commissions.map((c) => [String(c.id), String(c.state)]));
  const byId = new Map(listed.map((c) => [c.id, c]));
  const expect: Record<string, string> = {
    pending: 'pending',
    due: 'approved',
    paid: 'paid',
    voided: 'reversed',
  };
  for (const r of imported) {
    const c = byId.get(Number(r.id))!;
    if (c.status !== expect[stateOf.get(r.external_id)!]) t.fail(`commission ${r.external_id}: ${c.status}`);
  }
  const paid = await sql<{ paid_at: Date | null; payout_id: string | null }[]>`
    select c.paid_at, c.payout_id from commissions c where c.program_id = ${program.id} and c.status = 'paid'`;
  t.ok(
    paid.length > 0 && paid.every((p) => p.paid_at !== null && p.payout_id === null),
    'paid history: paid_at, in no payout',
  );

  const pps = await sql<{ partner_id: string; id: string }[]>`
    select partner_id, id from partner_programs where program_id = ${program.id}`;
  await waitFor('the ledger of the native sale', () =>
    ledgerCaughtUp(
      sql,
      pps.map((p) => Number(p.id)),
    ),
  );
  await assertMoney(
    t,
    sql,
    program.id,
    pps.map((p) => ({ partnerId: Number(p.partner_id), partnerProgramId: Number(p.id) })),
  );

  const run = await send('POST', `${P}/payouts`, {}, own);
  t.equal(run.status, 201, run.text);
  const inRun = new Set((run.body.data as { commission_ids: number[] }[]).flatMap((p) => p.commission_ids));
  const paidIds = await sql<
    { id: string }[]
  >`select id from commissions where program_id = ${program.id} and status = 'paid'`;
  t.notOk(
    paidIds.some((p) => inRun.has(Number(p.id))),
    'a payout run takes no paid history',
  );
  t.ok(inRun.size > 0, 'it takes the approved (due) ones');

  t.same(
    (await checkProgram(sql, program.id, { first: null, last: null })).map(describe),
    [],
    'rollups = raw',
  );
  const [gone] = await sql`select credentials from imports where id = ${first.id}`;
  t.equal(gone!.credentials, null, 'the credentials are deleted when the import ends');
  const read = await getJson(`${P}/imports/${first.id}`, own);
  t.notOk(read.text.includes(SECRET), 'never answered back');
});

t.test('twice is once: a second run creates nothing and takes what changed', async (t) => {
  const pending = data.commissions.find(
    (c, j) => j > 10 && c.state === 'pending' && (c.sale as Obj).currency === 'USD',
  )!;
  pending.state = 'paid';
  pending.paid_at = new Date().toISOString();
  const before = await sql`select count(*)::int as n from commissions where program_id = ${program.id}`;
  const again = await runImport(svc, owner, program.id, body());
  t.equal(again.status, 'completed', again.error ?? '');
  for (const [kind, c] of Object.entries(again.counts)) t.equal(c.created, 0, `no ${kind} created`);
  t.equal(again.counts.commissions!.updated, 1, 'the commission paid at the source since');
  t.same(await sql`select count(*)::int as n from commissions where program_id = ${program.id}`, before);
  const [ref] = await sql<{ local_id: string }[]>`
    select local_id from import_refs where program_id = ${program.id} and kind = 'commission' and external_id = ${String(pending.id)}`;
  const [c] = await sql<{ status: string }[]>`select status from commissions where id = ${ref!.local_id}`;
  t.equal(c!.status, 'paid');
  const pps = await sql<{ partner_id: string; id: string }[]>`
    select partner_id, id from partner_programs where program_id = ${program.id}`;
  await waitFor('the ledger of the native sale', () =>
    ledgerCaughtUp(
      sql,
      pps.map((p) => Number(p.id)),
    ),
  );
  await assertMoney(
    t,
    sql,
    program.id,
    pps.map((p) => ({ partnerId: Number(p.partner_id), partnerProgramId: Number(p.id) })),
  );
  t.equal(limiterRefusals(), 0, 'the rate limit was kept: the double never had to refuse a request');
});

t.test('a source that answers 429 twice is waited out', async (t) => {
  const from = double.requests.length;
  double.fail(2, { 'retry-after': '1' });
  const other = await apiProgram(svc, owner);
  const done = await runImport(svc, owner, other.id, body());
  t.equal(done.status, 'completed', done.error ?? '');
  const seen = double.requests.slice(from);
  t.same(
    seen.slice(0, 3).map((r) => [r.path, r.status]),
    [
      ['/v1/campaigns', 429],
      ['/v1/campaigns', 429],
      ['/v1/campaigns', 200],
    ],
  );
  t.ok(
    seen[1]!.at - seen[0]!.at >= 1000 && seen[2]!.at - seen[1]!.at >= 1000,
    'each retry after its Retry-After',
  );
  t.match(
    done.counts.partners,
    { created: 10 },
    'the same people (found by email in the workspace), partners of this program now',
  );
});

t.test('bad credentials fail the import and delete them', async (t) => {
  const other = await apiProgram(svc, owner);
  const done = await runImport(svc, owner, other.id, { ...body(), credentials: { api_secret: 'wrong' } });
  t.equal(done.status, 'failed');
  t.match(done.error, /Rewardful refused the credentials \(401\)/);
  const [row] = await sql`select credentials from imports where id = ${done.id}`;
  t.equal(row!.credentials, null);
});

t.test('a cancel stops the import', async (t) => {
  const other = await apiProgram(svc, owner);
  const held = double.hold((path) => path === '/v1/affiliates');
  const r = await postImport(svc, owner, other.id, body());
  const id = (r.body.data as Import).id;
  await waitFor('the affiliates page to be asked for', async () => held.waiting() > 0);
  const cancel = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${other.id}/imports/${id}/cancel`,
    undefined,
    own,
  );
  t.equal(cancel.status, 200, cancel.text);
  t.equal((cancel.body.data as Import).status, 'canceled');
  const from = double.requests.length;
  held.release();
  const done = await finished(svc, owner, other.id, id);
  t.equal(done.status, 'canceled');
  const again = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${other.id}/imports/${id}/cancel`,
    undefined,
    own,
  );
  t.same([again.status, again.body], [409, { error: 'Import already canceled' }]);
  const [row] = await sql<
    { credentials: Buffer | null; seq: number }[]
  >`select credentials, seq from imports where id = ${id}`;
  t.equal(row!.credentials, null);
  t.equal(row!.seq, 1, 'the page read when it was canceled was not applied');
  t.equal(double.requests.length - from, 0, 'nothing was asked of the source after it');
});
