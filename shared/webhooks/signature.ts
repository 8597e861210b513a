// Standard Webhooks signatures (CONTRACT "Webhooks to integrators", Format): HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>", keyed by the base64-decoded part of the `whsec_` secret, written
// `v1,<base64>`; during a rotation both secrets sign and the signatures are space-separated. The npm
// `standardwebhooks` library verifies what this signs (test/unit/webhook-signature.test.ts).
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new secret: `whsec_` and the standard base64 of 24 random bytes (what the verifier libraries decode). */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/** `v1,<base64 HMAC>` of one secret. */
export function signatureOf(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one attempt, signed by every secret given (the current one first). */
export function signedHeaders(
  secrets: readonly string[],
  webhookId: string,
  at: Date,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signatureOf(s, webhookId, timestamp, body)).join(' '),
  };
}

/** `whsec_AbCd…wxyz`: enough to tell secrets apart, not to use one. */
export function maskSigningSecret(secret: string): string {
  const body = secret.slice(PREFIX.length);
  return `${PREFIX}${body.slice(0, 4)}…${body.slice(-4)}`;
}
