// Partner accounts and sessions (CONTRACT part two "Credentials, extended" and "Partners who sign in";
// docs/partners.md): password sign-in, magic links, invites, sign-out, and the cookie variants the portal
// uses (`svc_partner_session`, with the dashboard's CSRF rule). Sign-in and magic-link requests are
// rate-limited per IP and per email (access.ts); every sign-in records the hash of its IP address.
//
// registerPartnerAuthRoutes: the routes that create or end sessions (no session needed to call them).
// registerPartnerAccountRoutes: GET/PUT /api/partner/me, in the partner-authenticated scope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { ERROR_SCHEMA, HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../../../../shared/domain/passwords.ts';
import { DateTime, Nullable, Obj, dataOf, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { csrfTokenFor } from '../auth/cookie.ts';
import { authenticatePartner, ipHashOf, partnerOf, partnerSecurity, rateLimit } from './access.ts';
import * as dal from './dal.ts';
import { queueMagicLink } from './invites.ts';
import {
  ERR,
  cleanName,
  clearedPartnerCookie,
  clearsPasswordOnVerify,
  emailError,
  inviteAccountRule,
  normalEmail,
  optionalNameError,
  optionalPasswordError,
  partnerCookie,
  passwordError,
  toAccount,
} from './service.ts';

const Account = Obj({
  id: Type.Integer(),
  email: Type.String(),
  name: Nullable(Type.String()),
  has_password: Type.Boolean({ description: 'False for accounts that sign in with magic links only' }),
  email_verified: Type.Boolean({ description: 'A magic link mailed to the address was followed' }),
  created_at: DateTime(),
});
const SessionAnswer = dataOf(
  Obj({
    session_token: Type.String({ description: '`psess_…`: send as `Authorization: Bearer`' }),
    expires_at: DateTime(),
    account: Obj({ id: Type.Integer(), email: Type.String(), name: Nullable(Type.String()) }),
  }),
);
const SessionInfo = dataOf(
  Obj({
    account: Account,
    csrf_token: Type.String({
      description: 'Send as `X-CSRF-Token` on every cookie-authenticated request but GET/HEAD/OPTIONS',
    }),
    expires_at: DateTime(),
  }),
);
const cookieNote =
  'Sets the HttpOnly, SameSite=Lax `svc_partner_session` cookie (Path=/, Secure over HTTPS); ' +
  'the partner routes accept it when no Authorization header is sent.';

const LoginBody = Type.Object(
  { email: Type.String(), password: Type.String() },
  { errorMessage: ERR.loginBody },
);
const TokenBody = Type.Object({ token: Type.String({ minLength: 1, errorMessage: ERR.token }) });
// Property order is the order of the checks (shared/http/validation.ts).
const AcceptBody = Type.Object({
  token: Type.String({ minLength: 1, errorMessage: ERR.token }),
  password: Type.Optional(
    Checked<string | null>(
      { type: ['string', 'null'], minLength: 10, maxLength: 1024 },
      optionalPasswordError,
    ),
  ),
  name: Type.Optional(
    Checked<string | null>({ type: ['string', 'null'], maxLength: 200 }, optionalNameError),
  ),
});
const EmailBody = Type.Object({
  email: Checked<string>({ type: 'string', format: 'email', maxLength: 320 }, emailError),
});
const MeBody = Type.Object({
  name: Type.Optional(
    Checked<string | null>({ type: ['string', 'null'], maxLength: 200 }, optionalNameError),
  ),
  password: Type.Optional(Checked<string>({ type: 'string', minLength: 10, maxLength: 1024 }, passwordError)),
  current_password: Type.Optional(Type.String({ errorMessage: 'current_password must be a string' })),
});

const loginDoc =
  `Rate-limited per IP and per email (429 \`${ERR.tooMany}\` with Retry-After). 401 \`${ERR.credentials}\` ` +
  'for an unknown email, a wrong password, or an account that signs in with magic links only.';
const inviteDoc =
  '`password` (10+ characters) is required when no account has the invited email yet: the account is ' +
  'created with it. An existing account is reached only with its own password (401 `Invalid email or ' +
  `password\`, rate-limited like sign-in); one without a password is 409 \`${ERR.inviteNeedsMagicLink}\` ` +
  '(a magic link claims the record anyway). The invite is used once; an unknown, used, revoked (a newer ' +
  `invite was issued) or expired (14 days) token is 400 \`${ERR.invite}\`. The account claims the invite's ` +
  'partner record.';
const magicDoc =
  'The link is one use and lasts 15 minutes. The account of its email is created if missing and claims ' +
  'every partner record with that email it has not claimed. The first magic link of an account whose ' +
  'password was set before its email was proven (accepting an invite, applying with a password) clears ' +
  'that password and ends its other sessions: set one again with PUT /api/partner/me. Unknown, used or ' +
  `expired: 400 \`${ERR.magicLink}\`.`;

export function registerPartnerAuthRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const maxAge = deps.sessionTtlHours * 3600;
  const secure = (req: FastifyRequest) => req.protocol === 'https';

  async function newSession(db: Sql | Tx, accountId: number, req: FastifyRequest) {
    const token = generateSecret('psess_');
    const expiresAt = new Date(Date.now() + deps.sessionTtlHours * 3600_000);
    await dal.createSession(db, accountId, hashSecret(token), expiresAt);
    await dal.recordSignIn(db, accountId, await ipHashOf(sql, req.ip));
    return { token, expiresAt };
  }

  type Signed = { account: dal.AccountRow; token: string; expiresAt: Date };

  async function logIn(req: FastifyRequest, reply: FastifyReply, b: { email: string; password: string }) {
    const email = normalEmail(b.email);
    await rateLimit(sql, deps, req, reply, 'sign-in', email);
    const account = await dal.accountByEmail(sql, email);
    // Verify against a dummy hash when there is no password, so timing does not reveal which emails exist.
    const ok = await verifyPassword(b.password, account?.password_hash ?? DUMMY_HASH);
    if (!account || account.password_hash === null || !ok) throw new HttpError(401, ERR.credentials);
    return { account, ...(await newSession(sql, Number(account.id), req)) };
  }

  async function acceptInvite(
    req: FastifyRequest,
    reply: FastifyReply,
    b: { token: string; password?: string | null; name?: string | null },
  ): Promise<Signed> {
    return sql.begin(async (tx) => {
      const invite = await dal.lockInvite(tx, hashSecret(b.token));
      if (!invite || invite.used_at || invite.revoked_at || invite.expires_at.getTime() <= Date.now()) {
        throw new HttpError(400, ERR.invite);
      }
      const email = normalEmail(invite.partner_email);
      let account = await dal.accountByEmail(tx, email, true);
      const rule = inviteAccountRule(account);
      if (rule.kind === 'create') {
        const problem = passwordError(b.password);
        if (problem !== null) throw new HttpError(400, problem);
        account = await dal.insertAccount(tx, {
          email,
          name: cleanName(b.name) ?? invite.partner_name,
          passwordHash: await hashPassword(b.password!),
          verified: false,
        });
        if (!account) throw new HttpError(409, 'The account was created meanwhile; retry');
      } else if (rule.kind === 'check-password') {
        await rateLimit(sql, deps, req, reply, 'sign-in', email);
        if (typeof b.password !== 'string' || !(await verifyPassword(b.password, rule.hash))) {
          throw new HttpError(401, ERR.credentials);
        }
      } else {
        throw new HttpError(409, ERR.inviteNeedsMagicLink);
      }
      await dal.useInvite(tx, invite.id);
      await dal.claim(tx, Number(account!.id), [Number(invite.partner_id)], 'invite');
      return { account: account!, ...(await newSession(tx, Number(account!.id), req)) };
    });
  }

  async function verifyMagicLink(req: FastifyRequest, token: string): Promise<Signed> {
    return sql.begin(async (tx) => {
      const link = await dal.lockMagicLink(tx, hashSecret(token));
      if (!link || link.used_at || link.expires_at.getTime() <= Date.now()) {
        throw new HttpError(400, ERR.magicLink);
      }
      await dal.useMagicLink(tx, link.id);
      const email = normalEmail(link.email);
      const account =
        (await dal.accountByEmail(tx, email, true)) ??
        (await dal.insertAccount(tx, { email, name: null, passwordHash: null, verified: true })) ??
        (await dal.accountByEmail(tx, email, true))!;
      const id = Number(account.id);
      const clear = clearsPasswordOnVerify(account);
      await dal.markVerified(tx, id, clear);
      if (clear) await dal.revokeOtherSessions(tx, id, null);
      const records = await dal.unclaimedRecordsOf(tx, id, email);
      await dal.claim(
        tx,
        id,
        records.map((r) => Number(r.id)),
        'magic_link',
      );
      const fresh = (await dal.accountById(tx, id))!;
      return { account: fresh, ...(await newSession(tx, id, req)) };
    });
  }

  const bearerAnswer = (s: Signed) => ({
    data: {
      session_token: s.token,
      expires_at: s.expiresAt.toISOString(),
      account: { id: Number(s.account.id), email: s.account.email, name: s.account.name },
    },
  });
  const cookieAnswer = (req: FastifyRequest, reply: FastifyReply, s: Signed) => {
    reply.header('set-cookie', partnerCookie(s.token, maxAge, secure(req)));
    return {
      data: {
        account: toAccount(s.account),
        csrf_token: csrfTokenFor(s.token),
        expires_at: s.expiresAt.toISOString(),
      },
    };
  };

  const tags = ['partner auth'];

  app.post(
    '/api/partner/auth/login',
    {
      schema: {
        tags,
        summary: 'Partner sign-in with email and password; returns a psess_ session token',
        description: loginDoc,
        body: LoginBody,
        response: { 200: SessionAnswer, ...errorResponses(400, 401, 429) },
      },
    },
    async (req, reply) => bearerAnswer(await logIn(req, reply, req.body)),
  );

  app.post(
    '/api/partner/auth/session',
    {
      schema: {
        tags,
        summary: 'Partner portal sign-in: the session as an HttpOnly cookie',
        description: `${cookieNote} ${loginDoc}`,
        body: LoginBody,
        response: { 200: SessionInfo, ...errorResponses(400, 401, 429) },
      },
    },
    async (req, reply) => cookieAnswer(req, reply, await logIn(req, reply, req.body)),
  );

  app.post(
    '/api/partner/auth/magic-link',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Mail a sign-in link (202 whether or not the email is known)',
        description:
          'Answers 202 `{ data: { sent: true } }` for any valid email, so the answer never tells whether an ' +
          'account or partner record exists; the link (`{PUBLIC_URL}/partner/magic#<token>`, 15 minutes, one ' +
          'use) is mailed only to an address that has a partner account or partner record. Rate-limited per ' +
          `IP and per email (429 \`${ERR.tooMany}\` with Retry-After).`,
        body: EmailBody,
        response: { 202: dataOf(Obj({ sent: Type.Boolean() })), ...errorResponses(400, 429) },
      },
    },
    async (req, reply) => {
      const email = normalEmail(req.body.email);
      await rateLimit(sql, deps, req, reply, 'magic-link', email);
      if (await dal.emailKnown(sql, email)) await sql.begin((tx) => queueMagicLink(tx, deps, email));
      return reply.code(202).send({ data: { sent: true } });
    },
  );

  app.post(
    '/api/partner/auth/magic-link/verify',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Follow a sign-in link: returns a session',
        description: magicDoc,
        body: TokenBody,
        response: { 200: SessionAnswer, ...errorResponses(400) },
      },
    },
    async (req) => bearerAnswer(await verifyMagicLink(req, req.body.token)),
  );

  app.post(
    '/api/partner/auth/session/magic-link',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Follow a sign-in link: the session as an HttpOnly cookie (the portal)',
        description: `${cookieNote} ${magicDoc}`,
        body: TokenBody,
        response: { 200: SessionInfo, ...errorResponses(400) },
      },
    },
    async (req, reply) => cookieAnswer(req, reply, await verifyMagicLink(req, req.body.token)),
  );

  app.post(
    '/api/partner/auth/accept-invite',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Accept an invite: claims its partner record and returns a session',
        description: inviteDoc,
        body: AcceptBody,
        response: { 200: SessionAnswer, ...errorResponses(400, 401, 409, 429) },
      },
    },
    async (req, reply) => bearerAnswer(await acceptInvite(req, reply, req.body)),
  );

  app.post(
    '/api/partner/auth/session/accept-invite',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Accept an invite: the session as an HttpOnly cookie (the portal)',
        description: `${cookieNote} ${inviteDoc}`,
        body: AcceptBody,
        response: { 200: SessionInfo, ...errorResponses(400, 401, 409, 429) },
      },
    },
    async (req, reply) => cookieAnswer(req, reply, await acceptInvite(req, reply, req.body)),
  );

  app.post(
    '/api/partner/auth/logout',
    {
      schema: {
        tags,
        summary: 'End the partner session (dead at once)',
        description: 'With the cookie, needs X-CSRF-Token (403 otherwise).',
        security: partnerSecurity,
        response: { 204: Type.Null(), ...errorResponses(401, 403) },
      },
    },
    async (req, reply) => {
      const p = await authenticatePartner(sql, req);
      await dal.revokeSession(sql, p.sessionId);
      if (p.via === 'cookie') reply.header('set-cookie', clearedPartnerCookie(secure(req)));
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/partner/auth/session',
    {
      schema: {
        tags,
        summary: 'The current partner session (cookie or Bearer): account, CSRF token, expiry',
        security: partnerSecurity,
        response: { 200: SessionInfo, 401: ERROR_SCHEMA },
      },
    },
    async (req) => {
      const p = await authenticatePartner(sql, req);
      const [account, session] = await Promise.all([
        dal.accountById(sql, p.accountId),
        dal.sessionByHash(sql, hashSecret(p.token)),
      ]);
      if (!account || !session) throw new HttpError(401, ERR.session);
      return {
        data: {
          account: toAccount(account),
          csrf_token: csrfTokenFor(p.token),
          expires_at: session.expires_at.toISOString(),
        },
      };
    },
  );

  app.delete(
    '/api/partner/auth/session',
    {
      schema: {
        tags,
        summary: 'Portal sign-out: revokes the session and clears the cookie (needs X-CSRF-Token with it)',
        security: partnerSecurity,
        response: { 204: Type.Null(), ...errorResponses(401, 403) },
      },
    },
    async (req, reply) => {
      const p = await authenticatePartner(sql, req);
      await dal.revokeSession(sql, p.sessionId);
      reply.header('set-cookie', clearedPartnerCookie(secure(req)));
      return reply.code(204).send();
    },
  );
}

