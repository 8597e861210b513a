// Password hashing (docs/security.md "Sign-in limits and password hashing"): Argon2id with OWASP's
// parameters; the scrypt hashes of earlier releases still verify and are marked for replacement.
import t from 'tap';
import { hash } from '@node-rs/argon2';
import {
  ARGON2,
  dummyHash,
  hashPassword,
  needsRehash,
  verifyPassword,
} from '../../shared/domain/passwords.ts';
import { CURRENT_HASH as CURRENT, oldScryptHash } from '../helpers/passwords.ts';

t.test('new hashes are Argon2id, m=19456 KiB, t=2, p=1, salted', async (t) => {
  const a = await hashPassword('correct horse battery');
  const b = await hashPassword('correct horse battery');
  t.match(a, CURRENT);
  t.not(a, b, 'a random salt each time');
  t.equal(await verifyPassword('correct horse battery', a), true);
  t.equal(await verifyPassword('correct horse batterY', a), false);
  t.equal(needsRehash(a), false, 'current: kept');
  t.same(ARGON2, { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
});

t.test('scrypt hashes of earlier releases verify, and need a rehash', async (t) => {
  const old = await oldScryptHash('an old password');
  t.equal(await verifyPassword('an old password', old), true);
  t.equal(await verifyPassword('an old passw0rd', old), false);
  t.equal(needsRehash(old), true);
  // The hash the tests of earlier releases knew by heart: the format is exactly the old one.
  t.match(old, /^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
});

t.test(
  'argon2 hashes weaker than the current parameters need a rehash; stronger ones are kept',
  async (t) => {
    const pw = 'some password';
    const weaker = [
      await hash(pw, { ...ARGON2, memoryCost: 4096 }),
      await hash(pw, { ...ARGON2, timeCost: 1 }),
      await hash(pw, { ...ARGON2, algorithm: 1 /* Argon2i */ }),
      await hash(pw, { ...ARGON2, version: 0 /* 0x10 */ }),
    ];
    for (const h of weaker) {
      t.equal(await verifyPassword(pw, h), true, `${h.slice(0, 30)} verifies`);
      t.equal(needsRehash(h), true, `${h.slice(0, 30)} needs a rehash`);
    }
    const stronger = await hash(pw, { ...ARGON2, memoryCost: 65536, timeCost: 3 });
    t.equal(await verifyPassword(pw, stronger), true);
    t.equal(needsRehash(stronger), false, 'a stronger hash is not weakened');
  },
);

t.test('passwords are compared NFKC-normalised, in both kinds of hash', async (t) => {
  const composed = 'caf\u00e9 au lait!'; // é as one code point
  const decomposed = 'cafe\u0301 au lait!'; // e + combining acute
  t.equal(await verifyPassword(decomposed, await hashPassword(composed)), true);
  t.equal(await verifyPassword(decomposed, await oldScryptHash(composed)), true);
});

t.test('no stored hash, or one no kind can read: false, never a throw', async (t) => {
  for (const stored of [null, undefined, '', 'plain', '$argon2id$v=19$garbage', 'scrypt$0$8$1$AA$AA']) {
    t.equal(await verifyPassword('whatever password', stored), false, String(stored));
  }
  t.equal(needsRehash('$argon2id$v=19$garbage'), true);
});

t.test('the dummy hash costs what a real verify costs: the current parameters', async (t) => {
  const d = await dummyHash();
  t.match(d, CURRENT);
  t.equal(needsRehash(d), false);
  t.equal(await dummyHash(), d, 'made once per process');
});
