// What lead, sale and refund share: the request_id (from the Idempotency-Key when there is one), and the
// answer, which is the outcome the owning worker records for that request_id (docs/ingress.md).
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, HttpError, jsonBody } from '../../../shared/http/server.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { tokenCheckOf, tokenProgramOf } from '../../../shared/contracts/commands.ts';
import type { Command } from '../../../shared/contracts/commands.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { findOutcome } from '../../../shared/pipeline/outcomes.ts';
import type { Outcome } from '../../../shared/pipeline/outcomes.ts';
import { FAILURE_STRINGS, INVALID_TOKEN } from '../../../shared/pipeline/command-handler.ts';
import { RECORD_TYPE_HEADER } from '../../../shared/contracts/topics.ts';
import type { IngressDeps } from '../deps.ts';
import { outageWarning } from '../../../shared/pipeline/dependencies.ts';

export type CommandKind = Command['type'];

/** The request_id of a command: a retry with the same Idempotency-Key gets the same id, hence its answer. */
export function requestIdFor(
  idempotencyKey: string | string[] | undefined,
  kind: CommandKind,
  scope: number | null,
  mint: () => string = randomUUID,
): string {
  if (idempotencyKey === undefined) return mint();
  if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 200) {
    throw new HttpError(400, 'Idempotency-Key must be 1 to 200 characters');
  }
  return `${kind}:${scope ?? 'anon'}:${idempotencyKey}`;
}

/** CONTRACT "Retries and idempotency": the answer to a key reused with other parameters. */
export const IDEMPOTENCY_KEY_REUSED = 'Idempotency-Key was used with a different request';

/** JSON with every object's keys sorted: the same parameters give the same text whatever their order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isPlainObject(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The hash of a request's parameters (its kind and its JSON body, canonical), recorded with the outcome of
 * an Idempotency-Key request: a retry with the same parameters replays the outcome, a reuse of the key with
 * other parameters is refused (as Stripe does). The scope (program) is already part of the request_id.
 */
export function requestFingerprint(kind: CommandKind, body: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${kind}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** Whether a recorded outcome answers this request (an outcome recorded without a hash cannot tell). */
export function answersRequest(outcome: Outcome, requestHash: string | null | undefined): boolean {
  return !outcome.requestHash || !requestHash || outcome.requestHash === requestHash;
}

/** Seconds a caller waits before retrying: a command still queued past the deadline, Kafka unreachable. */
export const RETRY_AFTER_SECONDS = '2';

/** The 503 body when the worker has not answered within the deadline: the command is still queued. */
export function stillProcessing(kind: CommandKind): { error: string } {
  return {
    error: `The ${kind} was accepted and is still being processed; retry the same request to get its result`,
  };
}

export const STILL_PROCESSING_SCHEMA = {
  ...ERROR_SCHEMA,
  description:
    'Still processing past the deadline, or Kafka/Postgres unreachable (`<Kind> tracking failed`); retry after ' +
    'the Retry-After header (with the same Idempotency-Key to be safe).',
};

/** One line every few seconds while Kafka is down, not one per refused command. */
const unacked = outageWarning();

export type CommandDeps = Pick<IngressDeps, 'sql' | 'producer' | 'waiter' | 'liveness' | 'commandDeadlineMs'>;

/**
 * Produces the command and answers with its recorded outcome, or 503 with Retry-After past the deadline,
 * or sooner when no live worker owns the command's partition (a killed or restarting worker).
 * With an Idempotency-Key an already recorded outcome is answered at once, without producing again.
 */
export async function sendCommand(
  deps: CommandDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  topic: string,
  key: string,
  command: Command,
): Promise<FastifyReply> {
  let cmd = command;
  let requestHash: string | null = null;
  const token = req.trackingToken;
  // The worker checks it against the program's live token (shared/pipeline/command-handler.ts).
  if (token && cmd.type !== 'processor_event' && tokenProgramOf(cmd) === token.programId) {
    cmd = { ...cmd, token_hash: token.hash };
  }
  if (req.headers['idempotency-key'] !== undefined && cmd.type !== 'processor_event') {
    requestHash = requestFingerprint(cmd.type, jsonBody(req));
    cmd = { ...cmd, request_hash: requestHash };
    const done = await findOutcome(deps.sql, cmd.request_id);
    if (done) {
      // A replay is answered here, without the worker: check the token against Postgres ourselves.
      const check = tokenCheckOf(cmd);
      if (check && !(await tokenIsLive(deps.sql, check.programId, check.tokenHash))) {
        throw new HttpError(401, INVALID_TOKEN);
      }
      return answer(reply, done, requestHash);
    }
  }
  const pending = deps.waiter.wait(cmd.request_id, deps.commandDeadlineMs);
  try {
    // The type header: a lead shares the clicks topic, and the click worker tells it apart by this.
    await deps.producer.send(topic, {
      key,
      value: JSON.stringify(cmd),
      headers: { [RECORD_TYPE_HEADER]: cmd.type },
    });
  } catch (err) {
    // Kafka unreachable or slower than PRODUCE_TIMEOUT_MS: a retry (same Idempotency-Key) is safe.
    pending.cancel();
    unacked(req.log, err, `${cmd.type} not acknowledged by Kafka`);
    return reply
      .code(503)
      .header('retry-after', RETRY_AFTER_SECONDS)
      .send({ error: FAILURE_STRINGS[cmd.type] });
  }
  // Waiting for the outcome is pointless once no live worker owns the partition (liveness) or once Kafka
  // stops acknowledging this process's sends (the producer's circuit opens: a broker died after this
  // command was written, and a worker needs Kafka to fetch it and to write its effects). Either way the
  // command stays in Kafka: the worker applies it when it can, and a retry with the same Idempotency-Key
  // then gets its outcome.
  const orphaned = deps.liveness.watch(topic, key);
  const kafkaDown = deps.producer.whenUnavailable();
  const outcome = await Promise.race([
    pending.promise,
    orphaned.promise.then(() => null),
    kafkaDown.promise.then(() => null),
  ]);
  orphaned.cancel();
  kafkaDown.cancel();
  if (!outcome) {
    pending.cancel();
    return reply.code(503).header('retry-after', RETRY_AFTER_SECONDS).send(stillProcessing(cmd.type));
  }
  // Two requests under one key wait on one request_id: the outcome tells whose parameters it answers.
  return answer(reply, outcome, requestHash);
}

function answer(reply: FastifyReply, outcome: Outcome, requestHash: string | null): FastifyReply {
  if (!answersRequest(outcome, requestHash)) return reply.code(409).send({ error: IDEMPOTENCY_KEY_REUSED });
  return reply.code(outcome.statusCode).send(outcome.body);
}

/** Whether the program is live and this (hex SHA-256) is its tracking token, read from Postgres. */
export async function tokenIsLive(sql: Sql, programId: number, tokenHash: string): Promise<boolean> {
  const rows = await sql`
    select 1 from programs
    where id = ${programId} and api_token_hash = decode(${tokenHash}, 'hex') and deleted_at is null`;
  return rows.length > 0;
}
