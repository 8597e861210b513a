// Secrets (tracking tokens, API keys, session tokens) are random, shown once, and stored only as
// SHA-256 hashes; lookups compare hashes, so a timing difference reveals nothing about the secret.
import { createHash, randomBytes } from 'node:crypto';

// aff_ tracking token, affk_ management key, sess_ dashboard session; psess_ partner session, pinv_ partner
// invite, pmagic_ partner sign-in link.
export type SecretPrefix = 'aff_' | 'affk_' | 'sess_' | 'psess_' | 'pinv_' | 'pmagic_';

export function generateSecret(prefix: SecretPrefix): string {
  return prefix + randomBytes(24).toString('base64url');
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** `aff_AbCd…wxyz`: enough to recognise a secret, not to use it. */
export function maskSecret(secret: string): string {
  const prefix = secret.slice(0, secret.indexOf('_') + 1);
  const body = secret.slice(prefix.length);
  return `${prefix}${body.slice(0, 4)}…${body.slice(-4)}`;
}
