// Process entry for the ledger worker: consumes the `ledger` topic (balance movements published by the
// sale, refund and mark-paid paths, keyed by partner) and applies each entry_key once.
//   parse → apply the chunk in one transaction → dead letters
// A message that is not a valid ledger effect, or that Postgres rejects as data (a missing partner, a
// partner-program of another partner), is dead-lettered with its original bytes and the reason, and the
// partition moves on. Anything else throws: the runtime retries the chunk and Kafka redelivers it, which is
// harmless because entries are keyed by entry_key.
import { runWorker } from '../../../shared/worker-runtime.ts';
import type { WorkerContext, WorkerParts } from '../../../shared/worker-runtime.ts';
import { isDataError } from '../../../shared/db.ts';
import { parseEffect } from '../../../shared/commands.ts';
import type { LedgerEffect } from '../../../shared/commands.ts';
import { deadLetterMessage } from '../../../shared/kafka.ts';
import type { ConsumedMessage } from '../../../shared/kafka.ts';
import { createApplyLedgerStep } from './apply.ts';

interface DeadLetter {
  message: ConsumedMessage;
  step: 'parse' | 'apply';
  reason: string;
}

async function build(ctx: WorkerContext): Promise<WorkerParts> {
  const { sql, log, producer, topics } = ctx;
  const apply = createApplyLedgerStep({ sql });
  const zero = () => ({ messages: 0, applied: 0, duplicates: 0, deadLetters: 0 });
  let counts = zero();

  async function deadLetter(dead: DeadLetter[]): Promise<void> {
    // Topic first (the operator's replay source), then the table (keyed by source offset, so a redelivered
    // chunk records nothing twice).
    await Promise.all(dead.map((d) => producer.send(topics.deadLetter, deadLetterMessage(d))));
    const rows = dead.map((d) => ({
      source_topic: d.message.topic,
      source_partition: d.message.partition,
      source_offset: d.message.offset,
      step: d.step,
      reason: d.reason.slice(0, 1000),
      message_key: d.message.key,
      payload: d.message.value,
    }));
    await sql`insert into dead_letters ${sql(rows)} on conflict do nothing`;
    counts.deadLetters += dead.length;
    for (const d of dead) {
      log.warn(
        { step: d.step, reason: d.reason, partition: d.message.partition, offset: d.message.offset },
        'ledger message dead-lettered',
      );
    }
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const valid: { effect: LedgerEffect; message: ConsumedMessage }[] = [];
    for (const message of messages) {
      const effect = parseEffect(message.value);
      if (typeof effect === 'string') dead.push({ message, step: 'parse', reason: effect });
      else if (effect.topic !== 'ledger') {
        dead.push({ message, step: 'parse', reason: `expected a ledger effect, got ${effect.topic}` });
      } else valid.push({ effect, message });
    }

    let applied = 0;
    let duplicates = 0;
    try {
      ({ applied, duplicates } = await apply(valid.map((v) => v.effect)));
    } catch (err) {
      if (!isDataError(err)) throw err;
      // Postgres (or the step) refused something in the chunk as data: find the culprits one at a time.
      // Message order is kept, so the clamp sees the same balances as it would have in the chunk.
      log.warn({ err }, 'ledger chunk rejected as data; retrying message by message');
      for (const v of valid) {
        try {
          const r = await apply([v.effect]);
          applied += r.applied;
          duplicates += r.duplicates;
        } catch (e) {
          if (!isDataError(e)) throw e;
          dead.push({ message: v.message, step: 'apply', reason: (e as Error).message });
        }
      }
    }

    if (dead.length > 0) await deadLetter(dead);
    counts.messages += messages.length;
    counts.applied += applied;
    counts.duplicates += duplicates;
  }

  function status(): Record<string, unknown> | null {
    if (counts.messages === 0 && counts.deadLetters === 0) return null;
    const s = counts;
    counts = zero();
    return s;
  }

  return { handle, status };
}

await runWorker({ name: 'ledger-worker', topic: 'ledger', build });
