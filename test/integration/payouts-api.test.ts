// Holding, reviewing and paying out through the real API and pipeline (CONTRACT part two): hold_days and
// min_payout_cents on programs, payable_at and the approval sweep, the self_referral hold with approve and
// reject, payouts created (after a preview), listed, exported, marked paid in one transaction with the
// partner's notification and mail, canceled, clawbacks recovered from the next payouts; bad input and other
// workspaces' payouts answered 4xx; and after each step, paid + balance = earned - deductions.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { Test } from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';
import { assertMoney, ledgerCaughtUp } from '../helpers/money.ts';
import { deliverNotifications } from '../helpers/notifications.ts';

const sql = testSql(t);
const svc = await startServices(
  t,
  ['web', 'click-worker', 'attribution-worker', 'reversal-worker', 'ledger-worker'],
  { APPROVAL_SWEEP_MS: '200' },
);
const url = (p: string) => `${svc.baseUrl}${p}`;
const programsUrl = url('/api/advertiser/affiliate-programs');
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
// Webhook events are written only for a workspace with an enabled endpoint (docs/webhooks.md): this one has.
await sql`insert into webhook_endpoints (workspace_id, url, secret)
  values (${owner.workspaceId}, 'https://hooks.example/payouts', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;

interface Program {
  id: number;
  token: string;
  hold_days: number;
  min_payout_cents: number;
}
async function newProgram(body: Record<string, unknown> = {}): Promise<Program> {
  const r = await send('POST', programsUrl, { name: `P ${uniq()}`, hold_days: 0, ...body }, auth);
  if (r.status !== 201) throw new Error(`program create failed: ${r.text}`);
  const d = r.body.data as Program & { api_token: string };
  return { ...d, token: d.api_token };
}
interface Partner {
  partnerId: number;
  partnerProgramId: number;
  email: string;
  shortLink: string;
}
async function newPartner(programId: number, email = `p-${uniq()}@example.com`): Promise<Partner> {
  const r = await send(
    'POST',
    `${programsUrl}/${programId}/partners`,
    { name: `Partner ${uniq()}`, email },
    auth,
  );
  if (r.status !== 201) throw new Error(`partner failed: ${r.text}`);
  const d = r.body.data as { partner: { id: number }; partner_program: { id: number } };
  const l = await send('POST', `${programsUrl}/${programId}/partners/${d.partner.id}/links`, {}, auth);
  return {
    partnerId: d.partner.id,
    partnerProgramId: d.partner_program.id,
    email,
    shortLink: (l.body.data as { short_link: string }).short_link,
  };
}

/** click → (lead with `email`) → sale; the sale's commission id and transaction id. */
async function sale(program: Program, partner: Partner, amountCents: number, email?: string) {
  const c = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${partner.shortLink}`,
  });
  const clickId = c.body.click_id as string;
  if (email !== undefined) {
    const l = await postJson(
      url('/api/v1/track/lead'),
      { click_id: clickId, customer_key: `c-${uniq()}`, email },
      bearer(program.token),
    );
    if (l.status !== 200) throw new Error(`lead failed: ${l.status} ${JSON.stringify(l.body)}`);
  } else {
    await waitFor(
      'the click to land',
      async () => (await sql`select 1 from customers where click_id = ${clickId}`)[0],
    );
  }
  const transactionId = `txn-${uniq()}`;
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: transactionId, amount_cents: amountCents, click_id: clickId },
    bearer(program.token),
  );
  if (s.status !== 200 || typeof s.body.commission_id !== 'number')
    throw new Error(`sale failed: ${s.status} ${JSON.stringify(s.body)}`);
  return { commissionId: s.body.commission_id, transactionId };
}

interface Commission {
  id: number;
  status: string;
  amount_cents: number;
  deducted_cents: number;
  review_reason: string | null;
  payable_at: string | null;
  payout_id: number | null;
  refund_reason: string | null;
  paid_at: string | null;
}
async function commissions(programId: number, q = ''): Promise<Commission[]> {
  const r = await getJson(`${programsUrl}/${programId}/commissions${q}`, auth);
  if (r.status !== 200) throw new Error(r.text);
  return r.body.data as Commission[];
}
const commissionOf = async (programId: number, id: number) =>
  (await commissions(programId)).find((c) => c.id === id)!;
