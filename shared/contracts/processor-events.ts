// The message on the `processor-events` topic between the webhook intake (services/ingress/processor-intake.ts)
// and the worker that applies it (services/workers/processor/): a verified event of one processor for one
// program, and its request id. What each processor's events mean is its adapter's (shared/processors/).
import { isProcessor } from '../processors/index.ts';
import type { Processor } from '../processors/index.ts';
import { obj, str } from '../processors/common.ts';

/**
 * The topic message: the verified event, as the processor sent it, for one program. It is a command like
 * a sale or a refund: its request_id (one per program, processor and event id) keys its recorded outcome,
 * so a redelivered event, or the processor sending it again, is applied once.
 */
export interface ProcessorEventCommand {
  v: 1;
  type: 'processor_event';
  request_id: string;
  /** Milliseconds since the epoch when the intake accepted it. */
  ts: number;
  /** Omitted in messages from before Paddle, Lemon Squeezy and Polar: Stripe. */
  processor?: Processor;
  program_id: number;
  /** The processor's event id (Lemon Squeezy sends none: event name, object id and refunded amount). */
  event_id: string;
  event_type: string;
  livemode: boolean;
  /** The event's JSON text exactly as verified. */
  payload: string;
}

/**
 * The processor of the messages from before the others joined: they carry no `processor` field, their
 * request ids and Kafka keys no processor name, and its messages are still written that way, so an event
 * redelivered across a deploy keeps its request id and its place in its key's order.
 */
export const LEGACY_PROCESSOR: Processor = 'stripe';

/** Stripe's request ids are what they were before other processors; the others name their processor. */
export const processorRequestId = (
  programId: number,
  eventId: string,
  processor: Processor = LEGACY_PROCESSOR,
) =>
  processor === LEGACY_PROCESSOR
    ? `processor:${programId}:${eventId}`
    : `processor:${programId}:${processor}:${eventId}`;

export const processorOf = (c: Pick<ProcessorEventCommand, 'processor'>): Processor =>
  c.processor ?? LEGACY_PROCESSOR;

/** An event the intake verified, as the topic's message and its Kafka key (`key`: the adapter's event key). */
export function processorEventMessage(
  processor: Processor,
  programId: number,
  id: { event_id: string; event_type: string; livemode: boolean },
  key: string,
  raw: Buffer,
): { key: string; message: ProcessorEventCommand } {
  const legacy = processor === LEGACY_PROCESSOR;
  return {
    key: legacy ? `${programId}:${key}` : `${programId}:${processor}:${key}`,
    message: {
      v: 1,
      type: 'processor_event',
      request_id: processorRequestId(programId, id.event_id, processor),
      ts: Date.now(),
      ...(legacy ? {} : { processor }),
      program_id: programId,
      event_id: id.event_id,
      event_type: id.event_type,
      livemode: id.livemode,
      payload: raw.toString('utf8'),
    },
  };
}

/** The command, or why the bytes are not one (a foreign producer's message: dead-lettered). */
export function parseProcessorEvent(bytes: Buffer | null): ProcessorEventCommand | string {
  if (bytes === null) return 'no value';
  let m: unknown;
  try {
    m = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  const c = obj(m);
  if (c.v !== 1 || c.type !== 'processor_event') return 'not a processor event';
  if (!Number.isSafeInteger(c.program_id) || (c.program_id as number) <= 0) return 'bad program_id';
  if (c.processor !== undefined && !isProcessor(c.processor)) return 'bad processor';
  if (!str(c.event_id) || !str(c.event_type) || !str(c.payload)) return 'bad event';
  const processor = (c.processor ?? LEGACY_PROCESSOR) as Processor;
  if (c.request_id !== processorRequestId(c.program_id as number, c.event_id as string, processor))
    return 'bad request_id';
  if (typeof c.livemode !== 'boolean' || !Number.isSafeInteger(c.ts)) return 'bad livemode or ts';
  return c as unknown as ProcessorEventCommand;
}
