// The signature schemes of Paddle, Lemon Squeezy and Polar (CONTRACT part three "Revenue from every
// processor"), checked on the raw bytes with constant-time comparisons. Stripe's is checked with its own
// package (routes/processor-webhook.ts). Each refusal says what is wrong in the processor's own terms.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../../shared/http/server.ts';

/** As Stripe's: a signature older (or newer) than this is refused, so a captured request cannot be replayed. */
export const TOLERANCE_SECONDS = 300;

const common = {
  programNotFound: 'Program not found',
  unavailable: 'The event could not be stored right now; retry',
} as const;

export const PADDLE_ERRORS = {
  ...common,
  missingSignature: 'Missing Paddle-Signature header',
  malformedSignature: 'Paddle-Signature header is malformed: expected ts=<unix seconds>;h1=<hex>',
  badSignature: 'Paddle-Signature does not match the body',
  stale: `Paddle-Signature timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No Paddle webhook secret: connect Paddle first',
  notEvent: 'Paddle webhook body must be an event with an event_id and an event_type',
} as const;

export const LEMONSQUEEZY_ERRORS = {
  ...common,
  missingSignature: 'Missing X-Signature header',
  malformedSignature: 'X-Signature header must be a hex HMAC-SHA256',
  badSignature: 'X-Signature does not match the body',
  notConnected: 'No Lemon Squeezy signing secret: connect Lemon Squeezy first',
  notEvent: 'Lemon Squeezy webhook body must have meta.event_name and data.id',
} as const;

export const POLAR_ERRORS = {
  ...common,
  missingSignature: 'Missing webhook-id, webhook-timestamp or webhook-signature header',
  malformedSignature:
    'webhook-timestamp must be unix seconds and webhook-signature a list of v1,<base64> signatures',
  badSignature: 'webhook-signature does not match the body',
  stale: `webhook-timestamp is outside the ${TOLERANCE_SECONDS} s tolerance`,
  notConnected: 'No Polar webhook secret: connect Polar first',
  notEvent: 'Polar webhook body must be an event with a type',
} as const;

const nowSec = () => Math.floor(Date.now() / 1000);
const hmac = (key: string | Buffer, data: Buffer | string) => createHmac('sha256', key).update(data).digest();
const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);
const HEX_SHA256 = /^[0-9a-f]{64}$/i;

/** The verified body, parsed, or the 400 `errors` names. */
function parsed(raw: Buffer, notEvent: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new HttpError(400, notEvent);
  }
}

/**
 * Paddle: `Paddle-Signature: ts=<unix>;h1=<hex>[;h1=<hex>…]`, h1 = HMAC-SHA256 of `"<ts>:<body>"` keyed by the
 * secret string. Several h1 appear while Paddle rotates the secret: any one matching is enough.
 */
export function verifyPaddle(
  raw: Buffer,
  header: string | undefined,
  secrets: string[],
  now = nowSec(),
): unknown {
  const E = PADDLE_ERRORS;
  if (!header) throw new HttpError(400, E.missingSignature);
  let ts: string | null = null;
  const h1: Buffer[] = [];
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (k === 'ts') ts = v;
    else if (k === 'h1' && HEX_SHA256.test(v)) h1.push(Buffer.from(v, 'hex'));
  }
  if (ts === null || !/^\d{1,12}$/.test(ts) || h1.length === 0)
    throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const signed = Buffer.concat([Buffer.from(`${ts}:`), raw]);
  const ok = secrets.some((s) => {
    const mac = hmac(s, signed);
    return h1.some((h) => sameBytes(mac, h));
  });
  if (!ok) throw new HttpError(400, E.badSignature);
  // After the signature: a stale one is a genuine event replayed (or delivered too late).
  if (Math.abs(now - Number(ts)) > TOLERANCE_SECONDS) throw new HttpError(400, E.stale);
  return parsed(raw, E.notEvent);
}

/** Lemon Squeezy: `X-Signature` = hex HMAC-SHA256 of the body keyed by the secret the advertiser typed. No timestamp. */
export function verifyLemonSqueezy(raw: Buffer, header: string | undefined, secrets: string[]): unknown {
  const E = LEMONSQUEEZY_ERRORS;
  if (!header) throw new HttpError(400, E.missingSignature);
  if (!HEX_SHA256.test(header.trim())) throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const sig = Buffer.from(header.trim(), 'hex');
  if (!secrets.some((s) => sameBytes(hmac(s, raw), sig))) throw new HttpError(400, E.badSignature);
  return parsed(raw, E.notEvent);
}

/**
 * The keys a Polar secret may sign with: the Standard Webhooks one (the base64 after `whsec_`, secrets issued
 * from 2026-09-08) and the legacy one (the whole secret's UTF-8 bytes, what @polar-sh/sdk's validateEvent
 * uses).
 */
export function polarKeys(secret: string): Buffer[] {
  const keys = [Buffer.from(secret, 'utf8')];
  if (secret.startsWith('whsec_')) {
    const b64 = secret.slice('whsec_'.length);
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) keys.push(Buffer.from(b64, 'base64'));
  }
  return keys;
}

/**
 * Polar (Standard Webhooks): `webhook-signature: v1,<base64>[ v1,<base64>…]` = HMAC-SHA256 of
 * `"<webhook-id>.<webhook-timestamp>.<body>"`. Returns the parsed body.
 */
export function verifyPolar(
  raw: Buffer,
  headers: { id?: string; timestamp?: string; signature?: string },
  secrets: string[],
  now = nowSec(),
): unknown {
  const E = POLAR_ERRORS;
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) throw new HttpError(400, E.missingSignature);
  const sigs = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  if (!/^\d{1,12}$/.test(timestamp) || sigs.length === 0) throw new HttpError(400, E.malformedSignature);
  if (secrets.length === 0) throw new HttpError(400, E.notConnected);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), raw]);
  const ok = secrets.some((s) =>
    polarKeys(s).some((key) => {
      const mac = hmac(key, signed);
      return sigs.some((sig) => sameBytes(mac, sig));
    }),
  );
  if (!ok) throw new HttpError(400, E.badSignature);
  if (Math.abs(now - Number(timestamp)) > TOLERANCE_SECONDS) throw new HttpError(400, E.stale);
  return parsed(raw, E.notEvent);
}
