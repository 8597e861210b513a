// Applies commands with an answer, one transaction per command, in partition order:
//   parse → (already answered? re-announce) → apply + record outcome in one transaction → publish effects
// Effects (ledger entries, notifications) are published after the commit and before the offsets are
// committed; a redelivered command finds its outcome row and publishes the same effects again, which their
// consumers apply once (unique keys). A message that cannot be parsed, or that Postgres rejects as data,
// is dead-lettered, and its caller, if it can be identified, is answered 500 with the kind's error string.
import type { Sql, Tx } from './db.ts';
import { isDataError } from './db.ts';
import type { Logger } from './logger.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import type { Command, Effect } from './commands.ts';
import { requestIdOf } from './commands.ts';
import { findOutcome, notifyOutcome, recordOutcome } from './outcomes.ts';
import { percentile } from './stats.ts';
import { writeDeadLetters } from './dead-letters.ts';

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

export interface CommandApplier<C extends Command> {
  kind: C['type'];
  parse(bytes: Buffer | null): C | string;
  /** Applies the command inside `tx` and returns its answer; throws only for infrastructure failures. */
  apply(tx: Tx, cmd: C): Promise<Applied>;
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

  async function deadLetter(message: ConsumedMessage, step: string, reason: string): Promise<void> {
    await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, [
      { message, step, reason },
    ]);
    stats.deadLetters++;
    const requestId = requestIdOf(message.value);
    if (requestId) {
      // Answer the waiting caller instead of leaving it to time out.
      await sql
        .begin(async (tx) => {
          const existing = await findOutcome(tx, requestId);
          if (!existing) {
            await recordOutcome(tx, {
              requestId,
              kind: applier.kind,
              programId: null,
              statusCode: 500,
              body: { error: FAILURE_STRINGS[applier.kind] },
            });
          }
        })
        .catch((err: unknown) => log.error({ err, requestId }, 'could not record the failure outcome'));
    }
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

  async function handleOne(message: ConsumedMessage): Promise<void> {
    const cmd = applier.parse(message.value);
    if (typeof cmd === 'string') return deadLetter(message, 'parse', cmd);
    let effects: Effect[] = [];
    try {
      effects = await sql.begin(async (tx) => {
        const existing = await findOutcome(tx, cmd.request_id);
        if (existing) {
          stats.replayed++;
          await notifyOutcome(tx, cmd.request_id, existing);
          return existing.effects;
        }
        const applied = await applier.apply(tx, cmd);
        await recordOutcome(tx, {
          requestId: cmd.request_id,
          kind: applier.kind,
          programId: applied.programId,
          statusCode: applied.statusCode,
          body: applied.body,
          effects: applied.effects ?? [],
        });
        stats.applied++;
        if (stats.latencySamples.length < 100_000) stats.latencySamples.push(Date.now() - cmd.ts);
        return applied.effects ?? [];
      });
    } catch (err) {
      if (isOutcomeConflict(err)) {
        // Another delivery of the same command committed first (a rebalance overlap): its answer stands.
        const existing = await findOutcome(sql, cmd.request_id);
        if (existing) {
          await notifyOutcome(sql, cmd.request_id, existing);
          effects = existing.effects;
        }
      } else if (isDataError(err)) {
        return deadLetter(message, 'apply', (err as Error).message);
      } else {
        throw err;
      }
    }
    if (effects.length > 0) await publish(effects);
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    for (const m of messages) await handleOne(m);
  }

  return { handle, handleOne, stats };
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
