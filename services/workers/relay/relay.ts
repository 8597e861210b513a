// The outbox relay's step (shared/db/outbox.ts): takes the oldest outbox rows no other relay holds (skip
// locked, so relays on several machines share the work without waiting on each other), produces each to
// its topic, and deletes them in the same transaction once the broker acknowledged every one. A failed or
// timed-out produce rolls the transaction back and the rows stay for the next round. A relay that dies
// after the acknowledgement and before its commit leaves them too: they are published again, and their
// consumers dedupe on the payload's id.
import type { Sql } from '../../../shared/db/sql.ts';
import type { BatchingProducer } from '../../../shared/pipeline/kafka.ts';
import { OUTBOX_TOPICS } from '../../../shared/contracts/topics.ts';
import type { TopicKey } from '../../../shared/contracts/topics.ts';

export interface RelayDeps {
  sql: Sql;
  producer: Pick<BatchingProducer, 'send'>;
  /** The prefixed topic names. */
  topics: Record<TopicKey, string>;
  /** Rows per transaction. */
  batchSize: number;
}

/** One round: relays up to batchSize rows; returns how many, and whether more may be waiting. */
export function createRelayStep(deps: RelayDeps) {
  const { sql, producer, topics, batchSize } = deps;
  // This deployment's topics only: rows of another prefix sharing the database are not ours to relay.
  const mine = OUTBOX_TOPICS.map((k) => topics[k]);

  return async function relayOutbox(): Promise<{ relayed: number; more: boolean }> {
    return sql.begin(async (tx) => {
      const rows = await tx<{ id: string; topic: string; message_key: string; payload: string }[]>`
        select id, topic, message_key, payload::text as payload from outbox
        where topic = any(${mine}::text[])
        order by id limit ${batchSize} for update skip locked`;
      if (rows.length === 0) return { relayed: 0, more: false };
      await Promise.all(
        rows.map((r) =>
          producer.send(r.topic, {
            key: r.message_key,
            value: r.payload,
            headers: { 'outbox-id': r.id },
          }),
        ),
      );
      await tx`delete from outbox where id = any(${rows.map((r) => r.id)}::bigint[])`;
      return { relayed: rows.length, more: rows.length === batchSize };
    });
  };
}
