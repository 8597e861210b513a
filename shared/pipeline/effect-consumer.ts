// A worker that consumes one kind of effect (ledger entries, notifications): parse each message as that
// effect, apply the chunk with the step, dead-letter what cannot be parsed or applied, report counts.
import { parseEffect } from '../contracts/commands.ts';
import type { Effect } from '../contracts/commands.ts';
import type { ConsumedMessage } from './kafka.ts';
import type { WorkerContext, WorkerParts } from './worker-runtime.ts';
import { applyIsolatingPoison, writeDeadLetters } from './dead-letters.ts';
import type { DeadLetter } from './dead-letters.ts';

export function effectConsumer<K extends Effect['topic'], R extends object>(
  topic: K,
  createStep: (deps: {
    sql: WorkerContext['sql'];
    cfg: WorkerContext['cfg'];
  }) => (effects: Extract<Effect, { topic: K }>[]) => Promise<R>,
) {
  return async function build(ctx: WorkerContext): Promise<WorkerParts> {
    const { sql, log, producer, topics } = ctx;
    const apply = createStep({ sql, cfg: ctx.cfg });
    let counts: Record<string, number> = {};
    const add = (r: Record<string, number>) => {
      for (const [k, v] of Object.entries(r)) counts[k] = (counts[k] ?? 0) + v;
    };

    async function handle(messages: ConsumedMessage[]): Promise<void> {
      const dead: DeadLetter[] = [];
      const valid: { value: Extract<Effect, { topic: K }>; message: ConsumedMessage }[] = [];
      for (const message of messages) {
        const effect = parseEffect(message.value);
        if (typeof effect === 'string') dead.push({ message, step: 'parse', reason: effect });
        else if (effect.topic !== topic) {
          dead.push({ message, step: 'parse', reason: `expected a ${topic} effect, got ${effect.topic}` });
        } else valid.push({ value: effect as Extract<Effect, { topic: K }>, message });
      }
      add((await applyIsolatingPoison(valid, apply, dead, log)) as Record<string, number>);
      await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, dead);
      add({ messages: messages.length, deadLetters: dead.length });
    }

    function status(): Record<string, unknown> | null {
      if (!counts.messages) return null;
      const s = counts;
      counts = {};
      return s;
    }

    return { handle, status };
  };
}
