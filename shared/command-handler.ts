// Applies commands with an answer, in partition order, one transaction per chunk with a savepoint per
// command:
//   parse → (already answered? re-announce) → apply + record outcome (savepoint) → … → daily rollups → commit
//   → publish effects → dead letters
// One commit per chunk amortises the durable commit over many commands; a command that Postgres rejects as
// data rolls back only its savepoint (its NOTIFY with it) and is dead-lettered, its caller answered 500 with
// the kind's error string. Daily-rollup deltas are summed over the chunk and written last, in key order, so
// no transaction holds a rollup row while it waits for anything else. Anything else (a deadlock, Postgres
// down) throws: the consumer retries the chunk and Kafka redelivers it, which is harmless because each
// command's outcome row is its idempotency key.
// Effects (ledger entries, notifications) are published after the commit and before the offsets are
// committed; a redelivered command finds its outcome and publishes the same effects again, which their
// consumers apply once (unique keys).
import type { Sql, Tx } from './db.ts';
import { isDataError } from './db.ts';
import type { Logger } from './logger.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import type { Command, Effect } from './commands.ts';
import { requestIdOf } from './commands.ts';
import { findOutcome, notifyOutcome, recordOutcome } from './outcomes.ts';
import { percentile } from './stats.ts';
import { writeDeadLetters } from './dead-letters.ts';
import type { DeadLetter } from './dead-letters.ts';
import { RollupBuffer } from './rollups.ts';

export const FAILURE_STRINGS = {
  lead: 'Lead tracking failed',
  sale: 'Sale tracking failed',
  refund: 'Refund tracking failed',
} as const;

export interface Applied {
  programId: number | null;
  statusCode: number;
  body: Record<string, unknown>;
  effects?: Effect[];
}

/** What an applier may use beyond its transaction: the chunk's rollup buffer. */
export interface ApplyContext {
  /** Daily-rollup deltas; kept only if the command's savepoint commits. */
  rollups: RollupBuffer;
}

export interface CommandApplier<C extends Command> {
  kind: C['type'];
  parse(bytes: Buffer | null): C | string;
  /** Applies the command inside `tx` and returns its answer; throws only for infrastructure failures. */
  apply(tx: Tx, cmd: C, ctx: ApplyContext): Promise<Applied>;
}

export interface CommandHandlerDeps {
  sql: Sql;
  log: Logger;
  producer: BatchingProducer;
  topics: { deadLetter: string; ledger: string; notifications: string };
}

export interface CommandStats {
  applied: number;
  replayed: number;
  deadLetters: number;
  latencySamples: number[];
}

function isOutcomeConflict(err: unknown): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === '23505' && e.constraint_name === 'command_outcomes_pkey';
}

export function createCommandHandler<C extends Command>(
  deps: CommandHandlerDeps,
  applier: CommandApplier<C>,
) {
  const stats: CommandStats = { applied: 0, replayed: 0, deadLetters: 0, latencySamples: [] };
  const { sql, log, producer, topics } = deps;

  async function answerFailure(tx: Tx, requestId: string | null): Promise<void> {
    // Answer the waiting caller instead of leaving it to time out.
    if (requestId === null || (await findOutcome(tx, requestId))) return;
    await recordOutcome(tx, {
      requestId,
      kind: applier.kind,
      programId: null,
      statusCode: 500,
      body: { error: FAILURE_STRINGS[applier.kind] },
    });
  }

  async function publish(effects: Effect[]): Promise<void> {
    await Promise.all(
      effects.map((e) =>
        producer.send(e.topic === 'ledger' ? topics.ledger : topics.notifications, {
          key: e.topic === 'ledger' ? String(e.partner_id) : e.notification_key,
          value: JSON.stringify(e),
        }),
      ),
    );
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    const dead: DeadLetter[] = [];
    const effects: Effect[] = [];
    const latencies: number[] = [];
    let applied = 0;
    let replayed = 0;
    await sql.begin(async (tx) => {
      const rollups = new RollupBuffer();
      for (const message of messages) {
        const cmd = applier.parse(message.value);
        if (typeof cmd === 'string') {
          dead.push({ message, step: 'parse', reason: cmd });
          await answerFailure(tx, requestIdOf(message.value));
          continue;
        }
        const local = new RollupBuffer();
        try {
          const done = await tx.savepoint(async (sp) => {
            const existing = await findOutcome(sp, cmd.request_id);
            if (existing) {
              await notifyOutcome(sp, cmd.request_id, existing);
              return { effects: existing.effects, replay: true };
            }
            const result = await applier.apply(sp, cmd, { rollups: local });
            await recordOutcome(sp, {
              requestId: cmd.request_id,
              kind: applier.kind,
              programId: result.programId,
              statusCode: result.statusCode,
              body: result.body,
              effects: result.effects ?? [],
            });
            return { effects: result.effects ?? [], replay: false };
          });
          rollups.merge(local);
          effects.push(...done.effects);
          if (done.replay) replayed++;
          else {
            applied++;
            latencies.push(Date.now() - cmd.ts);
          }
        } catch (err) {
          if (isOutcomeConflict(err)) {
            // Another delivery of the same command committed first (a rebalance overlap): its answer stands.
            const existing = await findOutcome(tx, cmd.request_id);
            if (existing) {
              await notifyOutcome(tx, cmd.request_id, existing);
              effects.push(...existing.effects);
            }
          } else if (isDataError(err)) {
            dead.push({ message, step: 'apply', reason: (err as Error).message });
            await answerFailure(tx, cmd.request_id);
          } else {
            throw err;
          }
        }
      }
      await rollups.flush(tx);
    });
    stats.applied += applied;
    stats.replayed += replayed;
    for (const l of latencies) if (stats.latencySamples.length < 100_000) stats.latencySamples.push(l);
    if (effects.length > 0) await publish(effects);
    if (dead.length > 0) {
      await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, dead);
      stats.deadLetters += dead.length;
    }
  }

  return { handle, stats };
}

/** The status-line figures of a command worker since the previous line; null when idle. */
export function commandStatus(s: CommandStats): Record<string, unknown> | null {
  const lat = s.latencySamples.splice(0);
  if (lat.length === 0) return null;
  return {
    applied: s.applied,
    replayed: s.replayed,
    deadLetters: s.deadLetters,
    acceptToCommitP50Ms: percentile(lat, 50),
    acceptToCommitP99Ms: percentile(lat, 99),
  };
}
