// Partner accounts and sessions (CONTRACT part two "Credentials, extended", "Partners who sign in"):
// invites, password sign-in, the cookie session and its CSRF rule, sign-out, magic links, the account an
// invite may reach, and the claims each way of signing in makes.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import {
  PARTNER_PASSWORD,
  addPartner,
  apiProgram,
  invitedPartner,
  magicTokenOf,
  mailsTo,
  tokenOf,
  uniqEmail,
} from '../helpers/partners.ts';
import { oldScryptHash } from '../helpers/passwords.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const program = await apiProgram(svc, owner);

t.test(
  'an invite: invite_url once, mailed; accepting it makes the account, claims the record, signs in',
  async (t) => {
    const added = await addPartner(svc, owner, program.id);
    t.match(added.inviteUrl, new RegExp(`^${svc.baseUrl}/partner/invite#pinv_[A-Za-z0-9_-]{32}$`));
    const [mail] = await mailsTo(sql, svc.prefix, added.email);
    t.equal(mail?.template, 'partner_invite', 'the invite is mailed');
    t.equal((mail?.data as { url: string }).url, added.inviteUrl, 'with the same URL');
    const [stored] = await sql<{ n: number }[]>`
    select count(*)::int as n from partner_invites where partner_id = ${added.partnerId}
      and token_hash = sha256(convert_to(${tokenOf(added.inviteUrl!)}, 'UTF8'))`;
    t.equal(stored!.n, 1, 'stored as its SHA-256');

    const token = tokenOf(added.inviteUrl!);
    const noPassword = await send('POST', url('/api/partner/auth/accept-invite'), { token });
    t.same(
      noPassword.body,
      { error: 'password must be at least 10 characters' },
      'password required: no account',
    );
    const r = await send('POST', url('/api/partner/auth/accept-invite'), {
      token,
      password: PARTNER_PASSWORD,
      name: 'Pat Jones',
    });
    t.equal(r.status, 200);
    const d = r.body.data as {
      session_token: string;
      expires_at: string;
      account: { email: string; name: string };
    };
    t.match(d.session_token, /^psess_/);
    t.same(d.account.email, added.email);
    t.equal(d.account.name, 'Pat Jones');
    const me = await getJson(url('/api/partner/me'), bearer(d.session_token));
    t.equal(me.status, 200);
    t.same(
      (me.body.data as { partners: { id: number; claimed_via: string }[] }).partners.map((p) => [
        p.id,
        p.claimed_via,
      ]),
      [[added.partnerId, 'invite']],
    );
    const again = await send('POST', url('/api/partner/auth/accept-invite'), {
      token,
      password: PARTNER_PASSWORD,
    });
    t.same([again.status, again.body], [400, { error: 'Invalid or expired invite' }], 'one use');
    const signIns = await sql<{ ip_hash: string | null }[]>`
    select ip_hash from partner_sign_ins where account_id = (select id from partner_accounts where email = ${added.email})`;
    t.equal(signIns.length, 1, 'the sign-in is recorded');
    t.match(signIns[0]!.ip_hash, /^[A-Za-z0-9_-]{43}$/, 'as an IP hash, not the address');
  },
);

