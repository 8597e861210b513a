// Lead, sale, refund and the CLI status on the real stack: every error string, every transition, the
// answers the workers record, and the concurrency cases (10 identical sales, 8 refunds of one sale, a lead
// right after its click).
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import type { LinkFixture, ProgramFixture } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
  'notification-worker',
  'outbox-relay',
]);
const url = (p: string) => `${svc.baseUrl}${p}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const program = await createProgram(sql, { allowedOrigins: ['https://shop.example'] });
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 30 })} where id = ${program.id}`;
const link = await createLink(sql, program.id);
const other = await createProgram(sql);
const otherLink = await createLink(sql, other.id);

async function click(l: LinkFixture = link): Promise<string> {
  const r = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
  });
  if (r.status !== 200) throw new Error(`click failed: ${JSON.stringify(r.body)}`);
  return r.body.click_id as string;
}
const lead = (body: unknown, headers?: Record<string, string>) =>
  postJson(url('/api/v1/track/lead'), body, headers);
const sale = (body: unknown, p: ProgramFixture = program, headers: Record<string, string> = {}) =>
  postJson(url('/api/v1/track/sale'), body, { ...bearer(p.token), ...headers });
const refund = (body: unknown, p: ProgramFixture = program) =>
  postJson(url('/api/v1/track/refund'), body, bearer(p.token));
let txn = 0;
const nextTxn = () => `txn-${Date.now()}-${++txn}`;

