// The one chunk runner of every worker that applies its topic's messages as values: parse each message into
// a step outcome, optionally enrich the value (a second step per message, local work), apply the chunk's
// values in one call, dead-letter what does not parse or enrich and what the apply step calls poison
// (applyIsolatingPoison finds the culprits), hand the messages of another kind on the same topic to their
// own handler (the clicks topic's leads, behind their clicks), count. A worker states its steps
// (MessageSteps) and the worker runtime runs them; only the command handler (leads, sales, refunds with an
// answer) brings its own `handle`. See docs/pipeline.md "Step outcomes".
import type { Logger } from '../logger.ts';
import type { Sql } from '../db/sql.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import { applyIsolatingPoison, writeDeadLetters } from './dead-letters.ts';
import type { DeadLetter } from './dead-letters.ts';
import type { ErrorDecision, StepOutcome } from './step-outcome.ts';

/** Figures of a chunk for the status line: counts by name. */
export type Figures = Record<string, number>;

/**
 * A worker's steps: `parse` → `enrich` (optional) → `apply`. P is what parse yields, T what apply takes
 * (the same without `enrich`), R the figures apply returns.
 */
export interface MessageSteps<T, R extends object = Figures, P = T> {
  /** One message: ok(value), or deadLetter(reason) when it can never be applied; retry(reason) fails the chunk. */
  parse(message: ConsumedMessage): StepOutcome<P>;
  /**
   * One parsed value, local work (the click worker's user agent and geo): ok(value) for `apply`,
   * deadLetter(reason) (step `enrich`) or retry(reason), which fails the chunk. Without it, P is T.
   */
  enrich?(value: P): StepOutcome<T>;
  /** Applies the chunk's values (one transaction, or none); returns its figures (numbers only). */
  apply(values: T[]): Promise<R>;
  /** The apply step's name in dead letters and their metric (default `apply`). */
  applyStep?: string;
  /** What an error of `apply` means for a message: poison or retry (default: values Postgres rejects). */
  decide?: ErrorDecision;
  /**
   * Messages of another kind on the same topic, which these steps do not see: `handle` gets them (in
   * order) after the chunk's values are applied and its dead letters written, so one that depends on a
   * value of the same chunk finds it committed (a lead behind its click).
   */
  divert?: {
    matches(message: ConsumedMessage): boolean;
    handle(messages: ConsumedMessage[]): Promise<void>;
  };
  /**
   * The status line from the figures since the last line and those since the start (both with `messages`
   * and `deadLetters`); default: the figures since the last line.
   */
  status?(since: Figures, total: Figures): Record<string, unknown>;
}

export interface StepDeps {
  sql: Sql;
  log: Logger;
  producer: BatchingProducer;
  deadLetterTopic: string;
}

/** The chunk handler and the status-line figures of a worker's steps. */
export function runSteps<T, R extends object, P = T>(steps: MessageSteps<T, R, P>, deps: StepDeps) {
  let figures: Figures = {};
  const total: Figures = {};
  const add = (r: object) => {
    for (const [k, v] of Object.entries(r)) {
      if (typeof v !== 'number') continue;
      figures[k] = (figures[k] ?? 0) + v;
      total[k] = (total[k] ?? 0) + v;
    }
  };
  const { divert, enrich } = steps;

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const valid: { value: T; message: ConsumedMessage }[] = [];
    const diverted: ConsumedMessage[] = [];
    for (const message of messages) {
      if (divert?.matches(message)) {
        diverted.push(message);
        continue;
      }
      const parsed = steps.parse(message);
      if (parsed.type === 'dead-letter') {
        dead.push({ message, step: 'parse', reason: parsed.reason });
        continue;
      }
      if (parsed.type !== 'ok') throw new Error(`parse: ${parsed.reason}`);
      // Without enrich, P is T (MessageSteps).
      const enriched = enrich ? enrich(parsed.value) : (parsed as unknown as StepOutcome<T>);
      if (enriched.type === 'ok') valid.push({ value: enriched.value, message });
      else if (enriched.type === 'dead-letter')
        dead.push({ message, step: 'enrich', reason: enriched.reason });
      else throw new Error(`enrich: ${enriched.reason}`);
    }
    const applied = await applyIsolatingPoison(
      valid,
      (values) => steps.apply(values),
      dead,
      deps.log,
      steps.applyStep,
      steps.decide,
    );
    await writeDeadLetters(deps, dead);
    if (divert && diverted.length > 0) await divert.handle(diverted);
    add({ messages: messages.length, deadLetters: dead.length });
    add(applied);
  }

  /** The status line since the last call, or null when no message came. */
  function status(): Record<string, unknown> | null {
    if (!figures.messages) return null;
    const s = figures;
    figures = {};
    return steps.status ? steps.status(s, total) : s;
  }

  return { handle, status };
}
