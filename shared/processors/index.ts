// The payment processors this service takes webhooks from (CONTRACT part three "Revenue from every
// processor"; docs/processors.md): one adapter per processor, and this table, the one place that lists them.
// Every list derives from it: the webhook route's processors, the processor-events message's, the API's
// enums and the codes' and discounts' processor_ids (and through the OpenAPI document, the SDK's types and
// the dashboard's). Adding a processor is its adapter file and one line here. The order is the answers'.
import type { ProcessorAdapter } from './adapter.ts';
import { stripeAdapter } from './stripe.ts';
import { paddle } from './paddle.ts';
import { lemonsqueezy } from './lemonsqueezy.ts';
import { polar } from './polar.ts';

export const ADAPTERS = {
  stripe: stripeAdapter,
  paddle,
  lemonsqueezy,
  polar,
} as const satisfies Record<string, ProcessorAdapter>;

export type Processor = keyof typeof ADAPTERS;
export const PROCESSORS: readonly Processor[] = Object.keys(ADAPTERS) as Processor[];
export const isProcessor = (v: unknown): v is Processor =>
  typeof v === 'string' && Object.hasOwn(ADAPTERS, v);

/** The 404 of a path naming no processor (the webhook route and the processor-connections routes). */
export const UNKNOWN_PROCESSOR = `Unknown processor: use one of ${PROCESSORS.join(', ')}`;

/** "stripe, paddle, lemonsqueezy and polar": the processors in a sentence. */
export const PROCESSOR_WORDS = `${PROCESSORS.slice(0, -1).join(', ')} and ${PROCESSORS.at(-1)}`;

/** What an event of `processor` asks for. `event` is trusted (its signature was verified). */
export const interpretFor = (processor: Processor, event: unknown) => ADAPTERS[processor].interpret(event);

/**
 * The Kafka key of an event: the events of one payment, order or subscription share it and so stay in order.
 * Events that relate across keys (an invoice's refund) wait for what they refer to.
 */
export const eventKeyFor = (processor: Processor, event: unknown): string =>
  ADAPTERS[processor].eventKey(event);

export type { ProcessorAdapter } from './adapter.ts';