const approved = (programId: number, id: number) =>
  waitFor(
    `commission ${id} approved`,
    async () => (await commissionOf(programId, id)).status === 'approved',
    60_000,
  );

interface Payout {
  id: number;
  program_id: number;
  partner_id: number;
  partner_name: string;
  partner_email: string;
  payout_method: unknown;
  amount_cents: number;
  commissions_cents: number;
  recovered_cents: number;
  currency: string;
  status: string;
  commission_ids: number[];
  reference: string | null;
  created_at: string;
  paid_at: string | null;
}
const createPayouts = (programId: number, body: unknown = {}, headers = auth) =>
  send('POST', `${programsUrl}/${programId}/payouts`, body, headers);
const post = (path: string, body?: unknown, headers = auth) => send('POST', url(path), body, headers);

/** The invariants, once the ledger has applied every entry the rows call for. */
async function settled(t: Test, program: Program, partners: Partner[]) {
  await waitFor(
    'the ledger to catch up',
    () =>
      ledgerCaughtUp(
        sql,
        partners.map((p) => p.partnerProgramId),
      ),
    60_000,
  );
  await assertMoney(t, sql, program.id, partners);
}

/**
 * Webhook events of `type` in the outbox (no relay runs here, so they stay). Every deployment's topic: the
 * approval sweep of another test file that turns it on may be the one that approved our commissions.
 */
async function outboxEvents(type: string, match: (data: Record<string, unknown>) => boolean) {
  const rows = await sql<{ payload: { type: string; data: Record<string, unknown> } }[]>`
    select payload from outbox where topic like '%webhook-events' and payload->>'type' = ${type}
    order by id`;
  return rows.map((r) => r.payload.data).filter(match);
}

t.test('program settings: hold_days and min_payout_cents, with their 400s', async (t) => {
  const created = await send('POST', programsUrl, { name: `P ${uniq()}` }, auth);
  t.match(created.body.data, { hold_days: 30, min_payout_cents: 0 }, 'defaults');
  const id = (created.body.data as { id: number }).id;
  const set = await send('PUT', `${programsUrl}/${id}`, { hold_days: 7, min_payout_cents: 5000 }, auth);
  t.equal(set.status, 200, set.text);
  t.match(set.body.data, { hold_days: 7, min_payout_cents: 5000 });
  t.match((await getJson(`${programsUrl}/${id}`, auth)).body.data, { hold_days: 7, min_payout_cents: 5000 });
  const holdError = 'hold_days must be an integer from 0 to 365';
  const minError = 'min_payout_cents must be an integer from 0 to 1000000000000';
  for (const [body, error] of [
    [{ hold_days: -1 }, holdError],
    [{ hold_days: 366 }, holdError],
    [{ hold_days: 1.5 }, holdError],
    [{ hold_days: '10' }, holdError],
    [{ hold_days: null }, 'hold_days cannot be null'],
    [{ min_payout_cents: -5 }, minError],
    [{ min_payout_cents: 10.25 }, minError],
    [{ min_payout_cents: 'lots' }, minError],
    [{ min_payout_cents: null }, 'min_payout_cents cannot be null'],
  ] as [Record<string, unknown>, string][]) {
    const r = await send('PUT', `${programsUrl}/${id}`, body, auth);
    t.equal(r.status, 400, JSON.stringify(body));
    t.same(r.body, { error }, JSON.stringify(body));
    const c = await send('POST', programsUrl, { name: 'x', ...body }, auth);
    if (body.hold_days !== null && body.min_payout_cents !== null)
      t.same(c.body, { error }, `create ${JSON.stringify(body)}`);
  }
  t.match((await getJson(`${programsUrl}/${id}`, auth)).body.data, { hold_days: 7, min_payout_cents: 5000 });
});