t.test('lead: a lead right after its click succeeds, 50 times in a row', async (t) => {
  let ok = 0;
  for (let i = 0; i < 50; i++) {
    const clickId = await click();
    const r = await lead({ click_id: clickId, customer_key: `user-${clickId}` });
    if (r.status === 200 && r.body.success === true) ok++;
    else t.fail(`lead ${i}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  t.equal(ok, 50);
});

t.test('lead: transitions and error strings', async (t) => {
  t.same((await lead({})).body, { error: 'click_id or customer_key is required' });
  t.same((await lead({ click_id: 'cust_1_1' })).body, {
    error: 'Customer not found. Provide a valid click_id or customer_key.',
  });
  t.same((await lead({ click_id: 'nonsense' })).body, {
    error: 'Customer not found. Provide a valid click_id or customer_key.',
  });
  t.same(
    (await lead({ customer_key: 'k' })).body,
    {
      error: 'Customer not found. Provide a valid click_id or customer_key.',
    },
    'browser mode without click or program',
  );

  const clickId = await click();
  const bad = await lead({ click_id: clickId }, bearer('aff_wrong'));
  t.equal(bad.status, 401, 'an Authorization header with an unknown token');
  const wrongProgram = await lead({ click_id: clickId }, bearer(other.token));
  t.same(wrongProgram.body, { error: 'Customer does not belong to this program' });

  const first = await lead(
    { click_id: clickId, customer_key: 'alice', email: 'a@example.com' },
    bearer(program.token),
  );
  t.same(first.body, { success: true, message: 'Lead recorded' });
  const [c] =
    await sql`select customer_status, customer_key, email, signup_date from customers where click_id = ${clickId}`;
  t.match(c, { customer_status: 'lead', customer_key: 'alice', email: 'a@example.com' });
  t.ok(c!.signup_date);
  const again = await lead({ click_id: clickId });
  t.equal(again.status, 400);
  t.same(again.body, { error: 'Customer status cannot be updated to lead. Current status: lead' });
  const [ev] =
    await sql`select count(*)::int as n from lead_events where click_id = ${clickId} and not is_test`;
  t.equal(ev!.n, 1, 'one lead event');
});

t.test('lead without click: an unattributed customer in the token program (rule 6)', async (t) => {
  const r = await lead({ customer_key: 'no-click-user' }, bearer(program.token));
  t.equal(r.status, 200);
  const [c] =
    await sql`select customer_status, partner_id from customers where program_id = ${program.id} and customer_key = 'no-click-user'`;
  t.same(c, { customer_status: 'lead', partner_id: null });
  const browser = await lead({ customer_key: 'browser-user', additional_data: { program_id: program.id } });
  t.equal(browser.status, 200, 'browser mode names the program with additional_data.program_id');
  const s = await sale({ transaction_id: nextTxn(), amount_cents: 1000, customer_key: 'no-click-user' });
  t.same(s.body, { error: 'No affiliate attribution found for this customer in this program' });
});

t.test('lead test mode: no real token, is_test event, data', async (t) => {
  const r = await lead(
    { customer_key: 'x', additional_data: { test_mode: true, program_id: program.id } },
    bearer('aff_not_real'),
  );
  t.equal(r.status, 200);
  t.match(r.body, {
    success: true,
    message: String,
    data: { programId: program.id, test_mode: true, eventId: String },
  });
  const [e] =
    await sql`select is_test, customer_id from lead_events where id = ${(r.body.data as { eventId: string }).eventId}`;
  t.same(e, { is_test: true, customer_id: null });
});

t.test('sale and refund: 401 for every missing, malformed or wrong credential', async (t) => {
  for (const headers of [
    {} as Record<string, string>,
    { authorization: program.token },
    { authorization: 'Basic abc' },
    { authorization: 'Bearer ' },
    { authorization: 'Bearer    ' },
    { authorization: 'Bearer aff_unknown' },
    { authorization: 'Bearer affk_somekey' },
    { authorization: 'Bearer sess_somesession' },
  ]) {
    const s = await postJson(url('/api/v1/track/sale'), { transaction_id: 'x', amount_cents: 1 }, headers);
    t.equal(s.status, 401, `sale ${JSON.stringify(headers)}`);
    t.type(s.body.error, 'string');
    const r = await postJson(url('/api/v1/track/refund'), { transaction_id: 'x' }, headers);
    t.equal(r.status, 401, `refund ${JSON.stringify(headers)}`);
    const st = await fetch(url('/api/v1/cli/status'), { headers });
    t.equal(st.status, 401, `cli status ${JSON.stringify(headers)}`);
  }
});

t.test('sale: 400 strings', async (t) => {
  const clickId = await click();
  const cases: [Record<string, unknown>, string][] = [
    [{ amount_cents: 100, click_id: clickId }, 'transaction_id is required and must be a string'],
    [
      { transaction_id: 12, amount_cents: 100, click_id: clickId },
      'transaction_id is required and must be a string',
    ],
    [
      { transaction_id: '', amount_cents: 100, click_id: clickId },
      'transaction_id is required and must be a string',
    ],
    [{ transaction_id: 't', click_id: clickId }, 'amount_cents is required and must be a positive integer'],
    [
      { transaction_id: 't', amount_cents: 0, click_id: clickId },
      'amount_cents is required and must be a positive integer',
    ],
    [
      { transaction_id: 't', amount_cents: -5, click_id: clickId },
      'amount_cents is required and must be a positive integer',
    ],
    [
      { transaction_id: 't', amount_cents: 1.5, click_id: clickId },
      'amount_cents is required and must be a positive integer',
    ],
    [
      { transaction_id: 't', amount_cents: '100', click_id: clickId },
      'amount_cents is required and must be a positive integer',
    ],
    [
      { transaction_id: 't', amount_cents: 1_000_000_000_001, click_id: clickId },
      'amount_cents must be at most 1000000000000',
    ],
    [{ transaction_id: 't', amount_cents: 100 }, 'Customer not found. Provide customer_key or click_id.'],
    [
      { transaction_id: 't', amount_cents: 100, click_id: 'cust_1_5' },
      'Customer not found. Provide customer_key or click_id.',
    ],
    [
      { transaction_id: 't', amount_cents: 100, click_id: clickId, currency: 'XYZ' },
      'currency must be an ISO 4217 code',
    ],
    [
      { transaction_id: 't', amount_cents: 100, click_id: clickId, sale_type: 'gift' },
      "sale_type must be 'payment' or 'subscription'",
    ],
    [
      { transaction_id: 't', amount_cents: 100, click_id: clickId, subscription_interval: 'weekly' },
      "subscription_interval must be 'monthly', 'quarterly' or 'annual'",
    ],
    [
      { transaction_id: 't', amount_cents: 100, click_id: clickId, is_recurring: 'yes' },
      'is_recurring must be a boolean',
    ],
  ];
  for (const [body, error] of cases) {
    const r = await sale(body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.same(r.body, { error }, JSON.stringify(body));
  }
  const [n] = await sql`select count(*)::int as n from sales where transaction_id = 't'`;
  t.equal(n!.n, 0, 'no rejected sale consumed its transaction_id');
  const cross = await click(otherLink);
  const r = await sale({ transaction_id: nextTxn(), amount_cents: 100, click_id: cross });
  t.same(r.body, { error: 'No affiliate attribution found for this customer in this program' });
});

t.test(
  'strings Postgres cannot hold: NUL removed, an unpaired surrogate refused (never a 500)',
  async (t) => {
    const clickId = await click();
    const base = nextTxn();
    // NUL is removed from every string, identifiers and line_items (jsonb) included.
    const nul = await sale({
      transaction_id: `${base}\u0000-nul`,
      amount_cents: 1000,
      click_id: clickId,
      line_items: [{ 'na\u0000me': 'x\u0000y' }],
    });
    t.equal(nul.status, 200, JSON.stringify(nul.body));
    const [stored] =
      await sql`select transaction_id, line_items from sales where id = ${nul.body.sale_id as number}`;
    t.same(stored, { transaction_id: `${base}-nul`, line_items: [{ name: 'xy' }] });
    // A well-formed pair (an emoji) is an ordinary character: the identifier round-trips and matches again.
    const emoji = { transaction_id: `${base}-😀`, amount_cents: 1000, click_id: clickId };
    t.equal((await sale(emoji)).status, 200);
    t.equal((await sale(emoji)).status, 409, 'the same emoji transaction_id is a duplicate');
    // An unpaired surrogate would be stored as U+FFFD (text) or refused (jsonb): 400 before anything is queued.
    const lone = '\ud800';
    const refused = [
      () => sale({ transaction_id: `${base}${lone}`, amount_cents: 1000, click_id: clickId }),
      () => sale({ transaction_id: nextTxn(), amount_cents: 1000, click_id: clickId, line_items: [lone] }),
      () => refund({ transaction_id: `${base}-nul`, refund_reason: `why${lone}` }),
      () => lead({ click_id: clickId, customer_key: `k${lone}` }),
      () =>
        postJson(url('/api/v1/track/click'), {
          affiliate_url: `https://x.example/?aff=${link.shortLink}`,
          page_title: lone,
        }),
    ];
    for (const [i, send] of refused.entries()) {
      const r = await send();
      t.equal(r.status, 400, `case ${i}`);
      t.same(
        r.body,
        { error: 'Invalid JSON body: a string contains an unpaired UTF-16 surrogate' },
        `case ${i}`,
      );
    }
    // The partition is not stuck behind anything: the next sale is answered.
    t.equal((await sale({ transaction_id: nextTxn(), amount_cents: 1000, click_id: clickId })).status, 200);
  },
);

