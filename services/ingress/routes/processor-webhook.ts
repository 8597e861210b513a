// POST /api/v1/webhooks/processor/:programId (Stripe) and /api/v1/webhooks/:processor/:programId (stripe,
// paddle, lemonsqueezy, polar): an event verified on its raw bytes (Stripe with its official package, the
// others in ../webhook-verify.ts), produced to the processor-events topic (acks=all) and only then answered
// 200. Nothing is applied here: the processor worker applies it once per (program, processor, event id).
import Stripe from 'stripe';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, errorResponses } from '../../../shared/http/server.ts';
import { pathId } from '../../../shared/http/validation.ts';
import { eventKey } from '../../../shared/contracts/processor-events.ts';
import { processorRequestId } from '../../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../../shared/contracts/processor-events.ts';
import { PROCESSORS } from '../../../shared/contracts/processor-events.ts';
import { otherProcessorIntake } from '../processor-intake.ts';
import { liveSecrets } from '../tracking-cache.ts';
import type { TrackingCache } from '../tracking-cache.ts';
import type { BatchingProducer } from '../../../shared/pipeline/kafka.ts';
import { outageWarning } from '../../../shared/pipeline/dependencies.ts';

/** Stripe's own default: a signature older (or newer) than this is refused, so a captured request cannot be replayed. */
export const TOLERANCE_SECONDS = 300;
/** Larger than any event Stripe sends (an invoice with many lines is well under 1 MiB). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export const WEBHOOK_ERRORS = {
  missingSignature: 'Missing Stripe-Signature header',
  malformedSignature: 'Stripe-Signature header is malformed',
  badSignature: 'Webhook signature does not match',
  stale: `Webhook timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No webhook signing secret: connect the payment processor first',
  notEvent: 'Webhook body must be an event with an id and a type',
  programNotFound: 'Program not found',
  unavailable: 'The event could not be stored right now; retry',
} as const;

export const UNKNOWN_PROCESSOR = `Unknown processor: use one of ${PROCESSORS.join(', ')}`;

export interface WebhookDeps {
  cache: Pick<TrackingCache, 'webhookSecrets'>;
  producer: BatchingProducer;
  topic: string;
}

/** One line every few seconds while Kafka is down, not one per refused event. */
const unacked = outageWarning();

const stripe = new Stripe('sk_unused_signature_checks_only');

/** The verified event, or the 400 that says why not. Tries the current secret, then the rolled one. */
export function verifyEvent(raw: Buffer, header: string, secrets: string[], nowSeconds?: number): unknown {
  if (secrets.length === 0) throw new HttpError(400, WEBHOOK_ERRORS.notConnected);
  let stale = false;
  for (const secret of secrets) {
    try {
      return stripe.webhooks.constructEvent(raw, header, secret, TOLERANCE_SECONDS, undefined, nowSeconds);
    } catch (err) {
      // A verified body that is not JSON: the signature matched, the content is wrong.
      if (err instanceof SyntaxError) throw new HttpError(400, WEBHOOK_ERRORS.notEvent);
      const message = (err as Error).message;
      if (/extract timestamp and signatures/i.test(message))
        throw new HttpError(400, WEBHOOK_ERRORS.malformedSignature);
      if (/tolerance zone/i.test(message)) stale = true;
    }
  }
  throw new HttpError(400, stale ? WEBHOOK_ERRORS.stale : WEBHOOK_ERRORS.badSignature);
}

/** What both webhook routes answer: 200 once durable, or the error (their 400s and 404s differ in text only). */
const RESPONSES = {
  200: {
    type: 'object',
    properties: { received: { type: 'boolean', const: true } },
    required: ['received'],
  },
  ...errorResponses(400, 404, 413, 503),
};

