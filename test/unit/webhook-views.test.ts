// One view per object (shared/views/): the OpenAPI document's `webhooks` section has every event type, its
// data schema is the very schema the API answers the same object with, and what each view builds passes
// that section exactly (no field missing, none extra). Offline: the document of the web app, no servers.
import t from 'tap';
import { buildOpenApiDocument } from '../../scripts/lib/openapi.ts';
import { WEBHOOK_EVENT_TYPES } from '../../shared/contracts/webhook-events.ts';
import { commissionView } from '../../shared/views/commission.ts';
import { saleRefundedView, saleView } from '../../shared/views/sale.ts';
import { leadView } from '../../shared/views/lead.ts';
import { partnerView } from '../../shared/views/partner.ts';
import { payoutView } from '../../shared/views/payout.ts';
import { groupChangeView } from '../../shared/views/group-change.ts';
import { webhookTestView } from '../../shared/views/webhook-test.ts';
import { webhookValidator } from '../helpers/openapi-webhooks.ts';
import type { WebhooksSection } from '../helpers/openapi-webhooks.ts';

const doc = (await buildOpenApiDocument()) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  webhooks: WebhooksSection;
};
const valid = await webhookValidator(t, doc.webhooks);
const at = new Date('2026-12-01T10:00:00.000Z');

type Schema = { properties: Record<string, unknown> };
const eventDataOf = (type: string) =>
  (
    doc.webhooks[type]!.post.requestBody.content['application/json'].schema as {
      properties: { data: Schema };
    }
  ).properties.data;
const answerData = (path: string, method: string, status = '200') =>
  (
    doc.paths[path]![method]!.responses[status] as {
      content: { 'application/json': { schema: { properties: { data: Schema & { items?: Schema } } } } };
    }
  ).content['application/json'].schema.properties.data;

t.test('the webhooks section: one POST per event type, the envelope and its data', async (t) => {
  t.same(Object.keys(doc.webhooks).sort(), [...WEBHOOK_EVENT_TYPES].sort());
  for (const type of WEBHOOK_EVENT_TYPES) {
    const body = doc.webhooks[type]!.post.requestBody.content['application/json'].schema as {
      properties: Record<string, Record<string, unknown>>;
      required: string[];
    };
    t.same(body.required.sort(), ['data', 'timestamp', 'type'], type);
    t.equal(body.properties.type!.const, type, `${type}: type is the event's`);
    t.ok(
      eventDataOf(type).properties.is_test && eventDataOf(type).properties.updated_at,
      `${type}: is_test, updated_at`,
    );
  }
});

/** @fastify/swagger writes a route's `const` as a one-value `enum`; the webhooks section keeps `const`. */
const constAsEnum = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(constAsEnum)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v).flatMap(([k, x]) => (k === 'const' ? [['enum', [x]]] : [[k, constAsEnum(x)]])),
        )
      : v;

t.test("an event's data schema is the schema of the API's answer for the same object", async (t) => {
  const eventData = (type: string) => constAsEnum(eventDataOf(type));
  const commission = answerData('/api/advertiser/commissions/{id}/approve', 'post');
  t.same(eventData('commission.created'), commission, 'commission.created: the commission answer');
  t.same(eventData('commission.updated'), commission, 'commission.updated: the commission answer');
  t.same(
    answerData('/api/advertiser/affiliate-programs/{id}/commissions', 'get').items,
    commission,
    'the commissions list: the same',
  );
  const partner = answerData('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/approve', 'post');
  for (const type of ['partner.created', 'partner.applied', 'partner.approved']) {
    t.same(eventData(type), partner, `${type}: the partner answer`);
  }
  t.same(
    answerData('/api/advertiser/affiliate-programs/{id}/partners', 'get').items,
    partner,
    'partners list',
  );
  const payout = answerData('/api/advertiser/payouts/{id}', 'get');
  t.same(eventData('payout.created'), payout, 'payout.created: the payout answer');
  t.same(eventData('payout.paid'), payout, 'payout.paid: the payout answer');
  t.same(answerData('/api/advertiser/payouts/{id}/mark-paid', 'post'), payout, 'mark-paid answers the same');
});