t.test('invites: unknown, expired and re-issued (the older dies) are 400', async (t) => {
  const added = await addPartner(svc, owner, program.id);
  const first = tokenOf(added.inviteUrl!);
  const re = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${program.id}/partners/${added.partnerId}/invite`),
    undefined,
    bearer(owner.session),
  );
  t.equal(re.status, 201);
  const second = tokenOf((re.body.data as { invite_url: string }).invite_url);
  t.not(second, first);
  const invalid = { error: 'Invalid or expired invite' };
  for (const token of [first, 'pinv_nope', 'x']) {
    const r = await send('POST', url('/api/partner/auth/accept-invite'), {
      token,
      password: PARTNER_PASSWORD,
    });
    t.same([r.status, r.body], [400, invalid], `token ${token.slice(0, 8)}`);
  }
  await sql`update partner_invites set expires_at = now() - interval '1 second'
            where partner_id = ${added.partnerId} and revoked_at is null`;
  const expired = await send('POST', url('/api/partner/auth/accept-invite'), {
    token: second,
    password: PARTNER_PASSWORD,
  });
  t.same([expired.status, expired.body], [400, invalid], 'expired');
  t.equal((await mailsTo(sql, svc.prefix, added.email)).length, 2, 'both invites were mailed');
});

t.test('an invite reaches an existing account only with its password', async (t) => {
  const p = await invitedPartner(svc, owner, program.id);
  const other = await apiProgram(svc, owner);
  // The same email in another workspace: a new record, a new invite, the same person's account.
  const owner2 = await signup(svc);
  const program2 = await apiProgram(svc, owner2);
  const added = await addPartner(svc, owner2, program2.id, { email: p.email });
  t.ok(added.inviteUrl, 'a record nobody claimed gets an invite');
  const token = tokenOf(added.inviteUrl!);
  const noPw = await send('POST', url('/api/partner/auth/accept-invite'), { token });
  t.same([noPw.status, noPw.body], [401, { error: 'Invalid email or password' }], 'no password: 401');
  const wrong = await send('POST', url('/api/partner/auth/accept-invite'), {
    token,
    password: 'wrong password!',
  });
  t.same([wrong.status, wrong.body], [401, { error: 'Invalid email or password' }]);
  const ok = await send('POST', url('/api/partner/auth/accept-invite'), {
    token,
    password: PARTNER_PASSWORD,
  });
  t.equal(ok.status, 200);
  t.equal((ok.body.data as { account: { id: number } }).account.id, p.accountId, 'the same account');
  // Added to another program of the first workspace: the record is claimed, so no invite, a notice.
  const more = await addPartner(svc, owner, other.id, { email: p.email });
  t.equal(more.inviteUrl, null, 'a claimed record needs no invite');
  const programs = await getJson(url('/api/partner/programs'), bearer(p.session));
  t.same(
    (programs.body.data as { program: { id: number } }[]).map((x) => x.program.id).sort((a, b) => a - b),
    [program.id, other.id, program2.id].sort((a, b) => a - b),
    'the account sees the programs of both records, in both workspaces',
  );
  // A magic-link-only account cannot be reached with an invite at all.
  const email = uniqEmail('magic');
  await addPartner(svc, owner, program.id, { email });
  await send('POST', url('/api/partner/auth/magic-link'), { email });
  const v = await send('POST', url('/api/partner/auth/magic-link/verify'), {
    token: await magicTokenOf(sql, svc.prefix, email),
  });
  t.equal(v.status, 200);
  const third = await addPartner(svc, owner2, program2.id, { email });
  const r = await send('POST', url('/api/partner/auth/accept-invite'), {
    token: tokenOf(third.inviteUrl!),
    password: 'attacker chosen 1',
  });
  t.equal(r.status, 409, 'an existing account without a password: 409');
  t.match(r.body.error, /request a sign-in link/);
});

t.test('password sign-in, the bearer session, sign-out kills it at once', async (t) => {
  const p = await invitedPartner(svc, owner, program.id);
  const bad = await send('POST', url('/api/partner/auth/login'), {
    email: p.email,
    password: 'nope nope nope',
  });
  t.same([bad.status, bad.body], [401, { error: 'Invalid email or password' }]);
  const unknown = await send('POST', url('/api/partner/auth/login'), {
    email: uniqEmail(),
    password: PARTNER_PASSWORD,
  });
  t.same([unknown.status, unknown.body], [401, { error: 'Invalid email or password' }]);
  const missing = await send('POST', url('/api/partner/auth/login'), { email: p.email });
  t.same([missing.status, missing.body], [400, { error: 'email and password are required' }]);
  const r = await send('POST', url('/api/partner/auth/login'), {
    email: p.email.toUpperCase(),
    password: PARTNER_PASSWORD,
  });
  t.equal(r.status, 200, 'the email is case-insensitive');
  const session = (r.body.data as { session_token: string }).session_token;
  t.equal((await getJson(url('/api/partner/me'), bearer(session))).status, 200);
  const out = await send('POST', url('/api/partner/auth/logout'), undefined, bearer(session));
  t.equal(out.status, 204);
  const after = await getJson(url('/api/partner/me'), bearer(session));
  t.same([after.status, after.body], [401, { error: 'Invalid or expired session' }], 'dead at once');
  t.equal((await getJson(url('/api/partner/me'), bearer(p.session))).status, 200, 'other sessions live');
  await sql`update partner_sessions set expires_at = now() - interval '1 second'
            where token_hash = sha256(convert_to(${p.session}, 'UTF8'))`;
  t.equal((await getJson(url('/api/partner/me'), bearer(p.session))).status, 401, 'expired: 401');
});

t.test(
  'a password sign-in is one transaction: no session without its sign-in record, no hash replaced',
  async (t) => {
    const p = await invitedPartner(svc, owner, program.id);
    const old = await oldScryptHash(PARTNER_PASSWORD);
    await sql`update partner_accounts set password_hash = ${old} where id = ${p.accountId}`;
    const counts = async () =>
      (
        await sql<{ sessions: number; signIns: number; hash: string }[]>`
        select (select count(*)::int from partner_sessions where account_id = ${p.accountId}) as sessions,
               (select count(*)::int from partner_sign_ins where account_id = ${p.accountId}) as "signIns",
               (select password_hash from partner_accounts where id = ${p.accountId}) as hash`
      )[0]!;
    const before = await counts();
    // A trigger that refuses this account's sign-in record stands in for a failure after the session is
    // written (partner-auth/operations.ts signIn).
    await sql.unsafe(`
    create or replace function refuse_partner_sign_in() returns trigger language plpgsql as $$
    begin raise exception 'sign-in record refused for the test'; end $$;
    drop trigger if exists refuse_partner_sign_in on partner_sign_ins;
    create trigger refuse_partner_sign_in before insert on partner_sign_ins
      for each row when (new.account_id = ${p.accountId}) execute function refuse_partner_sign_in();`);
    const dropTrigger = () => sql.unsafe('drop trigger if exists refuse_partner_sign_in on partner_sign_ins');
    t.teardown(dropTrigger);
    const login = () =>
      send('POST', url('/api/partner/auth/login'), { email: p.email, password: PARTNER_PASSWORD });
    t.equal((await login()).status, 500);
    t.same(await counts(), before, 'neither the session nor the new hash outlives the failed record');
    await dropTrigger();
    t.equal((await login()).status, 200);
    const after = await counts();
    t.same([after.sessions, after.signIns], [before.sessions + 1, before.signIns + 1], 'both, together');
    t.not(after.hash, old, 'and the older kind of hash replaced with them');
  },
);

t.test('the cookie session: SameSite=Lax, HttpOnly, CSRF on writes, DELETE clears it', async (t) => {
  const p = await invitedPartner(svc, owner, program.id);
  const res = await fetch(url('/api/partner/auth/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: p.email, password: PARTNER_PASSWORD }),
  });
  t.equal(res.status, 200);
  const setCookie = res.headers.get('set-cookie')!;
  t.match(
    setCookie,
    /^svc_partner_session=psess_[A-Za-z0-9_-]+; HttpOnly; SameSite=Lax; Path=\/; Max-Age=\d+$/,
  );
  const body = (await res.json()) as { data: { csrf_token: string; account: { email: string } } };
  t.equal(body.data.account.email, p.email);
  const cookie = { cookie: setCookie.split(';')[0]! };
  const got = await getJson(url('/api/partner/auth/session'), cookie);
  t.equal((got.body.data as { csrf_token: string }).csrf_token, body.data.csrf_token);
  t.equal((await getJson(url('/api/partner/programs'), cookie)).status, 200, 'a read needs no CSRF token');
  const noCsrf = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: p.email },
    cookie,
  );
  t.same([noCsrf.status, noCsrf.body], [403, { error: 'CSRF token missing or invalid' }]);
  const wrongCsrf = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: p.email },
    // Another first character (a token starting with `x` made 'x' + rest the right one: 1 run in 64).
    {
      ...cookie,
      'x-csrf-token': (body.data.csrf_token.startsWith('x') ? 'y' : 'x') + body.data.csrf_token.slice(1),
    },
  );
  t.equal(wrongCsrf.status, 403);
  const withCsrf = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: p.email },
    { ...cookie, 'x-csrf-token': body.data.csrf_token },
  );
  t.equal(withCsrf.status, 200);
  const delNoCsrf = await send('DELETE', url('/api/partner/auth/session'), undefined, cookie);
  t.equal(delNoCsrf.status, 403, 'sign-out with the cookie needs the CSRF token too');
  const del = await fetch(url('/api/partner/auth/session'), {
    method: 'DELETE',
    headers: { ...cookie, 'x-csrf-token': body.data.csrf_token },
  });
  t.equal(del.status, 204);
  t.match(del.headers.get('set-cookie'), /^svc_partner_session=; .*Max-Age=0; Expires=Thu, 01 Jan 1970/);
  t.equal((await getJson(url('/api/partner/programs'), cookie)).status, 401, 'the cookie is dead');
  // Over HTTPS (as a trusted proxy says): Secure.
  const secure = await fetch(url('/api/partner/auth/session'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-proto': 'https' },
    body: JSON.stringify({ email: p.email, password: PARTNER_PASSWORD }),
  });
  t.match(secure.headers.get('set-cookie'), /; Secure$/);
});

t.test(
  'magic links: 202 whatever the email, mailed only to known addresses, 15 minutes, one use',
  async (t) => {
    const stranger = uniqEmail('stranger');
    const r = await send('POST', url('/api/partner/auth/magic-link'), { email: stranger });
    t.same([r.status, r.body], [202, { data: { sent: true } }]);
    t.equal((await mailsTo(sql, svc.prefix, stranger)).length, 0, 'nothing is mailed to an unknown address');
    const bad = await send('POST', url('/api/partner/auth/magic-link'), { email: 'not-an-email' });
    t.same([bad.status, bad.body], [400, { error: 'email must be a valid email address' }]);

    // Two records with one email, in two workspaces, none claimed: a sign-in link claims neither; they
    // are invitations, which the mailbox's owner accepts or declines.
    const email = uniqEmail('magic');
    const a = await addPartner(svc, owner, program.id, { email });
    const owner2 = await signup(svc);
    const program2 = await apiProgram(svc, owner2);
    const b = await addPartner(svc, owner2, program2.id, { email: email.toUpperCase() });
    const known = await send('POST', url('/api/partner/auth/magic-link'), {
      email: `  ${email.toUpperCase()} `,
    });
    t.same([known.status, known.body], [202, { data: { sent: true } }], 'the same answer');
    const token = await magicTokenOf(sql, svc.prefix, email);
    t.match(token, /^pmagic_/);
    const [link] = await sql<{ minutes: number }[]>`
    select round(extract(epoch from expires_at - created_at) / 60)::int as minutes from partner_magic_links
    where token_hash = sha256(convert_to(${token!}, 'UTF8'))`;
    t.equal(link!.minutes, 15);
    const v = await send('POST', url('/api/partner/auth/magic-link/verify'), { token });
    t.equal(v.status, 200);
    const session = (v.body.data as { session_token: string }).session_token;
    const me = await getJson(url('/api/partner/me'), bearer(session));
    const meData = me.body.data as {
      account: { has_password: boolean; email_verified: boolean; mailbox_verified: boolean };
      partners: { id: number }[];
    };
    t.same(meData.partners, [], 'no record is claimed by the email alone');
    t.match(meData.account, { has_password: false, email_verified: true, mailbox_verified: true });
    const invitations = await getJson(url('/api/partner/invitations'), bearer(session));
    t.same(
      (invitations.body.data as { partner_id: number }[]).map((i) => i.partner_id).sort(),
      [a.partnerId, b.partnerId].sort(),
      'both records are invitations',
    );
    t.match(invitations.body.data, [
      { workspace_name: String, programs: [{ name: String, currency: 'USD' }] },
    ]);
    const accept = await send(
      'POST',
      url(`/api/partner/invitations/${a.partnerId}/accept`),
      {},
      bearer(session),
    );
    t.match([accept.status, accept.body], [200, { data: { partner_id: a.partnerId } }]);
    const decline = await send(
      'POST',
      url(`/api/partner/invitations/${b.partnerId}/decline`),
      {},
      bearer(session),
    );
    t.equal(decline.status, 200);
    const again = await send(
      'POST',
      url(`/api/partner/invitations/${b.partnerId}/accept`),
      {},
      bearer(session),
    );
    t.same([again.status, again.body], [404, { error: 'Invitation not found' }], 'declined: gone');
    const twice = await send(
      'POST',
      url(`/api/partner/invitations/${a.partnerId}/accept`),
      {},
      bearer(session),
    );
    t.equal(twice.status, 404, 'accepted: not an invitation any more');
    // An id that is no number is an unknown invitation (schemathesis sent `null,null`: once a 500).
    for (const partnerId of ['null%2Cnull', 'abc', '99999999999999999999']) {
      for (const answer of ['accept', 'decline']) {
        const r = await send(
          'POST',
          url(`/api/partner/invitations/${partnerId}/${answer}`),
          {},
          bearer(session),
        );
        t.same([r.status, r.body], [404, { error: 'Invitation not found' }], `${answer} ${partnerId}`);
      }
    }
    const claimed = await getJson(url('/api/partner/me'), bearer(session));
    t.same(
      (claimed.body.data as { partners: { id: number; claimed_via: string }[] }).partners.map((p) => [
        p.id,
        p.claimed_via,
      ]),
      [[a.partnerId, 'invitation']],
      'the accepted record is claimed, the declined one not',
    );
    t.same((await getJson(url('/api/partner/invitations'), bearer(session))).body.data, []);
    t.equal(meData.account.has_password, false, 'a magic-link account has no password');
    const used = await send('POST', url('/api/partner/auth/magic-link/verify'), { token });
    t.same([used.status, used.body], [400, { error: 'Invalid or expired sign-in link' }], 'one use');
    await send('POST', url('/api/partner/auth/magic-link'), { email });
    const token2 = await magicTokenOf(sql, svc.prefix, email);
    await sql`update partner_magic_links set expires_at = now() - interval '1 second'
            where token_hash = sha256(convert_to(${token2!}, 'UTF8'))`;
    const expired = await send('POST', url('/api/partner/auth/magic-link/verify'), { token: token2 });
    t.same([expired.status, expired.body], [400, { error: 'Invalid or expired sign-in link' }], 'expired');
    // A record of another workspace added later with that email is not seen by the email alone.
    const owner3 = await signup(svc);
    const c = await addPartner(svc, owner3, (await apiProgram(svc, owner3)).id, { email });
    const me2 = await getJson(url('/api/partner/me'), bearer(session));
    t.notOk(
      (me2.body.data as { partners: { id: number }[] }).partners.some((p) => p.id === c.partnerId),
      'an unclaimed record with the same email is not claimed',
    );
    t.match(
      (await getJson(url('/api/partner/invitations'), bearer(session))).body.data,
      [{ partner_id: c.partnerId }],
      'it is an invitation',
    );
    // A password set from the session; then sign-in with it works.
    const set = await send('PUT', url('/api/partner/me'), { password: 'a new password 1' }, bearer(session));
    t.equal(set.status, 200);
    const login = await send('POST', url('/api/partner/auth/login'), { email, password: 'a new password 1' });
    t.equal(login.status, 200);
    // Changing it again needs the current one.
    const change = await send('PUT', url('/api/partner/me'), { password: 'another pass 2' }, bearer(session));
    t.same([change.status, change.body], [400, { error: 'current_password is incorrect' }]);
  },
);

t.test(
  'pre-hijacking: a password set before the email was proven dies at the first magic link',
  async (t) => {
    // Someone accepts an invite for an address that is not theirs (the advertiser sees invite_url) ...
    const p = await invitedPartner(svc, owner, program.id);
    // ... the real owner of the address signs in by mail: the password and its sessions are gone.
    await send('POST', url('/api/partner/auth/magic-link'), { email: p.email });
    const v = await send('POST', url('/api/partner/auth/session/magic-link'), {
      token: await magicTokenOf(sql, svc.prefix, p.email),
    });
    t.equal(v.status, 200, 'the cookie variant');
    t.match(v.body.data, { account: { has_password: false, email_verified: true, mailbox_verified: true } });
    t.equal((await getJson(url('/api/partner/me'), bearer(p.session))).status, 401, 'the old session ended');
    // ... and the record claimed by accepting the invite (which the advertiser could have done itself) is an
    // invitation again: its workspace sees the owner's account only once the owner accepts.
    const [claims] = await sql<{ n: number }[]>`
      select count(*)::int as n from partner_claims where account_id = ${p.accountId}`;
    t.equal(claims!.n, 0, 'the invite claim was undone');
    const login = await send('POST', url('/api/partner/auth/login'), {
      email: p.email,
      password: PARTNER_PASSWORD,
    });
    t.equal(login.status, 401, 'the old password no longer works');
    // A verified account keeps its password through later magic links.
    const session = (
      await send('POST', url('/api/partner/auth/magic-link/verify'), {
        token: await (async () => {
          await send('POST', url('/api/partner/auth/magic-link'), { email: p.email });
          return magicTokenOf(sql, svc.prefix, p.email);
        })(),
      })
    ).body.data as { session_token: string };
    t.match(
      (await getJson(url('/api/partner/invitations'), bearer(session.session_token))).body.data,
      [{ partner_id: p.partnerId }],
      'the record is an invitation to its owner',
    );
    await send(
      'PUT',
      url('/api/partner/me'),
      { password: 'owner password 1' },
      bearer(session.session_token),
    );
    await send('POST', url('/api/partner/auth/magic-link'), { email: p.email });
    await send('POST', url('/api/partner/auth/magic-link/verify'), {
      token: await magicTokenOf(sql, svc.prefix, p.email),
    });
    const still = await send('POST', url('/api/partner/auth/login'), {
      email: p.email,
      password: 'owner password 1',
    });
    t.equal(still.status, 200, 'a password set after verification stays');
  },
);

t.test('concurrent use of one invite or one sign-in link: exactly one succeeds', async (t) => {
  const added = await addPartner(svc, owner, program.id);
  const token = tokenOf(added.inviteUrl!);
  const accepts = await Promise.all(
    Array.from({ length: 6 }, () =>
      send('POST', url('/api/partner/auth/accept-invite'), { token, password: PARTNER_PASSWORD }),
    ),
  );
  t.same(
    accepts.map((r) => r.status).sort(),
    [200, 400, 400, 400, 400, 400],
    'one accepts, the others see it used',
  );
  const [accounts] = await sql<{ n: number }[]>`
    select count(*)::int as n from partner_accounts where lower(email) = ${added.email}`;
  t.equal(accounts!.n, 1);
  const email = uniqEmail('race');
  await addPartner(svc, owner, program.id, { email });
  await send('POST', url('/api/partner/auth/magic-link'), { email });
  const magic = await magicTokenOf(sql, svc.prefix, email);
  const verifies = await Promise.all(
    Array.from({ length: 6 }, () =>
      send('POST', url('/api/partner/auth/magic-link/verify'), { token: magic }),
    ),
  );
  t.same(verifies.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400]);
  const [sessions] = await sql<{ n: number }[]>`
    select count(*)::int as n from partner_sessions s join partner_accounts a on a.id = s.account_id
    where lower(a.email) = ${email}`;
  t.equal(sessions!.n, 1, 'one session');
});
