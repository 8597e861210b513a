// Poison handling shared by every consumer: dead letters go to the dead-letter topic (original key and
// bytes, headers naming step, reason and source) and to the dead_letters table (keyed by source offset, so
// a redelivered chunk records nothing twice); and a chunk that Postgres rejects as data is retried message
// by message so only the culprits are dead-lettered.
import type { Sql } from '../db/sql.ts';
import { isDataError } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import { deadLetterMessage } from './kafka.ts';

export interface DeadLetter {
  message: ConsumedMessage;
  step: string;
  reason: string;
}

export interface DeadLetterDeps {
  sql: Sql;
  producer: BatchingProducer;
  deadLetterTopic: string;
  log: Logger;
}

export async function writeDeadLetters(deps: DeadLetterDeps, dead: DeadLetter[]): Promise<void> {
  if (dead.length === 0) return;
  // Topic first (the operator's replay source), then the table (counting and reading).
  await Promise.all(dead.map((d) => deps.producer.send(deps.deadLetterTopic, deadLetterMessage(d))));
  const rows = dead.map((d) => ({
    source_topic: d.message.topic,
    source_partition: d.message.partition,
    source_offset: d.message.offset,
    step: d.step,
    reason: d.reason.slice(0, 1000),
    message_key: d.message.key,
    payload: d.message.value,
  }));
  await deps.sql`insert into dead_letters ${deps.sql(rows)} on conflict do nothing`;
  for (const d of dead) {
    deps.log.warn(
      {
        step: d.step,
        reason: d.reason,
        topic: d.message.topic,
        partition: d.message.partition,
        offset: d.message.offset,
      },
      'message dead-lettered',
    );
  }
}

/**
 * Applies `items` in one call; if Postgres rejects the chunk as data, applies them one at a time (in
 * order) and adds the ones still rejected to `dead`. Counts returned by `apply` are summed.
 */
export async function applyIsolatingPoison<T, R extends object>(
  items: { value: T; message: ConsumedMessage }[],
  apply: (values: T[]) => Promise<R>,
  dead: DeadLetter[],
  log: Logger,
  step = 'apply',
): Promise<R> {
  try {
    return await apply(items.map((i) => i.value));
  } catch (err) {
    if (!isDataError(err)) throw err;
    log.warn({ err }, 'chunk rejected as data; retrying message by message');
  }
  let total: R | null = null;
  for (const item of items) {
    try {
      const r = await apply([item.value]);
      if (total === null) total = { ...r };
      else for (const k of Object.keys(r) as (keyof R)[]) (total[k] as number) += r[k] as number;
    } catch (e) {
      if (!isDataError(e)) throw e;
      dead.push({ message: item.message, step, reason: (e as Error).message });
    }
  }
  return total ?? (await apply([]));
}