const commission = commissionView({
  id: '3',
  status: 'pending',
  amount_cents: '3000',
  currency: 'USD',
  sale_id: '28',
  program_id: '11',
  partner_id: '3',
  customer_id: '3',
  refund_reason: null,
  deducted_cents: '0',
  review_reason: null,
  payable_at: at,
  payout_id: null,
  paid_at: null,
  coupon_code: null,
  group_id: '7',
  rule: { source: 'group', type: 'percentage', percent: 30, amount_cents: null },
  bonus_id: null,
  created_at: at,
  updated_at: at,
});
const sale = {
  id: '28',
  program_id: '11',
  transaction_id: 'wh-1',
  amount_cents: '10000',
  currency: 'USD',
  sale_type: 'payment',
  is_recurring: false,
  subscription_id: null,
  product_id: null,
  customer_id: '3',
  customer_key: 'cust-1',
  partner_id: '3',
  is_test: false,
  sale_date: at,
  created_at: at,
  coupon_code: 'SPRING',
};
const partner = partnerView({
  id: '3',
  name: 'Ada',
  email: 'ada@example.com',
  program_id: '11',
  pp_id: '5',
  status: 'approved',
  rejection_reason: null,
  source: 'advertiser',
  application: null,
  claimed: true,
  clicks: '12',
  balance_cents: '2250',
  program_balance_cents: '2250',
  joined_at: at,
  updated_at: at,
  group_id: '7',
  group_name: 'Default',
  group_slug: 'default',
  group_locked: false,
  commission_override: { type: 'percentage', percent: 25 },
});
const payout = payoutView({
  id: '12',
  program_id: '11',
  partner_id: '3',
  partner_name: 'Ada',
  partner_email: 'ada@example.com',
  payout_method: { type: 'paypal', email: 'ada@example.com', updated_at: at.toISOString() },
  currency: 'USD',
  amount_cents: '2250',
  commissions_cents: '2250',
  recovered_cents: '0',
  status: 'paid',
  reference: 'PAYPAL-1',
  created_at: at,
  paid_at: at,
  canceled_at: null,
  updated_at: at,
  commission_ids: ['1', '4'],
});
const examples: [string, unknown][] = [
  [
    'lead.created',
    leadView({
      id: '2',
      program_id: 11,
      customer_id: '3',
      partner_id: null,
      click_id: 'cust_3_1',
      customer_key: null,
      email: 'buyer@example.com',
      event_name: null,
      is_test: true,
      lead_timestamp: at,
    }),
  ],
  ['sale.created', saleView(sale, 3)],
  ['sale.created', saleView({ ...sale, partner_id: null, is_test: true }, null)],
  [
    'sale.refunded',
    saleRefundedView(sale, 3, {
      refund_amount_cents: 2500,
      refund_reason: 'damaged',
      commission_status: 'refunded',
      deduction_cents: 750,
      at,
    }),
  ],
  ['commission.created', commission],
  ['commission.updated', { ...commission, status: 'paid', paid_at: at.toISOString(), payout_id: 12 }],
  ['partner.created', partner],
  ['partner.applied', { ...partner, source: 'application', application: { website: null, message: 'Hi' } }],
  ['partner.approved', partner],
  [
    'partner.group_changed',
    groupChangeView({
      id: 1,
      partnerId: 3,
      ppId: 5,
      programId: 11,
      fromGroupId: 7,
      toGroupId: 8,
      reason: 'tier_rule',
      ruleId: 9,
      at,
    }),
  ],
  ['payout.created', { ...payout, status: 'pending', paid_at: null, reference: null }],
  ['payout.paid', payout],
  ['webhook.test', webhookTestView(80, at)],
];

t.test("each view's output is its events' data, exactly as the document says", async (t) => {
  t.same(
    new Set(examples.map(([type]) => type)).size,
    WEBHOOK_EVENT_TYPES.length,
    'every type has an example',
  );
  for (const [type, data] of examples) {
    t.equal(await valid(type, { type, timestamp: at.toISOString(), data }), null, type);
  }
});

t.test('the document refuses what a view does not make', async (t) => {
  const body = (data: unknown) => ({ type: 'commission.updated', timestamp: at.toISOString(), data });
  t.match(await valid('commission.updated', body({ ...commission, extra: 1 })), /additional properties/);
  const { updated_at: _gone, ...missing } = commission;
  t.match(await valid('commission.updated', body(missing)), /updated_at/);
  t.match(await valid('commission.updated', body({ ...commission, amount_cents: '3000' })), /amount_cents/);
  t.match(
    await valid('commission.updated', { ...body(commission), type: 'commission.created' }),
    /type/,
    'the type is the event’s own',
  );
});