t.test('payable_at, the approval sweep, the self_referral hold, approve and reject', async (t) => {
  const program = await newProgram({ commission: { type: 'flat', amount_cents: 1000 } });
  const held = await newProgram({ hold_days: 30, commission: { type: 'flat', amount_cents: 1000 } });
  const p = await newPartner(program.id, `Self.${uniq()}@Example.com`);
  const q = await newPartner(held.id);

  const before = Date.now();
  const later = await sale(held, q, 5000);
  const [laterRow] = await sql`select payable_at from commissions where id = ${later.commissionId}`;
  const days = ((laterRow!.payable_at as Date).getTime() - before) / 86_400_000;
  t.ok(days > 29.9 && days < 30.1, `payable 30 days after the sale (${days.toFixed(3)})`);

  const normal = await sale(program, p, 5000);
  const selfRef = await sale(program, p, 5000, p.email.toUpperCase());
  const rejected = await sale(program, p, 5000, ` ${p.email.toLowerCase()} `);
  const c = await commissionOf(program.id, selfRef.commissionId);
  t.match(c, { status: 'pending', review_reason: 'self_referral' }, 'the customer is the partner: held');
  await approved(program.id, normal.commissionId);
  const another = await sale(program, p, 5000);
  await approved(program.id, another.commissionId);
  t.match(
    await commissionOf(program.id, selfRef.commissionId),
    { status: 'pending', review_reason: 'self_referral' },
    'held past payable_at',
  );
  t.match(
    await commissionOf(held.id, later.commissionId),
    { status: 'pending', review_reason: null },
    'in its hold',
  );

  const review = await commissions(program.id, '?status=review');
  t.same(
    review.map((x) => x.id).sort(),
    [selfRef.commissionId, rejected.commissionId].sort(),
    '?status=review',
  );

  const a = await post(`/api/advertiser/commissions/${selfRef.commissionId}/approve`);
  t.equal(a.status, 200, a.text);
  t.match(a.body.data, { id: selfRef.commissionId, status: 'approved', review_reason: null });
  const again = await post(`/api/advertiser/commissions/${selfRef.commissionId}/approve`);
  t.same([again.status, again.body], [409, { error: 'Commission is not held for review' }]);
  t.same([(await post(`/api/advertiser/commissions/${normal.commissionId}/approve`)).status], [409]);

  const r = await post(`/api/advertiser/commissions/${rejected.commissionId}/reject`, {
    reason: 'own purchase',
  });
  t.equal(r.status, 200, r.text);
  t.match(r.body.data, {
    status: 'reversed',
    deducted_cents: 1000,
    refund_reason: 'rejected: own purchase',
    review_reason: 'self_referral',
  });
  const twice = await post(`/api/advertiser/commissions/${rejected.commissionId}/reject`, {});
  t.same([twice.status, twice.body], [409, { error: 'Commission is already reversed' }]);
  const bad = await post(`/api/advertiser/commissions/${normal.commissionId}/reject`, {
    reason: 'x'.repeat(501),
  });
  t.same([bad.status, bad.body], [400, { error: 'reason must be a string of at most 500 characters' }]);
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: rejected.transactionId },
    bearer(program.token),
  );
  t.match(
    refund.body,
    { status: 'skipped', reason: 'Commission already reversed' },
    'a later refund is skipped',
  );
  // The notification worker's part (the notifications are outbox rows: test/helpers/notifications.ts).
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const [note] =
    await sql`select kind from notifications where notification_key = ${`commission:${rejected.commissionId}:rejected:partner`}`;
  t.equal(note?.kind, 'commission_rejected', 'the partner is told');
  t.same(await commissions(program.id, '?status=review'), []);

  // One commission.updated per change: the sweep's approvals, the approve, the reject.
  for (const [id, statuses] of [
    [normal.commissionId, ['approved']],
    [another.commissionId, ['approved']],
    [selfRef.commissionId, ['approved']],
    [rejected.commissionId, ['reversed']],
  ] as [number, string[]][]) {
    const events = await outboxEvents('commission.updated', (d) => d.id === id);
    t.same(
      events.map((e) => e.status),
      statuses,
      `commission.updated of ${id}`,
    );
  }
  const stranger = await signup(svc);
  const foreign = await post(
    `/api/advertiser/commissions/${normal.commissionId}/reject`,
    {},
    bearer(stranger.session),
  );
  t.same([foreign.status, foreign.body], [404, { error: 'Commission not found' }]);
  await settled(t, program, [p]);
});

