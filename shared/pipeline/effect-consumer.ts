// The steps of a worker that consumes one kind of effect (ledger entries, notifications): parse each message
// as that effect (anything else is poison), apply the chunk with the worker's step. The worker runtime runs
// them (message-steps.ts).
import { parseEffect } from '../contracts/commands.ts';
import type { Effect } from '../contracts/commands.ts';
import type { WorkerContext, WorkerParts } from './worker-runtime.ts';
import { deadLetter, ok } from './step-outcome.ts';
import type { StepOutcome } from './step-outcome.ts';
import type { ConsumedMessage } from './kafka.ts';

export function effectConsumer<K extends Effect['topic'], R extends object>(
  topic: K,
  createStep: (deps: {
    sql: WorkerContext['sql'];
    cfg: WorkerContext['cfg'];
  }) => (effects: Extract<Effect, { topic: K }>[]) => Promise<R>,
) {
  const parse = (message: ConsumedMessage): StepOutcome<Extract<Effect, { topic: K }>> => {
    const effect = parseEffect(message.value);
    if (typeof effect === 'string') return deadLetter(effect);
    if (effect.topic !== topic) return deadLetter(`expected a ${topic} effect, got ${effect.topic}`);
    return ok(effect as Extract<Effect, { topic: K }>);
  };
  return async function build(ctx: WorkerContext): Promise<WorkerParts> {
    return { steps: { parse, apply: createStep({ sql: ctx.sql, cfg: ctx.cfg }) } };
  };
}
