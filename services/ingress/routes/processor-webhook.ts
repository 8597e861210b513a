// POST /api/v1/webhooks/processor/:programId: a Stripe-format event, verified on its raw bytes with the
// official package, produced to the processor-events topic (acks=all) and only then answered 200.
// Nothing is applied here: the processor worker applies it once per (program, event id).
import Stripe from 'stripe';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../shared/http/server.ts';
import { pathId } from '../../../shared/http/validation.ts';
import { eventKey } from '../../../shared/contracts/processor-events.ts';
import { processorRequestId } from '../../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../../shared/contracts/processor-events.ts';
import type { Sql } from '../../../shared/db/sql.ts';
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

export interface WebhookDeps {
  sql: Sql;
  producer: BatchingProducer;
  topic: string;
}

interface Secrets {
  webhook_secret: string | null;
  previous_webhook_secret: string | null;
}

/** One line every few seconds while Kafka is down, not one per refused event. */
const unacked = outageWarning();

const stripe = new Stripe('sk_unused_signature_checks_only');

/** The verified event, or the 400 that says why not. Tries the current secret, then the rolled one. */
export function verifyEvent(raw: Buffer, header: string, secrets: string[], nowSeconds?: number): unknown {
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
          response: {
            200: {
              type: 'object',
              properties: { received: { type: 'boolean', const: true } },
              required: ['received'],
            },
            ...errorResponses(400, 404, 413, 503),
          },
        },
      },
      async (req, reply) => {
        const programId = pathId(req.params.programId);
        if (Number.isNaN(programId)) throw new HttpError(404, WEBHOOK_ERRORS.programNotFound);
        const header = req.headers['stripe-signature'];
        if (typeof header !== 'string' || header === '')
          throw new HttpError(400, WEBHOOK_ERRORS.missingSignature);
        const [row] = await deps.sql<(Secrets & { found: boolean })[]>`
          select true as found, c.webhook_secret,
                 case when c.previous_secret_expires_at > now() then c.previous_webhook_secret end
                   as previous_webhook_secret
          from programs p left join processor_connections c on c.workspace_id = p.workspace_id
          where p.id = ${programId} and p.deleted_at is null`;
        if (!row) throw new HttpError(404, WEBHOOK_ERRORS.programNotFound);
        const secrets = [row.webhook_secret, row.previous_webhook_secret].filter((s): s is string => !!s);
        if (secrets.length === 0) throw new HttpError(400, WEBHOOK_ERRORS.notConnected);
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const event = verifyEvent(raw, header, secrets) as {
          id?: unknown;
          type?: unknown;
          livemode?: unknown;
        };
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
      },
    );
  });
}
