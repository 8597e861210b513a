// Password hashes for tests of the hashing and its upgrade at sign-in (shared/domain/passwords.ts).
import { randomBytes, scrypt } from 'node:crypto';

/** A hash of the current kind: Argon2id, m=19456 KiB, t=2, p=1, a 16-byte salt, a 32-byte hash. */
export const CURRENT_HASH = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;

/** A hash as earlier releases stored it: scrypt N=2^15, r=8, p=1, 32 bytes, of the NFKC password. */
export async function oldScryptHash(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, 32, { N: 32768, r: 8, p: 1, maxmem: 256 << 20 }, (e, k) =>
      e ? reject(e) : resolve(k),
    ),
  );
  return `scrypt$32768$8$1$${salt.toString('base64url')}$${key.toString('base64url')}`;
}