t.test('deep bodies, long Idempotency-Keys, named programs, truncation: 4xx or stored as sent', async (t) => {
  const clickId = await click();
  const TOO_DEEP = { error: 'Invalid JSON body: nested deeper than 64 levels' };
  const nest = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  };
  // 3,000 levels in 18 KB used to overflow the stack of the ingress and of a freshly started worker.
  const deep = await sale({
    transaction_id: nextTxn(),
    amount_cents: 100,
    click_id: clickId,
    line_items: nest(3000),
  });
  t.same([deep.status, deep.body], [400, TOO_DEEP]);
  const deepNul = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://x.example/?aff=${link.shortLink}`,
    page_title: 'a\u0000',
    extra: nest(3000),
  });
  t.same([deepNul.status, deepNul.body], [400, TOO_DEEP]);
  const ok = await sale({
    transaction_id: nextTxn(),
    amount_cents: 100,
    click_id: clickId,
    line_items: nest(60),
  });
  t.equal(ok.status, 200, 'sixty levels are fine');

  // The longest Idempotency-Key (200 characters) makes the longest request_id the workers accept.
  const key = { 'idempotency-key': 'k'.repeat(200) };
  const body = { transaction_id: nextTxn(), amount_cents: 100, click_id: clickId };
  const first = await sale(body, program, key);
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.same((await sale(body, program, key)).body, first.body, 'a retry gets the recorded answer');

  // A program named by additional_data (no token) must exist and not be deleted.
  const gone = await createProgram(sql);
  await sql`update programs set deleted_at = now() where id = ${gone.id}`;
  const named = { error: 'additional_data.program_id does not name a program' };
  for (const programId of [9_007_199_254_740_991, gone.id]) {
    for (const testMode of [false, true]) {
      const r = await waitFor('the 400', async () => {
        const res = await lead({
          customer_key: `c-${nextTxn()}`,
          additional_data: { program_id: programId, test_mode: testMode },
        });
        return res.status === 400 ? res : null;
      });
      t.same(r.body, named, `program ${programId}, test mode ${testMode}`);
    }
  }

  // Truncation keeps surrogate pairs whole; a "__proto__" key is stored as an ordinary key.
  const c = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://x.example/?aff=${link.shortLink}`,
    page_title: `${'a'.repeat(511)}😀`,
  });
  const row = await waitFor('the click row', async () => {
    const [r] = await sql`select page_title from click_events where click_id = ${c.body.click_id as string}`;
    return r;
  });
  t.equal(row.page_title, 'a'.repeat(511), 'the pair that did not fit is dropped whole');
  const proto = await sale({
    transaction_id: nextTxn(),
    amount_cents: 100,
    click_id: clickId,
    line_items: JSON.parse('{"__proto__":{"sku":"A"},"n":"x\\u0000y"}') as unknown,
  });
  const [stored] = await sql`select line_items from sales where id = ${proto.body.sale_id as number}`;
  t.same(stored!.line_items, JSON.parse('{"__proto__":{"sku":"A"},"n":"xy"}'));
});

