// What lead, sale and refund share: the request_id (from the Idempotency-Key when there is one), and the
// answer, which is the outcome the owning worker records for that request_id (docs/ingress.md).
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, HttpError } from '../../../shared/http/server.ts';
import type { Command } from '../../../shared/contracts/commands.ts';
import { findOutcome } from '../../../shared/pipeline/outcomes.ts';
import { FAILURE_STRINGS } from '../../../shared/pipeline/command-handler.ts';
import type { IngressDeps } from '../deps.ts';

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

/** Seconds a caller waits before retrying a command still queued past the deadline. */
export const RETRY_AFTER_SECONDS = '2';

/** The 503 body when the worker has not answered within the deadline: the command is still queued. */
export function stillProcessing(kind: CommandKind): { error: string } {
  return {
    error: `The ${kind} was accepted and is still being processed; retry the same request to get its result`,
  };
}

export const STILL_PROCESSING_SCHEMA = {
  ...ERROR_SCHEMA,
  description: 'Still processing past the deadline; retry (Retry-After header).',
};

export type CommandDeps = Pick<IngressDeps, 'sql' | 'producer' | 'waiter' | 'commandDeadlineMs'>;

/**
 * Produces the command and answers with its recorded outcome, or 503 with Retry-After past the deadline.
 * With an Idempotency-Key an already recorded outcome is answered at once, without producing again.
 */
export async function sendCommand(
  deps: CommandDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  topic: string,
  key: string,
  cmd: Command,
): Promise<FastifyReply> {
  if (req.headers['idempotency-key'] !== undefined) {
    const done = await findOutcome(deps.sql, cmd.request_id);
    if (done) return reply.code(done.statusCode).send(done.body);
  }
  const pending = deps.waiter.wait(cmd.request_id, deps.commandDeadlineMs);
  try {
    await deps.producer.send(topic, { key, value: JSON.stringify(cmd) });
  } catch (err) {
    pending.cancel();
    req.log.error({ err }, `${cmd.type} not acknowledged by Kafka`);
    throw new HttpError(500, FAILURE_STRINGS[cmd.type]);
  }
  const outcome = await pending.promise;
  if (!outcome) {
    return reply.code(503).header('retry-after', RETRY_AFTER_SECONDS).send(stillProcessing(cmd.type));
  }
  return reply.code(outcome.statusCode).send(outcome.body);
}
