// Passwords (docs/security.md "Sign-in limits and password hashing"): Argon2id with OWASP's parameters
// (m=19 MiB, t=2, p=1; @node-rs/argon2, on libuv's thread pool), stored in its PHC string
// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`. Hashes of earlier releases, `scrypt$N$r$p$salt$hash`
// (N=2^15), and argon2 hashes with weaker parameters still verify; `needsRehash` tells the sign-in routes to
// replace them with a current one once the password is known to be right. Passwords are NFKC-normalised
// first, so the same password typed on another keyboard or system still matches.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { hash, parseOptions, verify } from '@node-rs/argon2';
import type { Options } from '@node-rs/argon2';

/** The current parameters (OWASP Password Storage Cheat Sheet: Argon2id, m=19456 KiB, t=2, p=1). */
export const ARGON2: Readonly<Required<Pick<Options, 'memoryCost' | 'timeCost' | 'parallelism'>>> & {
  algorithm: NonNullable<Options['algorithm']>;
} = { algorithm: 2 /* Argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 };

const normal = (password: string) => password.normalize('NFKC');

export function hashPassword(password: string): Promise<string> {
  return hash(normal(password), ARGON2);
}

/**
 * Whether `password` matches `stored`. No stored hash (an unknown email, an account without a password)
 * verifies against a dummy hash of the current parameters and answers false, so both paths cost the same
 * and the time taken does not tell which emails exist.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  if (stored === null || stored === undefined) {
    await verifyArgon2(await dummyHash(), password);
    return false;
  }
  if (stored.startsWith('$argon2')) return verifyArgon2(stored, password);
  if (stored.startsWith('scrypt$')) return verifyScrypt(password, stored);
  return false;
}

/** True when `stored` is not an Argon2id hash of at least the current parameters: replace it at sign-in. */
export function needsRehash(stored: string): boolean {
  if (!stored.startsWith('$argon2id$')) return true;
  try {
    const o = parseOptions(stored);
    return (
      o.version !== 1 /* 0x13 */ ||
      o.memoryCost < ARGON2.memoryCost ||
      o.timeCost < ARGON2.timeCost ||
      o.outputLen < 32 ||
      o.saltLen < 16
    );
  } catch {
    return true;
  }
}

async function verifyArgon2(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, normal(password));
  } catch {
    return false; // not a hash this library can read
  }
}

let dummy: Promise<string> | null = null;
/** A hash of a random password with the current parameters, made once per process on first use. */
export function dummyHash(): Promise<string> {
  dummy ??= hash(randomBytes(32).toString('base64url'), ARGON2);
  return dummy;
}

// ---- scrypt hashes of earlier releases (verify only) ----

async function verifyScrypt(password: string, stored: string): Promise<boolean> {
  const [, n, r, p, salt, key] = stored.split('$');
  const N = Number(n);
  const R = Number(r);
  const P = Number(p);
  if (![N, R, P].every((x) => Number.isSafeInteger(x) && x > 0) || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const derived = await new Promise<Buffer | null>((resolve) =>
    scryptCb(
      normal(password),
      Buffer.from(salt, 'base64url'),
      expected.length,
      { N, r: R, p: P, maxmem: 256 * 1024 * 1024 },
      (err, k) => resolve(err ? null : k),
    ),
  );
  return derived !== null && derived.length === expected.length && timingSafeEqual(derived, expected);
}
