// POST /api/v1/webhooks/processor/:programId (Stripe) and /api/v1/webhooks/:processor/:programId (every
// processor of shared/processors/index.ts): both take the body raw and hand it to the one intake
// (../processor-intake.ts), which verifies it with the processor's adapter and produces it to the
// processor-events topic. Nothing is applied here: the processor worker applies it once per (program,
// processor, event id).
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../shared/http/server.ts';
import { TOLERANCE_SECONDS } from '../../../shared/processors/adapter.ts';
import { STRIPE_ERRORS } from '../../../shared/processors/stripe.ts';
import { ADAPTERS, PROCESSORS, UNKNOWN_PROCESSOR, isProcessor } from '../../../shared/processors/index.ts';
import { processorIntake } from '../processor-intake.ts';
import type { IntakeDeps } from '../processor-intake.ts';

/** Larger than any event Stripe sends (an invoice with many lines is well under 1 MiB). */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

export type WebhookDeps = IntakeDeps;

/** "Stripe, Paddle, Lemon Squeezy or Polar". */
const TITLES = ((t: string[]) => `${t.slice(0, -1).join(', ')} or ${t.at(-1)}`)(
  PROCESSORS.map((p) => ADAPTERS[p].title),
);

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
            Object.values(STRIPE_ERRORS)
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
      (req, reply) => processorIntake('stripe', deps, req, reply),
    );
    scope.post<{ Params: { processor: string; programId: string } }>(
      '/api/v1/webhooks/:processor/:programId',
      {
        bodyLimit: WEBHOOK_BODY_LIMIT,
        config: { anyBodyType: true },
        schema: {
          tags: ['tracking'],
          summary: `Receive a ${TITLES} webhook`,
          description:
            'Each processor’s own signature scheme on the raw body, with the secret connected for it ' +
            '(PUT /api/advertiser/processor-connections/{processor}): Stripe `Stripe-Signature` (as ' +
            '/api/v1/webhooks/processor/{programId}), Paddle `Paddle-Signature: ts=…;h1=…`, Lemon Squeezy ' +
            '`X-Signature`, Polar Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
            `${TOLERANCE_SECONDS} s tolerance where there is a timestamp. 200 \`{ received: true }\` once the ` +
            'event is durable in Kafka, applied once per event (Lemon Squeezy: event name + object id + ' +
            'refunded amount). 400 with what is wrong (missing, malformed or mismatched signature, stale ' +
            `timestamp, no secret connected, not an event); 404 \`${STRIPE_ERRORS.programNotFound}\` or ` +
            `\`${UNKNOWN_PROCESSOR}\`; 413 over 1 MiB; 503 \`${STRIPE_ERRORS.unavailable}\`. See docs/processors.md.`,
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
        if (!isProcessor(processor)) throw new HttpError(404, UNKNOWN_PROCESSOR);
        return processorIntake(processor, deps, req, reply);
      },
    );
  });
}