t.test(
  'sale: attributed → sale_id, commission_id; customer converts; duplicates are 409 everywhere',
  async (t) => {
    // A sale is in its program's currency (docs/commands.md): this test's sale is in EUR, so is the program.
    await sql`update programs set currency = 'EUR' where id = ${program.id}`;
    t.teardown(() => sql`update programs set currency = 'USD' where id = ${program.id}`);
    const clickId = await click();
    await lead({ click_id: clickId, customer_key: 'buyer-1' });
    const transactionId = nextTxn();
    const r = await sale({
      transaction_id: transactionId,
      amount_cents: 12_345,
      customer_key: 'buyer-1',
      currency: 'eur',
      sale_type: 'subscription',
      subscription_interval: 'monthly',
      subscription_id: 'sub_1',
      line_items: { items: [{ sku: 'pro', qty: 1 }] },
    });
    t.equal(r.status, 200);
    t.match(r.body, { success: true, sale_id: Number, commission_id: Number, message: String });
    const [s] =
      await sql`select currency, sale_type, line_items, payment_status, amount_cents::int from sales where id = ${r.body.sale_id as number}`;
    t.same(s, {
      currency: 'EUR',
      sale_type: 'subscription',
      line_items: { items: [{ sku: 'pro', qty: 1 }] },
      payment_status: 'paid',
      amount_cents: 12345,
    });
    const [c] =
      await sql`select status, amount_cents::int from commissions where id = ${r.body.commission_id as number}`;
    t.same(c, { status: 'pending', amount_cents: 3704 }, '30% of 12,345 = 3,703.5 → 3,704 (half up)');
    const [cu] =
      await sql`select customer_status, first_purchase_date from customers where click_id = ${clickId}`;
    t.equal(cu!.customer_status, 'conversion');
    t.ok(cu!.first_purchase_date);

    const dup = await sale({ transaction_id: transactionId, amount_cents: 12_345, customer_key: 'buyer-1' });
    t.equal(dup.status, 409);
    t.same(dup.body, {
      error: 'Duplicate transaction_id. This sale has already been recorded.',
      message: 'Duplicate transaction_id. This sale has already been recorded.',
      statusCode: 409,
    });
    const crossClick = await click(otherLink);
    const dupOther = await sale(
      { transaction_id: transactionId, amount_cents: 1, click_id: crossClick },
      other,
    );
    t.equal(dupOther.status, 409, 'duplicate detection is global across programs');
    const second = await sale({ transaction_id: nextTxn(), amount_cents: 1000, customer_key: 'buyer-1' });
    t.equal(second.status, 200, 'a second sale of a converted customer (recurring, lifetime) earns again');
    t.type(second.body.commission_id, 'number');
  },
);

