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
  notifications: 'notifications',
  /** Payment-processor webhook events, keyed by program and payment, invoice or subscription. */
  processorEvents: 'processor-events',
  deadLetter: 'dead-letter',
} as const;
export type TopicKey = keyof typeof TOPICS;

export function topicName(prefix: string, key: TopicKey): string {
  return prefix + TOPICS[key];
}