t.test('payouts: preview, create, list, read, export, mark paid, cancel, clawbacks, minimum', async (t) => {
  const program = await newProgram({ commission: { type: 'percentage', percent: 10 } });
  const a = await newPartner(program.id);
  const b = await newPartner(program.id);
  const sa = [await sale(program, a, 10_000), await sale(program, a, 20_000), await sale(program, a, 5_000)];
  const sb = [await sale(program, b, 10_000)];
  for (const s of [...sa, ...sb]) await approved(program.id, s.commissionId);
  const base = `${programsUrl}/${program.id}/payouts`;

  const preview = await getJson(`${base}/preview`, auth);
  t.equal(preview.status, 200, preview.text);
  t.match(preview.body, {
    data: [
      {
        partner_id: a.partnerId,
        amount_cents: 3500,
        commissions_cents: 3500,
        recovered_cents: 0,
        has_payout_method: false,
        below_minimum: false,
      },
      { partner_id: b.partnerId, amount_cents: 1000, has_payout_method: false, below_minimum: false },
    ],
    meta: { currency: 'USD', min_payout_cents: 0, total_cents: 4500 },
  });
  t.same(await sql`select id from payouts where program_id = ${program.id}`, [], 'a preview writes nothing');

  const created = await createPayouts(program.id);
  t.equal(created.status, 201, created.text);
  const [pa, pb] = created.body.data as Payout[];
  t.match(pa, {
    program_id: program.id,
    partner_id: a.partnerId,
    partner_email: a.email,
    payout_method: null,
    amount_cents: 3500,
    currency: 'USD',
    status: 'pending',
    commission_ids: sa.map((s) => s.commissionId).sort((x, y) => x - y),
    reference: null,
    paid_at: null,
  });
  t.match(pb, { partner_id: b.partnerId, amount_cents: 1000, commission_ids: [sb[0]!.commissionId] });
  const none = await createPayouts(program.id);
  t.same([none.status, none.body], [201, { data: [] }], 'nothing left to pay');
  t.equal(
    (await outboxEvents('payout.created', (d) => d.program_id === program.id)).length,
    2,
    'payout.created × 2',
  );

  const inPayout = await post(`/api/advertiser/commissions/${sa[0]!.commissionId}/mark-paid`);
  t.same(
    [inPayout.status, inPayout.body],
    [409, { error: `Commission is in pending payout ${pa!.id}: mark the payout paid or cancel it` }],
  );
  const rejectIn = await post(`/api/advertiser/commissions/${sa[0]!.commissionId}/reject`, {});
  t.equal(rejectIn.status, 409);

  t.same(
    ((await getJson(base, auth)).body.data as Payout[]).map((p) => p.id),
    [pb!.id, pa!.id],
    'newest first',
  );
  t.equal(((await getJson(`${base}?status=paid`, auth)).body.data as Payout[]).length, 0);
  t.match((await getJson(url(`/api/advertiser/payouts/${pa!.id}`), auth)).body.data, {
    id: pa!.id,
    amount_cents: 3500,
  });

  const csv = await fetch(`${base}/export?format=csv`, { headers: auth });
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  const lines = (await csv.text()).trim().split('\r\n');
  t.equal(lines.length, 3);
  t.match(lines[1], new RegExp(`^${pb!.id},pending,${b.partnerId},.*,10.00,1000,USD,.*,no payout method$`));
  const paypal = await fetch(`${base}/export?format=paypal`, { headers: auth });
  t.same(
    [paypal.status, await paypal.text(), paypal.headers.get('x-payouts-left-out')],
    [200, '', '2'],
    'no PayPal methods',
  );
  const wise = await fetch(`${base}/export?format=wise&status=pending`, { headers: auth });
  t.equal(
    (await wise.text()).trim(),
    'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency',
  );
  for (const [q, error] of [
    ['format=xml', 'format must be one of paypal, wise, csv'],
    ['', 'format must be one of paypal, wise, csv'],
    ['format=csv&status=gone', 'status must be one of pending, paid, canceled'],
  ] as [string, string][]) {
    const r = await getJson(`${base}/export?${q}`, auth);
    t.same([r.status, r.body], [400, { error }], q);
  }

  const paid = await post(`/api/advertiser/payouts/${pa!.id}/mark-paid`, { reference: ' PP-BATCH-1 ' });
  t.equal(paid.status, 200, paid.text);
  t.match(paid.body.data, { status: 'paid', reference: 'PP-BATCH-1', paid_at: String });
  for (const s of sa)
    t.match(await commissionOf(program.id, s.commissionId), { status: 'paid', payout_id: pa!.id });
  const again = await post(`/api/advertiser/payouts/${pa!.id}/mark-paid`, {});
  t.same([again.status, again.body], [409, { error: 'Payout already paid' }]);
  const cancelPaid = await post(`/api/advertiser/payouts/${pa!.id}/cancel`);
  t.same([cancelPaid.status, cancelPaid.body], [409, { error: 'A paid payout cannot be canceled' }]);
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const [note] =
    await sql`select kind, body from notifications where notification_key = ${`payout:${pa!.id}:paid:partner`}`;
  t.equal(note?.kind, 'payout_paid');
  t.match(note?.body, /sent you 35\.00 USD for 3 commissions\. Reference: PP-BATCH-1/);
  const mail = await sql`
    select payload from outbox where topic = ${`${svc.prefix}mail`} and payload->>'to' = ${a.email}
      and payload->'data'->>'body' like '%sent you%'`;
  t.equal(mail.length, 1, 'the partner is mailed');
  t.match((await outboxEvents('payout.paid', (d) => d.id === pa!.id))[0], {
    id: pa!.id,
    status: 'paid',
    amount_cents: 3500,
  });
  t.match((await getJson(`${base}/export?format=csv&status=paid`, auth)).text, /PP-BATCH-1/);

  const canceled = await post(`/api/advertiser/payouts/${pb!.id}/cancel`);
  t.equal(canceled.status, 200, canceled.text);
  t.match(canceled.body.data, { status: 'canceled', commission_ids: [sb[0]!.commissionId] });
  const payCanceled = await post(`/api/advertiser/payouts/${pb!.id}/mark-paid`, {});
  t.same([payCanceled.status, payCanceled.body], [409, { error: 'A canceled payout cannot be marked paid' }]);
  t.same(
    [(await post(`/api/advertiser/payouts/${pb!.id}/cancel`)).body],
    [{ error: 'Payout already canceled' }],
  );
  t.match(
    await commissionOf(program.id, sb[0]!.commissionId),
    { status: 'approved', payout_id: null },
    'payable again',
  );
  await settled(t, program, [a, b]);

  // A clawback: a paid commission refunded in full; the next payout recovers it.
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: sa[1]!.transactionId },
    bearer(program.token),
  );
  t.match(refund.body, { status: 'reversed', deductionAmount: 20 });
  await waitFor(
    'the deduction',
    async () =>
      (await sql`select balance_cents from partner_programs where id = ${a.partnerProgramId}`)[0]!
        .balance_cents === '-2000',
  );
  const small = await sale(program, a, 15_000); // 1500: less than the 2000 owed
  await approved(program.id, small.commissionId);
  const second = await createPayouts(program.id, { partner_ids: [a.partnerId] });
  t.match(
    second.body.data,
    [{ partner_id: a.partnerId, commissions_cents: 1500, recovered_cents: 1500, amount_cents: 0 }],
    'never below zero',
  );
  const secondId = (second.body.data as Payout[])[0]!.id;
  t.equal((await post(`/api/advertiser/payouts/${secondId}/mark-paid`, {})).status, 200);
  await settled(t, program, [a, b]);
  t.equal(
    Number(
      (await sql`select balance_cents from partner_programs where id = ${a.partnerProgramId}`)[0]!
        .balance_cents,
    ),
    -500,
    '500 still owed',
  );
  const big = await sale(program, a, 30_000); // 3000
  await approved(program.id, big.commissionId);
  const third = await createPayouts(program.id);
  t.match(third.body.data, [
    { partner_id: a.partnerId, commissions_cents: 3000, recovered_cents: 500, amount_cents: 2500 },
    { partner_id: b.partnerId, commissions_cents: 1000, recovered_cents: 0, amount_cents: 1000 },
  ]);
  for (const p of third.body.data as Payout[])
    t.equal((await post(`/api/advertiser/payouts/${p.id}/mark-paid`, {})).status, 200);
  await settled(t, program, [a, b]);
  t.same(
    (
      await sql`select balance_cents from partner_programs where id = any(${[a.partnerProgramId, b.partnerProgramId]}::bigint[])`
    ).map((r) => r.balance_cents),
    ['0', '0'],
    'everything owed is paid',
  );

  // The minimum: a partner owed less waits.
  t.equal((await send('PUT', `${programsUrl}/${program.id}`, { min_payout_cents: 5000 }, auth)).status, 200);
  const tiny = await sale(program, b, 10_000);
  await approved(program.id, tiny.commissionId);
  t.same((await createPayouts(program.id)).body, { data: [] }, 'below the minimum: no payout');
  t.match((await getJson(`${base}/preview`, auth)).body.data, [
    { partner_id: b.partnerId, amount_cents: 1000, below_minimum: true },
  ]);
  t.match(await commissionOf(program.id, tiny.commissionId), { status: 'approved', payout_id: null });
  await settled(t, program, [a, b]);
});

