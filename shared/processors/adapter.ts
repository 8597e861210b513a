// What a payment processor is to this service (CONTRACT part three "Revenue from every processor";
// docs/processors.md): one adapter per processor, in its own file, listed once in index.ts. The webhook
// intake (services/ingress/processor-intake.ts) runs the same steps for every adapter; the processor worker
// applies what its `interpret` says. Also here: what the signature checks share (constant-time HMACs,
// the replay tolerance, the errors every processor answers alike).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../http-error.ts';
import type { ProcessorAction } from './common.ts';

/** A workspace's webhook secrets, as the ingress reads them for a program (services/ingress/tracking-cache.ts). */
export interface StoredSecrets {
  workspaceId: number;
  /** Stripe's, from the processor connection; null: the workspace has no processor connection. */
  secret: string | null;
  previousSecret: string | null;
  previousExpiresAt: number | null;
  /** The other processors' secrets (processor_secrets), by processor name. */
  others?: Partial<Record<string, string>>;
}

/** The request headers an adapter named in `signatureHeaders`, each a non-empty string or undefined. */
export type SignatureHeaders = Record<string, string | undefined>;

/** The errors of a processor's webhook route, in its own terms (each one a 400 unless said). */
export interface ProcessorErrors {
  /** 404. */
  programNotFound: string;
  /** 503: Kafka did not acknowledge the event. */
  unavailable: string;
  missingSignature: string;
  malformedSignature: string;
  badSignature: string;
  /** Processors without a signed timestamp have none. */
  stale?: string;
  notConnected: string;
  notEvent: string;
}

/** An event's id (what it is deduplicated by), its type and its mode; a null id or type: not an event. */
export interface EventIdentity {
  event_id: string | null;
  event_type: string | null;
  livemode: boolean;
}

export interface ProcessorAdapter {
  /** How people write it (dashboard, docs): "Lemon Squeezy". */
  title: string;
  /** What a partner code's processor_ids entry is at this processor: "discount id", "promotion_code id". */
  discountId: string;
  /** The lower-case request headers its signature travels in; each must be present before anything is read. */
  signatureHeaders: readonly string[];
  errors: ProcessorErrors;
  /** Which of the workspace's stored secrets verify its events (Stripe: the current and the rolled one). */
  secrets(stored: StoredSecrets, now?: number): string[];
  /** Why a pasted secret cannot be this processor's (beyond 1 to 255 characters), or null. */
  secretError(secret: string): string | null;
  /** The parsed body once the signature matches one secret, or an HttpError(400, one of `errors`). */
  verify(raw: Buffer, headers: SignatureHeaders, secrets: string[]): unknown;
  /** The verified event's id, type and mode. */
  identity(event: unknown, headers: SignatureHeaders): EventIdentity;
  /** Its Kafka key: the events of one payment, order or subscription share it and so stay in order. */
  eventKey(event: unknown): string;
  /** What a verified event asks for (pure). */
  interpret(event: unknown): ProcessorAction;
}

/** As Stripe's: a signature older (or newer) than this is refused, so a captured request cannot be replayed. */
export const TOLERANCE_SECONDS = 300;

/** What every processor's webhook route answers alike. */
export const COMMON_ERRORS = {
  programNotFound: 'Program not found',
  unavailable: 'The event could not be stored right now; retry',
} as const;

export const nowSec = () => Math.floor(Date.now() / 1000);
export const hmac = (key: string | Buffer, data: Buffer | string) =>
  createHmac('sha256', key).update(data).digest();
export const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);
export const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** The verified body, parsed, or the 400 `notEvent` names. */
export function parsed(raw: Buffer, notEvent: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, notEvent);
  }
}
