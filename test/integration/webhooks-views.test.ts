// One view per object, end to end (STYLE "One view per object"; docs/webhooks.md): through the real API and
// pipeline, what an event's `data` says of a partner, a commission or a payout is what the management API
// answers for the same object at the same moment, field for field; and every event the lifecycle recorded
// (the outbox rows the webhook worker sends as they are) passes the OpenAPI document's `webhooks` section,
// served by the same web process, exactly.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { ownDatabase, postJson, startServices, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { webhookValidator } from '../helpers/openapi-webhooks.ts';
import type { WebhooksSection } from '../helpers/openapi-webhooks.ts';

const db = await ownDatabase(t);
const sql = db.sql;
const svc = await startServices(
  t,
  ['web', 'click-worker', 'attribution-worker', 'reversal-worker', 'ledger-worker'],
  // Its own database: the approval sweep moves only this file's commissions.
  { ...db.env, APPROVAL_SWEEP_MS: '200' },
);
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
// Events are recorded only for a workspace with an enabled endpoint; no relay runs, so they stay in the outbox.
const [endpoint] = await sql<{ id: string }[]>`
  insert into webhook_endpoints (workspace_id, url, secret)
  values (${owner.workspaceId}, 'https://hooks.example/views', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
  returning id`;
const topic = outboxTopic(svc.prefix, 'webhookEvents');

type Data = Record<string, unknown>;
interface Recorded {
  type: string;
  created_at: string;
  data: Data;
}
async function recorded(type?: string): Promise<Recorded[]> {
  const rows = await sql<
    { payload: Recorded }[]
  >`select payload from outbox where topic = ${topic} order by id`;
  return rows.map((r) => r.payload).filter((e) => type === undefined || e.type === type);
}
/** The last event of `type` about object `id`, once there is one. */
const lastEvent = (type: string, id: number, where: (d: Data) => boolean = () => true) =>
  waitFor(`${type} of ${id}`, async () =>
    (await recorded(type)).filter((e) => e.data.id === id && where(e.data)).at(-1),
  );
async function ok(
  r: Promise<{ status: number; body: Record<string, unknown>; text: string }>,
  status = 200,
): Promise<Data> {
  const res = await r;
  if (res.status !== status) throw new Error(`${res.status} ${res.text}`);
  return res.body.data as Data;
}

const programs = url('/api/advertiser/affiliate-programs');
const program = await ok(send('POST', programs, { name: `Views ${uniq()}`, hold_days: 0 }, auth), 201);
const programId = program.id as number;
const token = program.api_token as string;
const base = `${programs}/${programId}`;
let partnerId = 0;

t.test('a partner: partner.created and partner.approved carry what the partners API answers', async (t) => {
  const added = await ok(
    send(
      'POST',
      `${base}/partners`,
      { name: 'Ada', email: `ada-${uniq()}@example.com`, status: 'pending' },
      auth,
    ),
    201,
  );
  partnerId = (added.partner as { id: number }).id;
  const listed = ((await getJson(`${base}/partners`, auth)).body.data as Data[]).find(
    (p) => p.id === partnerId,
  )!;
  const created = await lastEvent('partner.created', partnerId);
  t.same(created.data, listed, 'partner.created: the partner as the list shows it');
  t.match(created.data, { status: 'pending', partner_id: partnerId, program_id: programId, is_test: false });

  const approved = await ok(send('POST', `${base}/partners/${partnerId}/approve`, undefined, auth));
  t.same(
    (await lastEvent('partner.approved', partnerId)).data,
    approved,
    'partner.approved: the approve answer',
  );

  const group = await ok(send('POST', `${base}/groups`, { name: `Gold ${uniq()}` }, auth), 201);
  const placed = await ok(send('PUT', `${base}/partners/${partnerId}/group`, { group_id: group.id }, auth));
  t.match(placed, { id: partnerId, group: { id: group.id } });
  const moved = await waitFor('partner.group_changed', async () =>
    (await recorded('partner.group_changed')).find((e) => e.data.partner_id === partnerId),
  );
  t.match(moved.data, { to_group_id: group.id, reason: 'manual', program_id: programId });
});

let commissionId = 0;
let transactionId = '';

