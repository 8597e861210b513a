// The intake of Paddle, Lemon Squeezy and Polar events (CONTRACT part three "Revenue from every processor"):
// the same steps as Stripe's (routes/processor-webhook.ts), with each processor's signature scheme and event id.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../../shared/http/server.ts';
import { pathId } from '../../shared/http/validation.ts';
import { eventKeyFor, processorRequestId } from '../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../shared/contracts/processor-events.ts';
import { paddleIdentity } from '../../shared/contracts/processors/paddle.ts';
import { lemonSqueezyIdentity } from '../../shared/contracts/processors/lemonsqueezy.ts';
import { isPlainObject } from '../../shared/json.ts';
import { outageWarning } from '../../shared/pipeline/dependencies.ts';
import {
  LEMONSQUEEZY_ERRORS,
  PADDLE_ERRORS,
  POLAR_ERRORS,
  verifyLemonSqueezy,
  verifyPaddle,
  verifyPolar,
} from './webhook-verify.ts';
import type { CachedWebhookSecrets, TrackingCache } from './tracking-cache.ts';
import type { BatchingProducer } from '../../shared/pipeline/kafka.ts';

export type OtherProcessor = 'paddle' | 'lemonsqueezy' | 'polar';

interface Deps {
  cache: Pick<TrackingCache, 'webhookSecrets'>;
  producer: BatchingProducer;
  topic: string;
}

const ERRORS = { paddle: PADDLE_ERRORS, lemonsqueezy: LEMONSQUEEZY_ERRORS, polar: POLAR_ERRORS } as const;

const unacked = outageWarning();

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

/** The signature headers a request must carry before anything is looked up. */
function signaturePresent(processor: OtherProcessor, req: FastifyRequest): boolean {
  if (processor === 'paddle') return header(req, 'paddle-signature') !== undefined;
  if (processor === 'lemonsqueezy') return header(req, 'x-signature') !== undefined;
  return ['webhook-id', 'webhook-timestamp', 'webhook-signature'].every((h) => header(req, h) !== undefined);
}

function verify(processor: OtherProcessor, req: FastifyRequest, raw: Buffer, secrets: string[]): unknown {
  if (processor === 'paddle') return verifyPaddle(raw, header(req, 'paddle-signature'), secrets);
  if (processor === 'lemonsqueezy') return verifyLemonSqueezy(raw, header(req, 'x-signature'), secrets);
  return verifyPolar(
    raw,
    {
      id: header(req, 'webhook-id'),
      timestamp: header(req, 'webhook-timestamp'),
      signature: header(req, 'webhook-signature'),
    },
    secrets,
  );
}

const secretsOf = (stored: CachedWebhookSecrets, processor: OtherProcessor): string[] => {
  const s = stored.others?.[processor];
  return s ? [s] : [];
};

/** The event's id, type and mode, each processor's own way; null fields make the body not an event. */
function identity(
  processor: OtherProcessor,
  req: FastifyRequest,
  event: unknown,
): { event_id: string | null; event_type: string | null; livemode: boolean } {
  if (processor === 'paddle') return { ...paddleIdentity(event), livemode: true };
  if (processor === 'lemonsqueezy') return lemonSqueezyIdentity(event);
  const type = isPlainObject(event) && typeof event.type === 'string' && event.type ? event.type : null;
  return { event_id: header(req, 'webhook-id') ?? null, event_type: type, livemode: true };
}

export async function otherProcessorIntake(
  processor: OtherProcessor,
  deps: Deps,
  req: FastifyRequest<{ Params: { programId: string } }>,
  reply: FastifyReply,
) {
  const E = ERRORS[processor];
  const programId = pathId(req.params.programId);
  if (Number.isNaN(programId)) throw new HttpError(404, E.programNotFound);
  if (!signaturePresent(processor, req)) throw new HttpError(400, E.missingSignature);
  let stored = await deps.cache.webhookSecrets(programId);
  if (!stored) throw new HttpError(404, E.programNotFound);
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let event: unknown;
  try {
    event = verify(processor, req, raw, secretsOf(stored, processor));
  } catch (err) {
    // A secret connected or changed since the cache read it verifies at once: one read of Postgres more.
    const retry = [E.badSignature, E.notConnected] as string[];
    if (!(err instanceof HttpError) || !retry.includes(err.message)) throw err;
    stored = await deps.cache.webhookSecrets(programId, true);
    if (!stored) throw new HttpError(404, E.programNotFound);
    event = verify(processor, req, raw, secretsOf(stored, processor));
  }
  const id = identity(processor, req, event);
  if (!isPlainObject(event) || !id.event_id || !id.event_type) throw new HttpError(400, E.notEvent);
  const msg: ProcessorEventCommand = {
    v: 1,
    type: 'processor_event',
    request_id: processorRequestId(programId, id.event_id, processor),
    ts: Date.now(),
    processor,
    program_id: programId,
    event_id: id.event_id,
    event_type: id.event_type,
    livemode: id.livemode,
    payload: raw.toString('utf8'),
  };
  try {
    await deps.producer.send(deps.topic, {
      key: `${programId}:${processor}:${eventKeyFor(processor, event)}`,
      value: JSON.stringify(msg),
    });
  } catch (err) {
    unacked(req.log, err, 'processor event not acknowledged by Kafka');
    return reply.code(503).header('retry-after', '2').send({ error: E.unavailable });
  }
  return { received: true };
}