t.test('payouts: access, scopes and 404s', async (t) => {
  const program = await newProgram({ commission: { type: 'flat', amount_cents: 700 } });
  const a = await newPartner(program.id);
  const s = await sale(program, a, 1000);
  await approved(program.id, s.commissionId);
  const [payout] = (await createPayouts(program.id)).body.data as Payout[];
  const stranger: User = await signup(svc);
  const other = bearer(stranger.session);
  for (const [method, path] of [
    ['GET', `/api/advertiser/payouts/${payout!.id}`],
    ['POST', `/api/advertiser/payouts/${payout!.id}/mark-paid`],
    ['POST', `/api/advertiser/payouts/${payout!.id}/cancel`],
    ['GET', `/api/advertiser/payouts/99999999`],
    ['GET', `/api/advertiser/payouts/abc`],
    ['POST', `/api/advertiser/payouts/0/mark-paid`],
  ] as const) {
    const r = method === 'GET' ? await getJson(url(path), other) : await post(path, {}, other);
    t.same([r.status, r.body], [404, { error: 'Payout not found' }], `${method} ${path}`);
  }
  for (const path of ['', '/preview', '/export?format=csv']) {
    const r = await getJson(`${programsUrl}/${program.id}/payouts${path}`, other);
    t.same([r.status, r.body], [404, { error: 'Program not found' }], `another workspace: ${path}`);
  }
  t.same((await createPayouts(program.id, {}, other)).body, { error: 'Program not found' });

  const member = await memberOf(svc, sql, owner.workspaceId, 'member');
  t.equal(
    (await getJson(`${programsUrl}/${program.id}/payouts`, bearer(member.session))).status,
    200,
    'a member reads',
  );
  const denied = await post(`/api/advertiser/payouts/${payout!.id}/mark-paid`, {}, bearer(member.session));
  t.same([denied.status, denied.body], [403, { error: 'Your role (member) lacks permission payouts:write' }]);
  const key = await send(
    'POST',
    url('/api/advertiser/api-keys'),
    { name: 'read', scopes: ['payouts:read'] },
    auth,
  );
  const readKey = bearer((key.body.data as { key: string }).key);
  t.equal((await getJson(`${programsUrl}/${program.id}/payouts`, readKey)).status, 200);
  t.same((await createPayouts(program.id, {}, readKey)).body, { error: 'API key lacks scope payouts:write' });
  t.same((await post(`/api/advertiser/payouts/${payout!.id}/cancel`, undefined, readKey)).body, {
    error: 'API key lacks scope payouts:write',
  });
  for (const [body, error] of [
    [{ partner_ids: [0] }, 'partner_ids must be an array of at most 1000 positive integers'],
    [{ partner_ids: 'all' }, 'partner_ids must be an array of at most 1000 positive integers'],
    ['[1]', 'Request body must be a JSON object'],
  ] as [unknown, string][]) {
    const r = await createPayouts(program.id, body);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body));
  }
  const badRef = await post(`/api/advertiser/payouts/${payout!.id}/mark-paid`, { reference: 5 });
  t.same(
    [badRef.status, badRef.body],
    [400, { error: 'reference must be a string of at most 200 characters' }],
  );
  t.equal((await getJson(url(`/api/advertiser/payouts/${payout!.id}`), auth)).status, 200);
  t.match((await getJson(`${programsUrl}/${program.id}/payouts?status=done`, auth)).body, {
    error: 'status must be one of pending, paid, canceled',
  });
});