/** GET and PUT /api/partner/me (the partner-authenticated scope). */
export function registerPartnerAccountRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const tags = ['partner'];

  async function me(accountId: number) {
    const [account, records] = await Promise.all([
      dal.accountById(sql, accountId),
      dal.claimedRecords(sql, accountId),
    ]);
    if (!account) throw new HttpError(401, ERR.session);
    return {
      data: {
        account: toAccount(account),
        partners: records.map((r) => ({
          id: Number(r.id),
          name: r.name,
          email: r.email,
          workspace_id: r.workspace_id === null ? null : Number(r.workspace_id),
          workspace_name: r.workspace_name,
          claimed_via: r.via,
          claimed_at: r.claimed_at.toISOString(),
        })),
      },
    };
  }
  const MeOut = dataOf(
    Obj({
      account: Account,
      partners: Type.Array(
        Obj({
          id: Type.Integer({ description: 'Partner record id' }),
          name: Type.String(),
          email: Type.String(),
          workspace_id: Nullable(Type.Integer()),
          workspace_name: Nullable(Type.String()),
          claimed_via: Type.String({ enum: ['invite', 'application', 'magic_link', 'seed'] }),
          claimed_at: DateTime(),
        }),
      ),
    }),
  );

  app.get(
    '/api/partner/me',
    {
      schema: {
        tags,
        summary: 'The signed-in account and the partner records it has claimed',
        security: partnerSecurity,
        response: { 200: MeOut, ...errorResponses(401) },
      },
    },
    async (req) => me(partnerOf(req).accountId),
  );

  app.put(
    '/api/partner/me',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: "Change the account's name or password",
        description:
          'Changing the password of an account that has one needs `current_password` (400 `' +
          ERR.currentPassword +
          '`; rate-limited like sign-in); an account without one (magic links only) sets it directly. ' +
          'A password change ends every other session of the account. 400 `' +
          ERR.nothing +
          '` for an empty body.',
        security: partnerSecurity,
        body: MeBody,
        response: { 200: MeOut, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      const p = partnerOf(req);
      const b = req.body;
      if (b.name === undefined && b.password === undefined) throw new HttpError(400, ERR.nothing);
      const account = await dal.accountById(sql, p.accountId);
      if (!account) throw new HttpError(401, ERR.session);
      let passwordHash: string | undefined;
      if (b.password !== undefined) {
        if (account.password_hash !== null) {
          await rateLimit(sql, deps, req, reply, 'sign-in', account.email);
          const ok =
            typeof b.current_password === 'string' &&
            (await verifyPassword(b.current_password, account.password_hash));
          if (!ok) throw new HttpError(400, ERR.currentPassword);
        }
        passwordHash = await hashPassword(b.password);
      }
      await sql.begin(async (tx) => {
        await dal.updateAccount(tx, p.accountId, {
          ...(b.name === undefined ? {} : { name: cleanName(b.name) }),
          ...(passwordHash === undefined ? {} : { passwordHash }),
        });
        if (passwordHash !== undefined) await dal.revokeOtherSessions(tx, p.accountId, p.sessionId);
      });
      return me(p.accountId);
    },
  );
}
