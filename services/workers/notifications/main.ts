// Process entry for the notification worker: consumes the `notifications` topic (published by the sale,
// refund and mark-paid paths) and stores each notification_key once.
//   parse → insert the chunk in one statement → dead letters
// A message that is not a valid notification effect, or that Postgres rejects as data (a NUL byte, a
// missing partner or program), is dead-lettered with its original bytes and the reason, and the partition
// moves on. Anything else throws: the runtime retries the chunk and Kafka redelivers it, which is harmless
// because notifications are keyed by notification_key.
import { runWorker } from '../../../shared/worker-runtime.ts';
import type { WorkerContext, WorkerParts } from '../../../shared/worker-runtime.ts';
import { isDataError } from '../../../shared/db.ts';
import { parseEffect } from '../../../shared/commands.ts';
import type { NotificationEffect } from '../../../shared/commands.ts';
import { deadLetterMessage } from '../../../shared/kafka.ts';
import type { ConsumedMessage } from '../../../shared/kafka.ts';
import { createInsertNotificationsStep } from './apply.ts';

interface DeadLetter {
  message: ConsumedMessage;
  step: 'parse' | 'apply';
  reason: string;
}

async function build(ctx: WorkerContext): Promise<WorkerParts> {
  const { sql, log, producer, topics } = ctx;
  const insert = createInsertNotificationsStep({ sql });
  const zero = () => ({ messages: 0, inserted: 0, duplicates: 0, deadLetters: 0 });
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
        'notification message dead-lettered',
      );
    }
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const valid: { effect: NotificationEffect; message: ConsumedMessage }[] = [];
    for (const message of messages) {
      const effect = parseEffect(message.value);
      if (typeof effect === 'string') dead.push({ message, step: 'parse', reason: effect });
      else if (effect.topic !== 'notifications') {
        dead.push({ message, step: 'parse', reason: `expected a notification effect, got ${effect.topic}` });
      } else valid.push({ effect, message });
    }

    let inserted = 0;
    let duplicates = 0;
    try {
      ({ inserted, duplicates } = await insert(valid.map((v) => v.effect)));
    } catch (err) {
      if (!isDataError(err)) throw err;
      // Postgres refused something in the chunk as data: find the culprits one at a time.
      log.warn({ err }, 'notification chunk rejected as data; retrying message by message');
      for (const v of valid) {
        try {
          const r = await insert([v.effect]);
          inserted += r.inserted;
          duplicates += r.duplicates;
        } catch (e) {
          if (!isDataError(e)) throw e;
          dead.push({ message: v.message, step: 'apply', reason: (e as Error).message });
        }
      }
    }

    if (dead.length > 0) await deadLetter(dead);
    counts.messages += messages.length;
    counts.inserted += inserted;
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

await runWorker({ name: 'notification-worker', topic: 'notifications', build });
