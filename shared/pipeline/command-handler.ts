// Applies commands with an answer (lead, sale, refund), one transaction per chunk: an optimistic pass, and a
// careful pass (a savepoint per command) after any failure. Why and how: docs/pipeline.md.
import type { Sql, Tx } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { BatchingProducer, ConsumedMessage } from './kafka.ts';
import type { Command, Effect } from '../contracts/commands.ts';
import { requestHashOf, requestIdOf, tokenCheckOf } from '../contracts/commands.ts';
import {
  findOutcome,
  findOutcomes,
  notifyOutcome,
  notifyOutcomes,
  recordOutcome,
  recordOutcomes,
} from './outcomes.ts';
import { percentile } from '../stats.ts';
import { writeDeadLetters } from './dead-letters.ts';
import type { DeadLetter } from './dead-letters.ts';
import { RollupBuffer } from '../rollups/dal.ts';
import { commandOutcomes, outcomeLabels } from './metrics.ts';
import { valuesRejectedArePoison } from './step-outcome.ts';
import type { ErrorDecision } from './step-outcome.ts';

export const FAILURE_STRINGS = {
  lead: 'Lead tracking failed',
  sale: 'Sale tracking failed',
  refund: 'Refund tracking failed',
  processor_event: 'Processor event failed',
} as const;

export interface Applied {
  programId: number | null;
  statusCode: number;
  body: Record<string, unknown>;
  /** The command's ledger entries, published after its commit (and again with a replayed outcome). */
  effects?: Effect[];
}

/** What an applier may use beyond its transaction. */
export interface ApplyContext {
  /** Daily-rollup deltas; kept only if the command is kept. */
  rollups: RollupBuffer;
  /**
   * True on the careful pass: the applier should isolate a step that may fail without undoing the
   * command (the commission after its sale) in a savepoint of its own. On the optimistic pass any error
   * rolls the chunk back and it is applied again carefully.
   */
  careful: boolean;
  /** Per-chunk memo (e.g. a program row read by every command of the chunk). */
  memo: Map<string, unknown>;
}

export interface CommandApplier<C extends Command> {
  kind: C['type'];
  parse(bytes: Buffer | null): C | string;
  /** Applies the command inside `tx` and returns its answer; throws only for infrastructure failures. */
  apply(tx: Tx, cmd: C, ctx: ApplyContext): Promise<Applied>;
  /**
   * Optional set-based form for the optimistic pass: applies `cmds` in one go (a few multi-row statements
   * for the whole chunk) and returns their answers in order, exactly what `apply` called on each in turn
   * would have returned and written. Throws `CarefulPassNeeded` (or lets a statement error through) when it
   * meets something only the per-command path handles; the chunk is then rolled back and applied carefully.
   */
  applyBatch?(tx: Tx, cmds: C[], ctx: ApplyContext): Promise<Applied[]>;
  /**
   * Optional wait, before the chunk's transaction, for what its commands need to find (a sale's click that
   * the click pipeline has not stored yet). Called outside any transaction, with the commands that parse:
   * a wait must never hold a lock (ARCHITECTURE: a transaction sleeping on row locks stalls every other
   * chunk that needs them). Bounded; `apply` then decides with what is there.
   */
  prepare?(sql: Sql, cmds: C[]): Promise<void>;
  /**
   * What an error `apply` threw on the careful pass means for its command: dead-letter (its caller is
   * answered 500 with the kind's failure string) or retry. Default: values Postgres rejects are poison. A
   * race the applier can recognise (a unique violation a concurrent command caused) it answers itself.
   */
  decide?: ErrorDecision;
}

/** The answer to a command whose tracking token was regenerated or whose program was deleted meanwhile. */
export const INVALID_TOKEN = 'Invalid tracking token';

/**
 * The request_ids of `cmds` whose tracking token is no longer their program's live token. Read inside the
 * chunk's transaction, after the command was produced: a regeneration (or deletion) that committed before
 * the request started is seen, whatever the ingress's cache still held (spec 4.8, "immediately").
 */
export async function staleTokens(tx: Tx, cmds: Command[]): Promise<Set<string>> {
  const checks = cmds.flatMap((c) => {
    const check = tokenCheckOf(c);
    return check ? [{ requestId: c.request_id, ...check }] : [];
  });
  if (checks.length === 0) return new Set();
  const ids = [...new Set(checks.map((c) => String(c.programId)))];
  const rows = await tx<{ id: string; token_hash: string | null }[]>`
    select id, encode(api_token_hash, 'hex') as token_hash from programs
    where id = any(${ids}::bigint[]) and deleted_at is null`;
  const live = new Map(rows.map((r) => [Number(r.id), r.token_hash]));
  return new Set(checks.filter((c) => live.get(c.programId) !== c.tokenHash).map((c) => c.requestId));
}

const refused = (cmd: Command): Applied => ({
  programId: tokenCheckOf(cmd)?.programId ?? null,
  statusCode: 401,
  body: { error: INVALID_TOKEN },
});

