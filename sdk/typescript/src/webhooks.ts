// Verifying svc's outbound webhooks (Standard Webhooks, standardwebhooks.com): the signature is
// HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed by the base64-decoded part of the
// endpoint's `whsec_…` secret, sent as `v1,<base64>` (several, space-separated, while a secret rotates).
// Web Crypto only, so it runs on edge runtimes too; `crypto.subtle.verify` compares in constant time.
import { WebhookVerificationError } from './errors.ts';
import { webCrypto } from './platform.ts';
import type { webhooks } from './openapi.ts';

/** The body of every svc webhook. `data` holds the object's current fields (CONTRACT "Webhooks to integrators"). */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /** `sale.created`, `commission.updated`, `webhook.test`, … */
  type: WebhookEventType | (string & {});
  /** When the event happened (ISO 8601). */
  timestamp: string;
  data: Data;
}

/** The event types svc sends: the OpenAPI document's `webhooks` section (generated, openapi.ts). */
export type WebhookEventType = keyof webhooks;

/** The body of an event of type `T`, as the OpenAPI document's `webhooks` section describes it. */
export type WebhookEventOf<T extends WebhookEventType> = NonNullable<
  webhooks[T]['post']
>['requestBody']['content']['application/json'];

/** The `data` of an event of type `T`: the object's view, as the management API shows it. */
export type WebhookEventData<T extends WebhookEventType> = WebhookEventOf<T>['data'];

/**
 * Any event svc sends, discriminated by `type`: `if (e.type === 'payout.paid') e.data.reference`. Cast
 * verifyWebhook's result to it (`verifyWebhook<…>` types `data` only) once the body is verified.
 */
export type SvcWebhookEvent = { [T in WebhookEventType]: WebhookEventOf<T> }[WebhookEventType];

/** A sale, as `sale.created` carries it. */
export type Sale = WebhookEventData<'sale.created'>;
/** A refunded sale and what the refund did, as `sale.refunded` carries it. */
export type SaleRefunded = WebhookEventData<'sale.refunded'>;
/** A lead, as `lead.created` carries it. */
export type Lead = WebhookEventData<'lead.created'>;
/** A partner's move to another group, as `partner.group_changed` carries it. */
export type GroupChange = WebhookEventData<'partner.group_changed'>;

/** A Fetch `Headers`, or a plain object such as Node's `req.headers` (names in any case). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** How far `webhook-timestamp` may be from now, either way. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The current time in milliseconds (tests). */
  now?: number;
}

const SECRET_PREFIX = 'whsec_';

/**
 * Checks that `rawBody` was sent by svc with `secret` and recently, and returns the parsed event.
 * `rawBody` must be the bytes as received (not JSON re-serialised by a framework).
 * Throws WebhookVerificationError otherwise.
 */
export async function verifyWebhook<Data = Record<string, unknown>>(
  rawBody: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent<Data>> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookVerificationError(
      'Missing required headers (webhook-id, webhook-timestamp, webhook-signature)',
    );
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  const sentAt = Number(timestamp);
  if (sentAt < nowSeconds - tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (sentAt > nowSeconds + tolerance) throw new WebhookVerificationError('Message timestamp too new');

  const crypto = await webCrypto();
  const key = await crypto.subtle.importKey(
    'raw',
    secretBytes(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  );
  const body = bodyBytes(rawBody);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const signature = base64Bytes(entry.slice(comma + 1));
    if (signature && (await crypto.subtle.verify('HMAC', key, signature, signed))) {
      try {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent<Data>;
      } catch {
        throw new WebhookVerificationError('The body is not JSON');
      }
    }
  }
  throw new WebhookVerificationError('No matching signature found');
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue;
    const value = record[key];
    return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const bytes = base64Bytes(encoded);
  if (!bytes || bytes.length === 0) {
    throw new WebhookVerificationError('The secret is not a whsec_ secret (base64 after the prefix)');
  }
  return bytes;
}

function bodyBytes(raw: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof raw === 'string') return new TextEncoder().encode(raw);
  const view = raw instanceof ArrayBuffer ? new Uint8Array(raw) : raw;
  // A copy: Web Crypto wants an ArrayBuffer-backed view, and Node's Buffer may share a larger pool.
  return new Uint8Array(view);
}

/** Standard base64 to bytes; null when it is not base64. */
function base64Bytes(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return null;
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