t.test('sale: 10 simultaneous identical sales → one 200 and nine 409', async (t) => {
  const clickId = await click();
  const body = { transaction_id: nextTxn(), amount_cents: 5000, click_id: clickId };
  const results = await Promise.all(Array.from({ length: 10 }, () => sale(body)));
  t.same(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409, 409, 409]);
  const [n] = await sql`select count(*)::int as n from sales where transaction_id = ${body.transaction_id}`;
  t.equal(n!.n, 1);
  const [c] =
    await sql`select count(*)::int as n from commissions c join sales s on s.id = c.sale_id where s.transaction_id = ${body.transaction_id}`;
  t.equal(c!.n, 1, 'one commission');
});

t.test('sale: a click-only customer outside the cookie window → sale recorded, no commission', async (t) => {
  const clickId = await click();
  await waitFor(
    'customer',
    async () => (await sql`select 1 from customers where click_id = ${clickId}`).length === 1,
  );
  await sql`update customers set last_click_at = now() - interval '61 days' where click_id = ${clickId}`;
  const r = await sale({ transaction_id: nextTxn(), amount_cents: 1000, click_id: clickId });
  t.same(r.body, {
    success: true,
    sale_id: r.body.sale_id,
    commission_id: null,
    message: 'Attribution window expired',
  });
  t.type(r.body.sale_id, 'number');
});

