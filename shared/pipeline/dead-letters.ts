// Where dead letters go: the dead-letter topic (original key and bytes, headers naming step, reason and
// source) and the dead_letters table (keyed by source offset, so a redelivery records nothing twice).
// applyIsolatingPoison finds the culprits of a failed chunk; the step's decision says which are poison.
import type { Sql } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import type { Headers } from './kafka.ts';
import { deadLetterMessage } from './kafka.ts';
import { valuesRejectedArePoison } from './step-outcome.ts';
import type { ErrorDecision } from './step-outcome.ts';
import { boundedReason, deadLetters } from './metrics.ts';

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
    message_headers: jsonOrNull(deps.sql, encodeHeaders(d.message.headers)),
    message_timestamp: timestampOf(d.message),
  }));
  await deps.sql`insert into dead_letters ${deps.sql(rows)} on conflict do nothing`;
  for (const d of dead) {
    deadLetters.inc({ topic: d.message.topic, step: d.step, reason: boundedReason(d.reason) });
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
 * Applies `items` in one call; if `decide` calls the error poison, applies them one at a time (in order)
 * and adds the ones it still calls poison to `dead`. An error it says to retry is thrown (the consumer
 * retries the chunk). Counts returned by `apply` are summed.
 */
export async function applyIsolatingPoison<T, R extends object>(
  items: { value: T; message: ConsumedMessage }[],
  apply: (values: T[]) => Promise<R>,
  dead: DeadLetter[],
  log: Logger,
  step = 'apply',
  decide: ErrorDecision = valuesRejectedArePoison,
): Promise<R> {
  try {
    return await apply(items.map((i) => i.value));
  } catch (err) {
    if (decide(err).type !== 'dead-letter') throw err;
    log.warn({ err }, 'chunk rejected as data; retrying message by message');
  }
  let total: R | null = null;
  for (const item of items) {
    try {
      const r = await apply([item.value]);
      if (total === null) total = { ...r };
      else for (const k of Object.keys(r) as (keyof R)[]) (total[k] as number) += r[k] as number;
    } catch (e) {
      const outcome = decide(e);
      if (outcome.type !== 'dead-letter') throw e;
      dead.push({ message: item.message, step, reason: outcome.reason });
    }
  }
  return total ?? (await apply([]));
}

/** Kafka headers as stored in dead_letters.message_headers: [name, base64 of the value] pairs, or null. */
export function encodeHeaders(headers: Headers | undefined): [string, string][] | null {
  if (!headers) return null;
  const pairs: [string, string][] = [];
  for (const [name, v] of Object.entries(headers)) {
    for (const one of Array.isArray(v) ? v : [v]) {
      if (one !== undefined) pairs.push([name, Buffer.from(one).toString('base64')]);
    }
  }
  return pairs.length > 0 ? pairs : null;
}

function jsonOrNull(sql: Sql, v: [string, string][] | null) {
  return v === null ? null : sql.json(v);
}

/** The stored pairs back as message headers (a repeated name becomes an array). */
export function decodeHeaders(stored: [string, string][] | null): Headers | undefined {
  if (!stored || stored.length === 0) return undefined;
  const out: Record<string, Buffer | Buffer[]> = {};
  for (const [name, b64] of stored) {
    const value = Buffer.from(b64, 'base64');
    const prev = out[name];
    out[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

function timestampOf(m: ConsumedMessage): Date | null {
  const ms = Number(m.timestamp);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms) : null;
}
