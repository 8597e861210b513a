// The one outbox (0012_outbox.sql): effects that leave a transaction (outbound webhook events, mail) are
// rows written IN that transaction with `writeOutbox(tx, ...)`, and the relay (services/workers/relay)
// publishes them to Kafka after the commit. Never produce such an effect directly: a produce before the
// commit can announce a change that then rolls back, and one after it is lost when the process dies in
// between.
//
// Delivery is at least once: the relay may publish a row twice (it died after the broker's acknowledgement,
// before its delete). Each payload therefore carries a stable `id` that its consumer dedupes on.
import type { Sql, Tx } from './sql.ts';
import { topicName } from '../contracts/topics.ts';
import type { OutboxTopicKey } from '../contracts/topics.ts';

export interface OutboxItem {
  /** The Kafka topic with the deployment's prefix: `outboxTopic(cfg.kafkaPrefix, 'mail')`. */
  topic: string;
  /** Kafka message key: locality only, consumers never depend on order. */
  key: string;
  /** The message, as JSON; it must carry the stable id its consumer dedupes on. */
  payload: { id: string };
}

/** Writes the items in the caller's transaction, one statement whatever their number. */
export async function writeOutbox(tx: Tx | Sql, items: readonly OutboxItem[]): Promise<void> {
  if (items.length === 0) return;
  // The payload travels as JSON text and is cast per row: a jsonb[] parameter would have postgres.js
  // encode each element as JSON a second time.
  await tx`
    insert into outbox (topic, message_key, payload)
    select topic, message_key, payload::jsonb
    from unnest(
      ${items.map((i) => i.topic)}::text[],
      ${items.map((i) => i.key)}::text[],
      ${items.map((i) => JSON.stringify(i.payload))}::text[]
    ) as v(topic, message_key, payload)`;
}

/** The prefixed name of an outbox topic (the relay takes only its own deployment's topics). */
export function outboxTopic(prefix: string, key: OutboxTopicKey): string {
  return topicName(prefix, key);
}
