// A source's credentials at rest (docs/importing.md "Credentials"): AES-256-GCM with the key of
// IMPORT_SECRET_KEY, a fresh 96-bit IV per import, the program's id as additional data (a row's ciphertext
// copied onto another program's import does not open). Stored as iv ‖ tag ‖ ciphertext until the import
// ends, then deleted; never logged, never answered.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** IMPORT_SECRET_KEY: 32 bytes as 64 hex digits or base64; null when it is not that. */
export function parseSecretKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const b = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (b.length === 32) return b;
  }
  return null;
}

/** A new key, as `npm start` keeps one (64 hex digits). */
export const newSecretKey = (): string => randomBytes(32).toString('hex');

const aad = (programId: number) => Buffer.from(`svc-import:${programId}`);

export function seal(key: Buffer, programId: number, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(programId));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The plaintext; throws when the key, the program or the bytes are not the ones it was sealed with. */
export function unseal(key: Buffer, programId: number, box: Buffer): string {
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, 12));
  decipher.setAAD(aad(programId));
  decipher.setAuthTag(box.subarray(12, 28));
  return Buffer.concat([decipher.update(box.subarray(28)), decipher.final()]).toString('utf8');
}
