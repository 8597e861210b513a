// Payment-processor events (Stripe format) between the webhook intake and the worker that applies them:
// the message on the `processor-events` topic, its ordering key, and what each event type asks for.
// Interpretation is pure: it reads the event as Stripe sends it (both the 2025+ and the older invoice and
// charge layouts) and says what to do; the worker does it with the /track/sale and /track/refund code.
import { isPlainObject } from '../json.ts';

/**
 * The topic message: the verified event, as the processor sent it, for one program. It is a command like
 * a sale or a refund: its request_id (one per program and event id) keys its recorded outcome, so a
 * redelivered event, or the processor sending it again, is applied once.
 */
export interface ProcessorEventCommand {
  v: 1;
  type: 'processor_event';
  request_id: string;
  /** Milliseconds since the epoch when the intake accepted it. */
  ts: number;
  program_id: number;
  event_id: string;
  event_type: string;
  livemode: boolean;
  /** The event's JSON text exactly as verified. */
  payload: string;
}

export const processorRequestId = (programId: number, eventId: string) => `processor:${programId}:${eventId}`;

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
  if (!str(c.event_id) || !str(c.event_type) || !str(c.payload)) return 'bad event';
  if (c.request_id !== processorRequestId(c.program_id as number, c.event_id as string))
    return 'bad request_id';
  if (typeof c.livemode !== 'boolean' || !Number.isSafeInteger(c.ts)) return 'bad livemode or ts';
  return c as unknown as ProcessorEventCommand;
}

/** Where a sale's attribution comes from: the checkout's or the subscription's metadata. */
export interface Attribution {
  customer_key: string | null;
  click_id: string | null;
  /** `metadata.program_id` when present: it must name the webhook's program. */
  program_id: string | null;
}

export type ProcessorAction =
  | {
      kind: 'sale';
      transaction_id: string;
      amount_cents: number;
      currency: string;
      attribution: Attribution | null;
      /** For subscription invoices: attribution falls back to the link remembered at checkout. */
      subscription_id: string | null;
      sale_type: 'one_time' | 'subscription';
      is_recurring: boolean;
      payment_intent: string | null;
      invoice_id: string | null;
    }
  | {
      kind: 'link';
      subscription_id: string;
      processor_customer_id: string | null;
      attribution: Attribution;
    }
  | { kind: 'link_payment'; payment_intent: string; invoice_id: string }
  | {
      kind: 'refund';
      payment_intent: string | null;
      invoice_id: string | null;
      charge_id: string;
      /** null: the whole charge was refunded. */
      refund_amount_cents: number | null;
      amount_refunded_cents: number;
    }
  | { kind: 'ignored'; reason: string };

