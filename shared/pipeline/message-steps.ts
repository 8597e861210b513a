// The consume loop of every worker that applies its topic's messages as values: parse each message into a
// step outcome, apply the chunk's values in one call, dead-letter what does not parse and what the apply step
// calls poison (applyIsolatingPoison finds the culprits), count. A worker states its steps (MessageSteps)
// and the worker runtime runs them; the command handler (leads, sales, refunds with an answer) and the click
// pipeline bring their own `handle`. See docs/pipeline.md "Step outcomes".
import type { Logger } from '../logger.ts';
import type { Sql } from '../db/sql.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import { applyIsolatingPoison, writeDeadLetters } from './dead-letters.ts';
import type { DeadLetter } from './dead-letters.ts';
import type { ErrorDecision, StepOutcome } from './step-outcome.ts';

/** Figures of a chunk for the status line: counts by name. */
export type Figures = Record<string, number>;

export interface MessageSteps<T, R extends object = Figures> {
  /** One message: ok(value), or deadLetter(reason) when it can never be applied; retry(reason) fails the chunk. */
  parse(message: ConsumedMessage): StepOutcome<T>;
  /** Applies the chunk's values (one transaction, or none); returns its figures (numbers only). */
  apply(values: T[]): Promise<R>;
  /** The apply step's name in dead letters and their metric (default `apply`). */
  applyStep?: string;
  /** What an error of `apply` means for a message: poison or retry (default: values Postgres rejects). */
  decide?: ErrorDecision;
}

export interface StepDeps {
  sql: Sql;
  log: Logger;
  producer: BatchingProducer;
  deadLetterTopic: string;
}

/** The chunk handler and the status-line figures of a worker's steps. */
export function runSteps<T, R extends object>(steps: MessageSteps<T, R>, deps: StepDeps) {
  let figures: Figures = {};
  const add = (r: object) => {
    for (const [k, v] of Object.entries(r)) if (typeof v === 'number') figures[k] = (figures[k] ?? 0) + v;
  };

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const valid: { value: T; message: ConsumedMessage }[] = [];
    for (const message of messages) {
      const parsed = steps.parse(message);
      if (parsed.type === 'ok') valid.push({ value: parsed.value, message });
      else if (parsed.type === 'dead-letter') dead.push({ message, step: 'parse', reason: parsed.reason });
      else throw new Error(`parse: ${parsed.reason}`);
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
    add({ messages: messages.length, deadLetters: dead.length });
    add(applied);
  }

  /** Figures since the last call, or null when no message came. */
  function status(): Figures | null {
    if (!figures.messages) return null;
    const s = figures;
    figures = {};
    return s;
  }

  return { handle, status };
}
