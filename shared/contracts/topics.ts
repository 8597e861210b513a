// The Kafka topics every process agrees on, and the name each has under a deployment's prefix.
export const TOPICS = {
  /** Clicks and leads, keyed by click_id: a lead is ordered behind its click. */
  clicks: 'clicks',
  /** Sale commands, keyed by transaction_id. */
  sales: 'sales',
  /** Refund commands, keyed by transaction_id. */
  refunds: 'refunds',
  /** Balance ledger entries, keyed by partner. */
  ledger: 'ledger',
  /** In-app notifications (and which to mail), relayed from the outbox, keyed by notification_key. */
  notifications: 'notifications',
  /** Payment-processor webhook events, keyed by program and payment, invoice or subscription. */
  processorEvents: 'processor-events',
  deadLetter: 'dead-letter',
  /** Outbound webhook events, relayed from the outbox (shared/db/outbox.ts). */
  webhookEvents: 'webhook-events',
  /** Mail to send, relayed from the outbox. */
  mail: 'mail',
  /** Import commands (one source page each), relayed from the outbox, keyed by import id (docs/importing.md). */
  imports: 'imports',
} as const;
export type TopicKey = keyof typeof TOPICS;

/**
 * The Kafka header naming what a record is: `click`, or a command's type (`lead`, `sale`, `refund`). The
 * ingress sets it on every click and command; the click worker tells a lead from a click by it (leads
 * share the clicks topic, ordered behind their click), never by the bytes of the value.
 */
export const RECORD_TYPE_HEADER = 'type';

export function topicName(prefix: string, key: TopicKey): string {
  return prefix + TOPICS[key];
}

/** The topics the outbox relay publishes to (shared/db/outbox.ts). */
export const OUTBOX_TOPICS = [
  'webhookEvents',
  'mail',
  'notifications',
  'imports',
] as const satisfies readonly TopicKey[];
export type OutboxTopicKey = (typeof OUTBOX_TOPICS)[number];