t.test('a commission: commission.* carry what the commissions API answers', async (t) => {
  const links = (await getJson(`${base}/partners/${partnerId}/links`, auth)).body.data as {
    short_link: string;
  }[];
  const clicked = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${links[0]!.short_link}`,
  });
  const clickId = clicked.body.click_id as string;
  const lead = await postJson(
    url('/api/v1/track/lead'),
    { click_id: clickId, customer_key: `c-${uniq()}`, email: 'buyer@example.com' },
    bearer(token),
  );
  t.equal(lead.status, 200, JSON.stringify(lead.body));
  transactionId = `views-${uniq()}`;
  const sale = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: transactionId, amount_cents: 10_000, click_id: clickId },
    bearer(token),
  );
  t.equal(sale.status, 200, JSON.stringify(sale.body));
  commissionId = sale.body.commission_id as number;
  const listed = async () =>
    ((await getJson(`${base}/commissions`, auth)).body.data as Data[]).find((c) => c.id === commissionId)!;

  const created = await lastEvent('commission.created', commissionId);
  t.same(Object.keys(created.data).sort(), Object.keys(await listed()).sort(), 'the same fields');
  // hold_days 0: the approval sweep approves it, and its commission.updated is the commission as listed.
  const approved = await lastEvent('commission.updated', commissionId, (d) => d.status === 'approved');
  t.same(approved.data, await listed(), 'commission.updated: the commission as the list shows it');
  t.match(approved.data, {
    program_id: programId,
    partner_id: partnerId,
    is_test: false,
    amount_cents: 2_000,
  });
});

t.test('a payout: payout.created and payout.paid carry what the payouts API answers', async (t) => {
  const made = await ok(send('POST', `${base}/payouts`, {}, auth), 201);
  const payout = (made as unknown as Data[]).find((p) => p.partner_id === partnerId)!;
  const payoutId = payout.id as number;
  t.same((await lastEvent('payout.created', payoutId)).data, payout, 'payout.created: the create answer');
  t.same(await ok(getJson(url(`/api/advertiser/payouts/${payoutId}`), auth)), payout, 'GET answers the same');

  const paid = await ok(
    send('POST', url(`/api/advertiser/payouts/${payoutId}/mark-paid`), { reference: 'R-1' }, auth),
  );
  t.same((await lastEvent('payout.paid', payoutId)).data, paid, 'payout.paid: the mark-paid answer');
  t.match(paid, { status: 'paid', reference: 'R-1', commission_ids: [commissionId], is_test: false });

  const inPayout = await lastEvent('commission.updated', commissionId, (d) => d.status === 'paid');
  const listed = ((await getJson(`${base}/commissions`, auth)).body.data as Data[]).find(
    (c) => c.id === commissionId,
  );
  t.same(inPayout.data, listed, "the payment's commission.updated: the commission as listed");
});

t.test('every event recorded passes the OpenAPI webhooks section exactly', async (t) => {
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: transactionId, refund_amount_cents: 1_000, refund_reason: 'damaged' },
    bearer(token),
  );
  t.equal(refund.status, 200, JSON.stringify(refund.body));
  const testSale = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `${transactionId}-test`, amount_cents: 500, additional_data: { test_mode: true } },
    bearer(token),
  );
  t.equal(testSale.status, 200, JSON.stringify(testSale.body));
  await ok(send('POST', url(`/api/advertiser/webhooks/${endpoint!.id}/test`), undefined, auth), 202);
  await waitFor('the refund and the test events', async () => {
    const types = new Set((await recorded()).map((e) => e.type));
    return (
      types.has('sale.refunded') && types.has('webhook.test') && (await recorded('sale.created')).length >= 2
    );
  });

  const doc = (await getJson(url('/api/v1/openapi.json'))).body as { webhooks: WebhooksSection };
  const valid = await webhookValidator(t, doc.webhooks);
  const events = await recorded();
  t.same(
    [...new Set(events.map((e) => e.type))].sort(),
    [
      'commission.created',
      'commission.updated',
      'lead.created',
      'partner.approved',
      'partner.created',
      'partner.group_changed',
      'payout.created',
      'payout.paid',
      'sale.created',
      'sale.refunded',
      'webhook.test',
    ],
    'the lifecycle made every kind of event but an application',
  );
  for (const e of events) {
    // The body each endpoint receives (services/workers/webhooks/fan-out.ts).
    const body = { type: e.type, timestamp: new Date(e.created_at).toISOString(), data: e.data };
    t.equal(await valid(e.type, body), null, `${e.type} ${String(e.data.id ?? e.data.endpoint_id)}`);
  }
});