export function registerProcessorWebhookRoute(app: FastifyInstance, deps: WebhookDeps): void {
  // Its own scope: the signature is computed over the exact bytes, so this route takes the body raw.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
      (_req, body, done) => done(null, body),
    );
    scope.post<{ Params: { programId: string } }>(
      '/api/v1/webhooks/processor/:programId',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        config: { anyBodyType: true },
        schema: {
          tags: ['tracking'],
          summary: 'Receive a payment-processor webhook (Stripe format)',
          description:
            'Verified with the workspace’s `whsec_` secret (or the previous one for 24 h after a roll) on the raw ' +
            `body, ${TOLERANCE_SECONDS} s tolerance. 200 \`{ received: true }\` once the event is durable in Kafka; ` +
            'it is applied asynchronously, once per event id (see GET /api/advertiser/processor-events). Errors: ' +
            Object.values(WEBHOOK_ERRORS)
              .map((e) => `\`${e}\``)
              .join(', ') +
            '; 413 over 1 MiB.',
          params: {
            type: 'object',
            properties: { programId: { type: 'string', description: 'The program the events are for.' } },
          },
          response: RESPONSES,
        },
      },
      (req, reply) => stripeIntake(deps, req, reply),
    );
    scope.post<{ Params: { processor: string; programId: string } }>(
      '/api/v1/webhooks/:processor/:programId',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        config: { anyBodyType: true },
        schema: {
          tags: ['tracking'],
          summary: 'Receive a Stripe, Paddle, Lemon Squeezy or Polar webhook',
          description:
            'Each processor’s own signature scheme on the raw body, with the secret connected for it ' +
            '(PUT /api/advertiser/processor-connections/{processor}): Stripe `Stripe-Signature` (as ' +
            '/api/v1/webhooks/processor/{programId}), Paddle `Paddle-Signature: ts=…;h1=…`, Lemon Squeezy ' +
            '`X-Signature`, Polar Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
            `${TOLERANCE_SECONDS} s tolerance where there is a timestamp. 200 \`{ received: true }\` once the ` +
            'event is durable in Kafka, applied once per event (Lemon Squeezy: event name + object id + ' +
            'refunded amount). 400 with what is wrong (missing, malformed or mismatched signature, stale ' +
            `timestamp, no secret connected, not an event); 404 \`${WEBHOOK_ERRORS.programNotFound}\` or ` +
            `\`${UNKNOWN_PROCESSOR}\`; 413 over 1 MiB; 503 \`${WEBHOOK_ERRORS.unavailable}\`. See docs/processors.md.`,
          params: {
            type: 'object',
            properties: {
              processor: { type: 'string', description: `One of ${PROCESSORS.join(', ')}.` },
              programId: { type: 'string', description: 'The program the events are for.' },
            },
          },
          response: RESPONSES,
        },
      },
      (req, reply) => {
        const { processor } = req.params;
        if (processor === 'stripe') return stripeIntake(deps, req, reply);
        if (processor === 'paddle' || processor === 'lemonsqueezy' || processor === 'polar')
          return otherProcessorIntake(processor, deps, req, reply);
        throw new HttpError(404, UNKNOWN_PROCESSOR);
      },
    );
  });
}

/** Stripe's intake, on both its paths. */
async function stripeIntake(
  deps: WebhookDeps,
  req: FastifyRequest<{ Params: { programId: string } }>,
  reply: FastifyReply,
) {
  const programId = pathId(req.params.programId);
  if (Number.isNaN(programId)) throw new HttpError(404, WEBHOOK_ERRORS.programNotFound);
  const header = req.headers['stripe-signature'];
  if (typeof header !== 'string' || header === '') throw new HttpError(400, WEBHOOK_ERRORS.missingSignature);
  // From the ingress's cache (a read of Postgres per event queued behind the workers' writes under
  // load); a signature that does not match the cached secrets is checked once more against Postgres.
  let stored = await deps.cache.webhookSecrets(programId);
  if (!stored) throw new HttpError(404, WEBHOOK_ERRORS.programNotFound);
  const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let event: { id?: unknown; type?: unknown; livemode?: unknown };
  try {
    event = verifyEvent(raw, header, liveSecrets(stored)) as typeof event;
  } catch (err) {
    const retry = [WEBHOOK_ERRORS.badSignature, WEBHOOK_ERRORS.notConnected] as string[];
    if (!(err instanceof HttpError) || !retry.includes(err.message)) throw err;
    stored = await deps.cache.webhookSecrets(programId, true);
    if (!stored) throw new HttpError(404, WEBHOOK_ERRORS.programNotFound);
    event = verifyEvent(raw, header, liveSecrets(stored)) as typeof event;
  }
  if (typeof event?.id !== 'string' || typeof event.type !== 'string' || event.id === '')
    throw new HttpError(400, WEBHOOK_ERRORS.notEvent);
  const msg: ProcessorEventCommand = {
    v: 1,
    type: 'processor_event',
    request_id: processorRequestId(programId, event.id),
    ts: Date.now(),
    program_id: programId,
    event_id: event.id,
    event_type: event.type,
    livemode: event.livemode !== false,
    payload: raw.toString('utf8'),
  };
  try {
    await deps.producer.send(deps.topic, {
      key: `${programId}:${eventKey(event)}`,
      value: JSON.stringify(msg),
    });
  } catch (err) {
    unacked(req.log, err, 'processor event not acknowledged by Kafka');
    return reply.code(503).header('retry-after', '2').send({ error: WEBHOOK_ERRORS.unavailable });
  }
  return { received: true };
}