/** The event types this service acts on; every other type is answered 200 and ignored. */
export const HANDLED_TYPES = [
  'checkout.session.completed',
  'invoice.paid',
  'invoice.payment_succeeded',
  'charge.refunded',
  'invoice_payment.paid',
] as const;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** An id field that may be expanded into an object (Stripe's `expand[]`). */
const ref = (v: unknown): string | null => str(v) ?? str(obj(v).id);
const int = (v: unknown): number | null =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : null;

function attributionOf(metadata: unknown): Attribution | null {
  const m = obj(metadata);
  const a = {
    customer_key: str(m.svc_customer_key),
    click_id: str(m.svc_click_id),
    program_id: str(m.program_id) ?? (typeof m.program_id === 'number' ? String(m.program_id) : null),
  };
  return a.customer_key || a.click_id || a.program_id ? a : null;
}

/** The invoice's subscription id, from the 2025+ `parent.subscription_details` or the older top level. */
export function invoiceSubscription(invoice: Obj): string | null {
  return ref(obj(obj(invoice.parent).subscription_details).subscription) ?? ref(invoice.subscription);
}

/** The invoice's subscription metadata: 2025+ `parent.subscription_details.metadata`, else the older place. */
function invoiceAttribution(invoice: Obj): Attribution | null {
  return (
    attributionOf(obj(obj(invoice.parent).subscription_details).metadata) ??
    attributionOf(obj(invoice.subscription_details).metadata)
  );
}

/** What an event asks for. `event` is the parsed event object; it is trusted (its signature was verified). */
export function interpretEvent(event: unknown): ProcessorAction {
  const e = obj(event);
  const o = obj(obj(e.data).object);
  switch (e.type) {
    case 'checkout.session.completed': {
      const attribution = attributionOf(o.metadata);
      if (o.mode === 'subscription') {
        const subscription = ref(o.subscription);
        if (!subscription) return { kind: 'ignored', reason: 'no_subscription' };
        if (!attribution) return { kind: 'ignored', reason: 'no_metadata' };
        return {
          kind: 'link',
          subscription_id: subscription,
          processor_customer_id: ref(o.customer),
          attribution,
        };
      }
      if (o.mode !== 'payment') return { kind: 'ignored', reason: `mode_${String(o.mode)}` };
      if (o.payment_status !== 'paid') return { kind: 'ignored', reason: 'not_paid' };
      const amount = int(o.amount_total);
      const currency = str(o.currency);
      const id = ref(o.payment_intent) ?? str(o.id);
      if (amount === null || !currency || !id) return { kind: 'ignored', reason: 'malformed' };
      return {
        kind: 'sale',
        transaction_id: id,
        amount_cents: amount,
        currency: currency.toUpperCase(),
        attribution,
        subscription_id: null,
        sale_type: 'one_time',
        is_recurring: false,
        payment_intent: ref(o.payment_intent),
        invoice_id: null,
      };
    }
    case 'invoice.paid':
    case 'invoice.payment_succeeded': {
      const id = str(o.id);
      const amount = int(o.amount_paid);
      const currency = str(o.currency);
      if (!id || amount === null || !currency) return { kind: 'ignored', reason: 'malformed' };
      const subscription = invoiceSubscription(o);
      return {
        kind: 'sale',
        transaction_id: id,
        amount_cents: amount,
        currency: currency.toUpperCase(),
        attribution: invoiceAttribution(o),
        subscription_id: subscription,
        sale_type: subscription ? 'subscription' : 'one_time',
        is_recurring: subscription !== null && o.billing_reason !== 'subscription_create',
        payment_intent: ref(o.payment_intent),
        invoice_id: id,
      };
    }
    case 'charge.refunded': {
      const id = str(o.id);
      const amount = int(o.amount);
      const refunded = int(o.amount_refunded);
      if (!id || amount === null || refunded === null) return { kind: 'ignored', reason: 'malformed' };
      const paymentIntent = ref(o.payment_intent);
      const invoice = ref(o.invoice);
      if (!paymentIntent && !invoice) return { kind: 'ignored', reason: 'no_payment_reference' };
      return {
        kind: 'refund',
        payment_intent: paymentIntent,
        invoice_id: invoice,
        charge_id: id,
        refund_amount_cents: refunded >= amount ? null : refunded,
        amount_refunded_cents: refunded,
      };
    }
    case 'invoice_payment.paid': {
      const invoice = ref(o.invoice);
      const payment = obj(o.payment);
      const paymentIntent = ref(payment.payment_intent);
      if (!invoice || !paymentIntent) return { kind: 'ignored', reason: 'no_payment_intent' };
      return { kind: 'link_payment', payment_intent: paymentIntent, invoice_id: invoice };
    }
    default:
      return { kind: 'ignored', reason: 'unhandled_type' };
  }
}

/**
 * The Kafka key of an event: the events of one payment, invoice or subscription share it and so stay in
 * order (a checkout and its refund by payment intent; a subscription's checkout and its invoices by
 * subscription). Events that relate across keys (an invoice's refund) wait for what they refer to.
 */
export function eventKey(event: unknown): string {
  const e = obj(event);
  const o = obj(obj(e.data).object);
  switch (e.type) {
    case 'checkout.session.completed':
      return (
        (o.mode === 'subscription' ? ref(o.subscription) : null) ?? ref(o.payment_intent) ?? str(o.id) ?? ''
      );
    case 'invoice.paid':
    case 'invoice.payment_succeeded':
      return invoiceSubscription(o) ?? str(o.id) ?? '';
    case 'charge.refunded':
      return ref(o.payment_intent) ?? ref(o.invoice) ?? str(o.id) ?? '';
    case 'invoice_payment.paid':
      return ref(obj(o.payment).payment_intent) ?? ref(o.invoice) ?? '';
    default:
      return str(e.id) ?? '';
  }
}
