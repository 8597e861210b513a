// The intake of every processor's events (CONTRACT part three "Revenue from every processor"), the same
// steps for each with its adapter (shared/processors/): its signature headers present, the program's
// secrets (from the cache, once more from Postgres when they do not verify), the signature, the event's id,
// then the event produced to the processor-events topic (acks=all) and only then answered 200.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../shared/http/server.ts';
import { pathId } from '../../shared/http/validation.ts';
import { processorEventMessage } from '../../shared/contracts/processor-events.ts';
import { ADAPTERS } from '../../shared/processors/index.ts';
import type { Processor } from '../../shared/processors/index.ts';
import type { SignatureHeaders } from '../../shared/processors/adapter.ts';
import { isPlainObject } from '../../shared/json.ts';
import { outageWarning } from '../../shared/pipeline/dependencies.ts';
import type { TrackingCache } from './tracking-cache.ts';
import type { BatchingProducer } from '../../shared/pipeline/kafka.ts';

export interface IntakeDeps {
  cache: Pick<TrackingCache, 'webhookSecrets'>;
  producer: BatchingProducer;
  topic: string;
}

/** One line every few seconds while Kafka is down, not one per refused event. */
const unacked = outageWarning();

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

export async function processorIntake(
  processor: Processor,
  deps: IntakeDeps,
  req: FastifyRequest<{ Params: { programId: string } }>,
  reply: FastifyReply,
) {
  const adapter = ADAPTERS[processor];
  const E = adapter.errors;
  const programId = pathId(req.params.programId);
  if (Number.isNaN(programId)) throw new HttpError(404, E.programNotFound);
  const headers: SignatureHeaders = Object.fromEntries(
    adapter.signatureHeaders.map((name) => [name, header(req, name)]),
  );
  if (adapter.signatureHeaders.some((name) => headers[name] === undefined))
    throw new HttpError(400, E.missingSignature);
  // From the ingress's cache (a read of Postgres per event queued behind the workers' writes under
  // load); a signature that does not match the cached secrets is checked once more against Postgres.
  let stored = await deps.cache.webhookSecrets(programId);
  if (!stored) throw new HttpError(404, E.programNotFound);
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let event: unknown;
  try {
    event = adapter.verify(raw, headers, adapter.secrets(stored));
  } catch (err) {
    // A secret connected or changed since the cache read it verifies at once: one read of Postgres more.
    const retry = [E.badSignature, E.notConnected];
    if (!(err instanceof HttpError) || !retry.includes(err.message)) throw err;
    stored = await deps.cache.webhookSecrets(programId, true);
    if (!stored) throw new HttpError(404, E.programNotFound);
    event = adapter.verify(raw, headers, adapter.secrets(stored));
  }
  const id = adapter.identity(event, headers);
  if (!isPlainObject(event) || id.event_id === null || id.event_type === null)
    throw new HttpError(400, E.notEvent);
  const { key, message } = processorEventMessage(
    processor,
    programId,
    { event_id: id.event_id, event_type: id.event_type, livemode: id.livemode },
    adapter.eventKey(event),
    raw,
  );
  try {
    await deps.producer.send(deps.topic, { key, value: JSON.stringify(message) });
  } catch (err) {
    unacked(req.log, err, 'processor event not acknowledged by Kafka');
    return reply.code(503).header('retry-after', '2').send({ error: E.unavailable });
  }
  return { received: true };
}
