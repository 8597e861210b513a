// Payment-processor events between the webhook intake and the worker that applies them: the message on the
// `processor-events` topic (processors/common.ts), and, per processor, what each event type asks for and
// its ordering key (processors/<name>.ts). Interpretation is pure; the worker applies the actions with the
// /track/sale and /track/refund code.
import type { Processor, ProcessorAction } from './processors/common.ts';
import { eventKey, interpretEvent } from './processors/stripe.ts';
import { interpretPaddle, paddleEventKey } from './processors/paddle.ts';
import { interpretLemonSqueezy, lemonSqueezyEventKey } from './processors/lemonsqueezy.ts';
import { interpretPolar, polarEventKey } from './processors/polar.ts';

export * from './processors/common.ts';
export { HANDLED_TYPES, eventKey, interpretEvent, invoiceSubscription } from './processors/stripe.ts';

const INTERPRET: Record<Processor, (event: unknown) => ProcessorAction> = {
  stripe: interpretEvent,
  paddle: interpretPaddle,
  lemonsqueezy: interpretLemonSqueezy,
  polar: interpretPolar,
};

const KEY: Record<Processor, (event: unknown) => string> = {
  stripe: eventKey,
  paddle: paddleEventKey,
  lemonsqueezy: lemonSqueezyEventKey,
  polar: polarEventKey,
};

/** What an event of `processor` asks for. `event` is trusted (its signature was verified). */
export const interpretFor = (processor: Processor, event: unknown): ProcessorAction =>
  INTERPRET[processor](event);

/**
 * The Kafka key of an event: the events of one payment, order or subscription share it and so stay in order.
 * Events that relate across keys (an invoice's refund) wait for what they refer to.
 */
export const eventKeyFor = (processor: Processor, event: unknown): string => KEY[processor](event);