t.test('sale: one_time policy pays the first sale only; product rules apply', async (t) => {
  const p = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({
    type: 'percentage',
    percent: 10,
    recurring: { mode: 'one_time' },
    product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 500 }],
  })} where id = ${p.id}`;
  const l = await createLink(sql, p.id);
  const clickId = await click(l);
  const first = await sale(
    { transaction_id: nextTxn(), amount_cents: 10_000, click_id: clickId, product_id: 'pro' },
    p,
  );
  const [c] =
    await sql`select amount_cents::int from commissions where id = ${first.body.commission_id as number}`;
  t.equal(c!.amount_cents, 500, 'the product rule overrides 10%');
  const second = await sale({ transaction_id: nextTxn(), amount_cents: 10_000, click_id: clickId }, p);
  t.equal(second.body.commission_id, null);
  t.match(second.body.message, /One-time/);
});

t.test('sale test mode: test_txn_<timestamp>, is_test, nothing attributed', async (t) => {
  const r = await postJson(url('/api/v1/track/sale'), {
    additional_data: { test_mode: true, program_id: program.id },
  });
  t.equal(r.status, 200);
  t.match(r.body, { success: true, message: String, data: { programId: program.id, test_mode: true } });
  const [s] =
    await sql`select transaction_id, is_test, customer_id from sales where id = ${(r.body.data as { eventId: string }).eventId}`;
  t.match(s!.transaction_id, /^test_txn_\d+/);
  t.same([s!.is_test, s!.customer_id], [true, null]);
});

t.test('refund: errors, full, partial, skipped, no_commission', async (t) => {
  t.same((await refund({})).body, { error: 'transaction_id is required' });
  for (const bad of [-1, 1.5, '10']) {
    const r = await refund({ transaction_id: 'x', refund_amount_cents: bad });
    t.same(r.body, { error: 'refund_amount_cents must be a positive integer' }, `refund_amount_cents ${bad}`);
  }
  const unknown = await refund({ transaction_id: 'never-sold' });
  t.equal(unknown.status, 404);
  t.same(unknown.body, { error: 'Sale not found for transaction_id' });

  const clickId = await click();
  const txFull = nextTxn();
  const s = await sale({ transaction_id: txFull, amount_cents: 10_000, click_id: clickId });
  const otherProgramRefund = await refund({ transaction_id: txFull }, other);
  t.equal(otherProgramRefund.status, 404, 'the lookup is limited to the token program');
  const full = await refund({ transaction_id: txFull, refund_reason: 'customer asked' });
  t.same(full.body, {
    success: true,
    status: 'reversed',
    deductionAmount: 30,
    commission_id: s.body.commission_id,
  });
  const [c] =
    await sql`select status, refund_reason, deducted_cents::int from commissions where id = ${s.body.commission_id as number}`;
  t.same(c, { status: 'reversed', refund_reason: 'customer asked', deducted_cents: 3000 });
  const again = await refund({ transaction_id: txFull });
  t.same(again.body, {
    success: true,
    status: 'skipped',
    reason: 'Commission already reversed',
    commission_id: s.body.commission_id,
  });

  const txPartial = nextTxn();
  const s2 = await sale({ transaction_id: txPartial, amount_cents: 10_000, click_id: await click() });
  const partial = await refund({ transaction_id: txPartial, refund_amount_cents: 2_500 });
  t.same(partial.body, {
    success: true,
    status: 'refunded',
    deductionAmount: 7.5,
    commission_id: s2.body.commission_id,
  });
  const zero = await refund({ transaction_id: txPartial, refund_amount_cents: 0 });
  t.equal(zero.body.status, 'skipped', '0 means full, and the commission is already terminal');

  const windowClick = await click();
  await waitFor(
    'customer',
    async () => (await sql`select 1 from customers where click_id = ${windowClick}`).length === 1,
  );
  await sql`update customers set last_click_at = now() - interval '90 days' where click_id = ${windowClick}`;
  const txNone = nextTxn();
  await sale({ transaction_id: txNone, amount_cents: 1000, click_id: windowClick });
  const none = await refund({ transaction_id: txNone });
  t.match(none.body, { success: true, status: 'no_commission', message: String });
});

t.test('refund: 8 simultaneous refunds of one sale → one applied, seven skipped', async (t) => {
  const transactionId = nextTxn();
  await sale({ transaction_id: transactionId, amount_cents: 20_000, click_id: await click() });
  const results = await Promise.all(
    Array.from({ length: 8 }, () => refund({ transaction_id: transactionId })),
  );
  const statuses = results.map((r) => r.body.status as string).sort();
  t.same(statuses, ['reversed', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
});

t.test(
  'balances: the ledger applies commissions and deductions once; balances equal ledger sums',
  async (t) => {
    const p = await createProgram(sql);
    await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 50 })} where id = ${p.id}`;
    const l = await createLink(sql, p.id);
    const tx1 = nextTxn();
    const tx2 = nextTxn();
    await sale({ transaction_id: tx1, amount_cents: 1000, click_id: await click(l) }, p);
    await sale({ transaction_id: tx2, amount_cents: 3000, click_id: await click(l) }, p);
    await refund({ transaction_id: tx2, refund_amount_cents: 1000, refund_reason: 'partial' }, p);
    const [bal] = await waitFor('ledger applied', async () => {
      const rows =
        await sql`select balance_cents::int from partner_programs where id = ${l.partnerProgramId}`;
      return rows[0]!.balance_cents === 500 + 1500 - 500 ? rows : null;
    });
    t.equal(bal!.balance_cents, 1500);
    const [sums] = await sql`
    select coalesce(sum(partner_cents), 0)::int as partner, coalesce(sum(program_cents), 0)::int as program
    from ledger_entries where partner_program_id = ${l.partnerProgramId}`;
    const [partner] = await sql`select balance_cents::int from partners where id = ${l.partnerId}`;
    t.equal(sums!.program, 1500);
    t.equal(partner!.balance_cents, sums!.partner);
    const notes = await waitFor('refund notification', async () => {
      const r =
        await sql`select kind, body from notifications where partner_id = ${l.partnerId} and recipient_type = 'partner'`;
      return r.length > 0 ? r : null;
    });
    t.equal(notes.length, 1);
    t.match(notes[0]!.body, /Reason: partial/);
  },
);

t.test('CLI status: the token program', async (t) => {
  const r = await fetch(url('/api/v1/cli/status'), { headers: bearer(program.token) });
  t.equal(r.status, 200);
  const body = (await r.json()) as Record<string, unknown>;
  t.match(body, {
    success: true,
    program: { id: program.id, slug: program.slug, status: 'live', name: String },
    api_token_masked: /^aff_.{4}….{4}$/,
    server_time: String,
  });
  t.notMatch(JSON.stringify(body), program.token, 'the full token never appears');
});

t.test('aliases: /api/tracking/{lead,sale,refund}', async (t) => {
  t.same((await postJson(url('/api/tracking/lead'), {})).body, {
    error: 'click_id or customer_key is required',
  });
  t.equal((await postJson(url('/api/tracking/sale'), {}, bearer(program.token))).status, 400);
  t.same((await postJson(url('/api/tracking/refund'), {}, bearer(program.token))).body, {
    error: 'transaction_id is required',
  });
});
