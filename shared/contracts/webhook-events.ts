// Outbound webhook events (CONTRACT "Webhooks to integrators"), as the outbox carries them to the webhook
// worker (topic `webhook-events`). The worker fans each event out to the workspace's endpoints that want
// it and delivers it in the Standard Webhooks format; `id` is stable per event, so a relay's second
// publication of the same row is one event.
export const WEBHOOK_EVENT_TYPES = [
  'lead.created',
  'sale.created',
  'sale.refunded',
  'commission.created',
  'commission.updated',
  'partner.created',
  'partner.applied',
  'partner.approved',
  'partner.group_changed',
  'payout.created',
  'payout.paid',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookEvent {
  /** `evt_…`, stable per event. */
  id: string;
  type: WebhookEventType;
  workspace_id: number;
  /** The program the event is about (endpoints may be limited to programs); null for none. */
  program_id: number | null;
  /** ISO time of the change. */
  created_at: string;
  /**
   * The object's current fields: ids, amounts in cents, currency, status, partner and program ids, and its
   * `updated_at`; test-mode events carry `is_test: true`.
   */
  data: Record<string, unknown>;
  /** Only this endpoint receives it, whatever its filters (a `webhook.test` event); absent: every match. */
  endpoint_id?: number;
}

/** The body every endpoint receives (Standard Webhooks): `timestamp` is the time of the change. */
export interface WebhookBody {
  type: WebhookEventType;
  timestamp: string;
  data: Record<string, unknown>;
}