const hashOf = (cmd: Command): string | null => ('request_hash' in cmd ? (cmd.request_hash ?? null) : null);

/** Thrown by a set-based applier to hand its chunk to the careful, per-command pass. */
export class CarefulPassNeeded extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CarefulPassNeeded';
  }
}

export interface CommandHandlerDeps {
  sql: Sql;
  log: Logger;
  producer: BatchingProducer;
  topics: { deadLetter: string; ledger: string };
}

export interface CommandStats {
  applied: number;
  replayed: number;
  deadLetters: number;
  latencySamples: number[];
}

/**
 * An error Postgres raised about a statement (a value it rejects, a replay hitting the outcome key, a
 * trigger's exception): the careful pass isolates it. Not: connection failures, deadlocks and
 * serialization failures (class 40), resources (53), operator intervention (57), system errors (58): those
 * are retried by the consumer as they are.
 */
function isStatementError(err: unknown): boolean {
  const e = err as { name?: string; code?: string } | null;
  return e?.name === 'PostgresError' && typeof e.code === 'string' && !/^(08|40|53|57|58)/.test(e.code);
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
  const decide = applier.decide ?? valuesRejectedArePoison;

  async function answerFailure(tx: Tx, requestId: string | null, requestHash: string | null): Promise<void> {
    // Answer the waiting caller instead of leaving it to time out.
    if (requestId === null || (await findOutcome(tx, requestId))) return;
    await recordOutcome(tx, {
      requestId,
      kind: applier.kind,
      programId: null,
      statusCode: 500,
      body: { error: FAILURE_STRINGS[applier.kind] },
      requestHash,
    });
  }

  /**
   * A command's ledger entries, to the ledger worker. Its notifications are outbox rows of its transaction
   * (shared/db/notifications.ts); a notification effect in an outcome recorded before that is not sent again.
   */
  async function publish(effects: Effect[]): Promise<void> {
    await Promise.all(
      effects.flatMap((e) =>
        e.topic === 'ledger'
          ? [producer.send(topics.ledger, { key: String(e.partner_id), value: JSON.stringify(e) })]
          : [],
      ),
    );
  }

  /** The command, or null after dead-lettering it and answering its caller (when it can be identified). */
  async function parseOrAnswer(tx: Tx, message: ConsumedMessage, dead: DeadLetter[]): Promise<C | null> {
    let cmd: C | string;
    try {
      cmd = applier.parse(message.value);
    } catch (err) {
      // A parser bug or a value it cannot walk: still this message's fault, so dead-lettered, not retried.
      cmd = `parse failed: ${(err as Error).message}`;
    }
    if (typeof cmd !== 'string') return cmd;
    dead.push({ message, step: 'parse', reason: cmd });
    await answerFailure(tx, requestIdOf(message.value), requestHashOf(message.value));
    return null;
  }

  /** Applies the command and records its outcome (with its NOTIFY); returns the effects to publish. */
  async function applyAndRecord(
    tx: Tx,
    cmd: C,
    ctx: ApplyContext,
  ): Promise<{ effects: Effect[]; answer: Applied }> {
    const result = (await staleTokens(tx, [cmd])).size > 0 ? refused(cmd) : await applier.apply(tx, cmd, ctx);
    await recordOutcome(tx, {
      requestId: cmd.request_id,
      kind: applier.kind,
      programId: result.programId,
      statusCode: result.statusCode,
      body: result.body,
      effects: result.effects ?? [],
      requestHash: hashOf(cmd),
    });
    return { effects: result.effects ?? [], answer: result };
  }

  interface ChunkResult {
    dead: DeadLetter[];
    effects: Effect[];
    latencies: number[];
    applied: number;
    replayed: number;
    /** The answers recorded (not replays), counted once the transaction committed. */
    answers: { statusCode: number; body: Record<string, unknown> }[];
  }

  /**
   * The fast path: no savepoints; the applier's set-based form when it has one, and one statement for all
   * the outcomes. Redeliveries (a command whose outcome is recorded, or a second copy in the chunk: a
   * replay after a crash, Stripe sending an event again) are found with one read and answered as the
   * careful pass would, without applying them. Any error aborts it (the careful pass follows).
   */
  async function applyOptimistically(messages: ConsumedMessage[]): Promise<ChunkResult> {
    const r: ChunkResult = { dead: [], effects: [], latencies: [], applied: 0, replayed: 0, answers: [] };
    await sql.begin(async (tx) => {
      const ctx: ApplyContext = { rollups: new RollupBuffer(), careful: false, memo: new Map() };
      const parsed: C[] = [];
      for (const message of messages) {
        const cmd = await parseOrAnswer(tx, message, r.dead);
        if (cmd !== null) parsed.push(cmd);
      }
      // Not pipelined with the token read below: with every backend terminated mid-chunk (chaos
      // pg-terminate), a pipelined pair is the suspect of one run whose click worker stopped applying leads.
      const recorded = await findOutcomes(
        tx,
        parsed.map((c) => c.request_id),
      );
      await notifyOutcomes(tx, recorded);
      for (const o of recorded.values()) r.effects.push(...o.effects);
      const cmds: C[] = [];
      const inChunk = new Set<string>();
      for (const cmd of parsed) {
        // A second copy in the chunk is answered by the first one's notification.
        if (recorded.has(cmd.request_id) || inChunk.has(cmd.request_id)) r.replayed++;
        else {
          inChunk.add(cmd.request_id);
          cmds.push(cmd);
        }
      }
      const stale = await staleTokens(tx, cmds);
      const live = cmds.filter((c) => !stale.has(c.request_id));
      let liveResults: Applied[] = [];
      if (applier.applyBatch && live.length > 0) liveResults = await applier.applyBatch(tx, live, ctx);
      else for (const cmd of live) liveResults.push(await applier.apply(tx, cmd, ctx));
      let next = 0;
      const results = cmds.map((c) => (stale.has(c.request_id) ? refused(c) : liveResults[next++]!));
      await recordOutcomes(
        tx,
        cmds.map((cmd, i) => ({
          requestId: cmd.request_id,
          kind: applier.kind,
          programId: results[i]!.programId,
          statusCode: results[i]!.statusCode,
          body: results[i]!.body,
          effects: results[i]!.effects ?? [],
          requestHash: hashOf(cmd),
        })),
      );
      for (const [i, cmd] of cmds.entries()) {
        r.effects.push(...(results[i]!.effects ?? []));
        r.applied++;
        r.latencies.push(Date.now() - cmd.ts);
        r.answers.push(results[i]!);
      }
      await ctx.rollups.flush(tx);
    });
    return r;
  }

  /** The careful pass: a savepoint per command; replays re-announced; data errors isolated. */
  async function applyCarefully(messages: ConsumedMessage[]): Promise<ChunkResult> {
    const r: ChunkResult = { dead: [], effects: [], latencies: [], applied: 0, replayed: 0, answers: [] };
    await sql.begin(async (tx) => {
      const rollups = new RollupBuffer();
      const memo = new Map<string, unknown>();
      for (const message of messages) {
        const cmd = await parseOrAnswer(tx, message, r.dead);
        if (cmd === null) continue;
        const local = new RollupBuffer();
        try {
          const done = await tx.savepoint(async (sp) => {
            const existing = await findOutcome(sp, cmd.request_id);
            if (existing) {
              await notifyOutcome(sp, cmd.request_id, existing);
              return { effects: existing.effects, answer: null, replay: true };
            }
            const applied = await applyAndRecord(sp, cmd, { rollups: local, careful: true, memo });
            return { effects: applied.effects, answer: applied.answer, replay: false };
          });
          rollups.merge(local);
          r.effects.push(...done.effects);
          if (done.replay) r.replayed++;
          else {
            r.applied++;
            if (done.answer) r.answers.push(done.answer);
            r.latencies.push(Date.now() - cmd.ts);
          }
        } catch (err) {
          if (isOutcomeConflict(err)) {
            // Another delivery of the same command committed first (a rebalance overlap): its answer stands.
            const existing = await findOutcome(tx, cmd.request_id);
            if (existing) {
              await notifyOutcome(tx, cmd.request_id, existing);
              r.effects.push(...existing.effects);
            }
          } else {
            const outcome = decide(err);
            if (outcome.type !== 'dead-letter') throw err;
            r.dead.push({ message, step: 'apply', reason: outcome.reason });
            await answerFailure(tx, cmd.request_id, requestHashOf(message.value));
          }
        }
      }
      await rollups.flush(tx);
    });
    return r;
  }

  /** The commands of the chunk that parse (the others are dead-lettered inside the transaction). */
  function parseQuietly(messages: ConsumedMessage[]): C[] {
    const cmds: C[] = [];
    for (const m of messages) {
      try {
        const cmd = applier.parse(m.value);
        if (typeof cmd !== 'string') cmds.push(cmd);
      } catch {
        // parseOrAnswer dead-letters it.
      }
    }
    return cmds;
  }

  async function handle(messages: ConsumedMessage[]): Promise<void> {
    if (applier.prepare) await applier.prepare(sql, parseQuietly(messages));
    let r: ChunkResult;
    try {
      r = await applyOptimistically(messages);
    } catch (err) {
      if (!(err instanceof CarefulPassNeeded) && !isStatementError(err)) throw err;
      r = await applyCarefully(messages);
    }
    stats.applied += r.applied;
    for (const a of r.answers) commandOutcomes.inc(outcomeLabels(applier.kind, a));
    stats.replayed += r.replayed;
    for (const l of r.latencies) if (stats.latencySamples.length < 100_000) stats.latencySamples.push(l);
    if (r.effects.length > 0) await publish(r.effects);
    if (r.dead.length > 0) {
      await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, r.dead);
      stats.deadLetters += r.dead.length;
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
