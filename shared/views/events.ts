// The outbound webhook events (docs/webhooks.md), one line each: the object its `data` carries, which is that
// object's view (this folder), the one the management API answers with where it has a route. The OpenAPI
// document's `webhooks` section (services/web/app.ts) is built from this table, and the SDKs' event types are
// generated from that document (npm run sdk:types), so adding an event is a line here.
import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { WEBHOOK_EVENT_TYPES } from '../contracts/webhook-events.ts';
import type { WebhookEventType } from '../contracts/webhook-events.ts';
import { CommissionView } from './commission.ts';
import { GroupChangeView } from './group-change.ts';
import { LeadView } from './lead.ts';
import { PartnerView } from './partner.ts';
import { PayoutView } from './payout.ts';
import { SaleRefundedView, SaleView } from './sale.ts';
import { WebhookTestView } from './webhook-test.ts';

interface EventSpec {
  data: TSchema;
  /** When it is sent (the OpenAPI operation's summary). */
  when: string;
}

export const WEBHOOK_EVENTS = {
  'lead.created': { data: LeadView, when: 'A lead is recorded (/track/lead), attributed or not' },
  'sale.created': {
    data: SaleView,
    when: 'A sale is recorded (/track/sale or a processor payment), with its commission’s id or null',
  },
  'sale.refunded': {
    data: SaleRefundedView,
    when: 'A refund of a sale is applied (/track/refund or a processor refund)',
  },
  'commission.created': { data: CommissionView, when: 'A sale or a bonus earned a commission' },
  'commission.updated': {
    data: CommissionView,
    when: 'A commission changed: every status change and review hold, with its new status',
  },
  'partner.created': { data: PartnerView, when: 'An advertiser added a partner to a program' },
  'partner.applied': { data: PartnerView, when: "A partner applied from a program's public page" },
  'partner.approved': {
    data: PartnerView,
    when: 'A partner was approved (by the advertiser, or automatically)',
  },
  'partner.group_changed': {
    data: GroupChangeView,
    when: 'A partner moved to another group (a tier rule, by hand, or its group was deleted)',
  },
  'payout.created': { data: PayoutView, when: 'A payout was created for a partner' },
  'payout.paid': { data: PayoutView, when: 'A payout was marked paid' },
  'webhook.test': { data: WebhookTestView, when: 'POST /api/advertiser/webhooks/:id/test' },
} satisfies Record<WebhookEventType, EventSpec>;

/** The `data` of each event type. */
export type EventData = { [T in WebhookEventType]: Static<(typeof WEBHOOK_EVENTS)[T]['data']> };

/** The body every endpoint receives for an event of type `type` (Standard Webhooks). */
export const eventBody = (type: WebhookEventType) =>
  Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({
        format: 'date-time',
        description: 'When the change happened (the same at every attempt)',
      }),
      data: WEBHOOK_EVENTS[type].data,
    },
    { additionalProperties: false },
  );

/**
 * The OpenAPI 3.1 `webhooks` section: one POST per event type, the body it sends (envelope and data), and the
 * answer svc wants (a 2xx within 10 s). Signed with Standard Webhooks headers (docs/webhooks.md).
 */
export function webhooksDocument(): Record<string, { post: { responses: Record<string, object> } }> {
  const headers = {
    'webhook-id': 'The same at every attempt of one event to one endpoint: dedupe on it',
    'webhook-timestamp': 'The attempt’s time, unix seconds (covered by the signature)',
    'webhook-signature':
      '`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`, space-separated while a secret rotates',
  };
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace('.', '_')}`,
          tags: ['webhooks'],
          summary: WEBHOOK_EVENTS[type].when,
          description:
            `The \`${type}\` event, sent to each enabled endpoint that wants it. \`data\` is the object as the ` +
            'management API shows it, with `is_test` and `updated_at`; events come at least once and in any ' +
            'order (docs/webhooks.md).',
          parameters: Object.entries(headers).map(([name, description]) => ({
            name,
            in: 'header',
            required: true,
            description,
            schema: { type: 'string' },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: eventBody(type) } },
          },
          responses: {
            '2XX': { description: 'Delivered: any 2xx within 10 seconds (else retried)' },
            '410': { description: 'Gone: the delivery fails and the endpoint is disabled' },
          },
        },
      },
    ]),
  );
}
