// Older password hashes are upgraded at the next successful sign-in (CONTRACT part three "Sign-in resists
// guessing"; docs/security.md "Sign-in limits and password hashing"): a dashboard user or a partner account
// whose stored hash is an earlier release's scrypt (or a weaker argon2) signs in with it, and the stored hash
// becomes Argon2id with the current parameters, in the same request, compare-and-set on the old hash.
import t from 'tap';
import { hash } from '@node-rs/argon2';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, signup } from '../helpers/accounts.ts';
import { PARTNER_PASSWORD, apiProgram, invitedPartner } from '../helpers/partners.ts';
import { CURRENT_HASH, oldScryptHash } from '../helpers/passwords.ts';
import { ARGON2, verifyPassword } from '../../shared/domain/passwords.ts';
import { createAuthDal } from '../../services/api/modules/auth/dal.ts';
import { replacePasswordHash } from '../../services/api/modules/partner-auth/dal.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const userHash = async (id: number) =>
  (await sql<{ h: string }[]>`select password_hash as h from users where id = ${id}`)[0]!.h;
const accountHash = async (id: number) =>
  (await sql<{ h: string }[]>`select password_hash as h from partner_accounts where id = ${id}`)[0]!.h;

t.test('a dashboard user with a scrypt hash signs in, and the hash becomes Argon2id', async (t) => {
  const u = await signup(svc);
  const old = await oldScryptHash(PASSWORD);
  await sql`update users set password_hash = ${old} where id = ${u.userId}`;

  const wrong = await postJson(url('/api/auth/login'), { email: u.email, password: 'not the password' });
  t.equal(wrong.status, 401);
  t.equal(await userHash(u.userId), old, 'a failed sign-in changes nothing');

  const ok = await postJson(url('/api/auth/login'), { email: u.email, password: PASSWORD });
  t.equal(ok.status, 200, 'the old hash still signs in');
  const upgraded = await userHash(u.userId);
  t.match(upgraded, CURRENT_HASH, 'replaced in the same request');
  t.equal(await verifyPassword(PASSWORD, upgraded), true, 'a hash of the same password');

  const again = await postJson(url('/api/auth/session'), { email: u.email, password: PASSWORD });
  t.equal(again.status, 200);
  t.equal(await userHash(u.userId), upgraded, 'a current hash is kept as it is');
});

t.test('a weaker argon2 hash is upgraded at the cookie log in', async (t) => {
  const u = await signup(svc);
  const weak = await hash(PASSWORD, { ...ARGON2, memoryCost: 4096, timeCost: 1 });
  await sql`update users set password_hash = ${weak} where id = ${u.userId}`;
  const ok = await postJson(url('/api/auth/session'), { email: u.email, password: PASSWORD });
  t.equal(ok.status, 200);
  t.match(await userHash(u.userId), CURRENT_HASH);
});

t.test('a partner account with a scrypt hash signs in, and the hash becomes Argon2id', async (t) => {
  const owner = await signup(svc);
  const program = await apiProgram(svc, owner);
  const p = await invitedPartner(svc, owner, program.id);
  const old = await oldScryptHash(PARTNER_PASSWORD);
  await sql`update partner_accounts set password_hash = ${old} where id = ${p.accountId}`;
  const ok = await postJson(url('/api/partner/auth/session'), { email: p.email, password: PARTNER_PASSWORD });
  t.equal(ok.status, 200);
  const upgraded = await accountHash(p.accountId);
  t.match(upgraded, CURRENT_HASH);
  t.equal(await verifyPassword(PARTNER_PASSWORD, upgraded), true);
});

t.test(
  'sign-ins racing on one old hash: all succeed, and one current hash of the password stays',
  async (t) => {
    const u = await signup(svc);
    await sql`update users set password_hash = ${await oldScryptHash(PASSWORD)} where id = ${u.userId}`;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        postJson(url('/api/auth/login'), { email: u.email, password: PASSWORD }),
      ),
    );
    t.same(
      answers.map((a) => a.status),
      [200, 200, 200, 200],
    );
    const final = await userHash(u.userId);
    t.match(final, CURRENT_HASH);
    t.equal(await verifyPassword(PASSWORD, final), true);
  },
);

t.test('the replacement is compare-and-set: a hash changed meanwhile is never overwritten', async (t) => {
  const u = await signup(svc);
  const changed = await userHash(u.userId);
  const stale = await oldScryptHash(PASSWORD);
  const next = await oldScryptHash('whatever password');
  t.equal(await createAuthDal(sql).replacePasswordHash(u.userId, stale, next), false);
  t.equal(await userHash(u.userId), changed, 'the newer password stays');
  t.equal(await createAuthDal(sql).replacePasswordHash(u.userId, changed, next), true);
  t.equal(await userHash(u.userId), next);

  const owner = await signup(svc);
  const p = await invitedPartner(svc, owner, (await apiProgram(svc, owner)).id);
  const current = await accountHash(p.accountId);
  t.equal(await replacePasswordHash(sql, p.accountId, stale, next), false);
  t.equal(await accountHash(p.accountId), current);
});
