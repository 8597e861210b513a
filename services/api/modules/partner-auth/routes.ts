// Partner accounts and sessions (CONTRACT part two "Credentials, extended" and "Partners who sign in";
// docs/partners.md): password sign-in, magic links, invites, sign-out, and the cookie variants the portal
// uses (`svc_partner_session`, with the dashboard's CSRF rule). Every password check and magic-link request
// is limited per address and per email before any hashing (../../sign-in-limits.ts); every sign-in records
// the hash of its IP address.
//
// registerPartnerAuthRoutes: the routes that create or end sessions (no session needed to call them).
// registerPartnerAccountRoutes: GET/PUT /api/partner/me, in the partner-authenticated scope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Tx } from '../../../../shared/db/sql.ts';
import { ERROR_SCHEMA, HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { hashSecret } from '../../../../shared/domain/secrets.ts';
import { hashPassword, needsRehash, verifyPassword } from '../../../../shared/domain/passwords.ts';
import { DateTime, Nullable, Obj, dataOf, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { csrfTokenFor } from '../auth/cookie.ts';
import { authenticatePartner, partnerOf, partnerSecurity } from './access.ts';
import { beginPasswordCheck, ipHashOf, limitMagicLink } from '../../sign-in-limits.ts';
import * as dal from './dal.ts';
import { changeAccount, mailSignInLink, openSession, signIn, signOut } from './operations.ts';
import type { SessionOrigin } from './operations.ts';
import { acceptInvite as acceptInviteTx, followMagicLink } from '../partner-claims/operations.ts';
import {
  ERR,
  cleanName,
  clearedPartnerCookie,
  emailError,
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
  email_verified: Type.Boolean({
    description:
      'A sign-in link was followed or an invite accepted. Until then the account sees nothing but this ' +
      '(every other partner route answers 403)',
  }),
  mailbox_verified: Type.Boolean({
    description:
      'A sign-in link mailed to the address was followed: invitations from other records of the email are shown',
  }),
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

const limitsDoc =
  `Limited per client address and per email (429 \`${ERR.tooMany}\` with Retry-After): at most 10 failures ` +
  'per email in 15 minutes by default, a successful sign-in clears them (docs/security.md).';
const loginDoc =
  `${limitsDoc} 401 \`${ERR.credentials}\` for an unknown email, a wrong password, or an account that ` +
  'signs in with magic links only. A password hash of an older kind is replaced at a successful sign-in.';
const inviteDoc =
  '`password` (10+ characters) is required when no account has the invited email yet (the account is ' +
  'created with it, verified), and when the account of that email is not verified (made by an application ' +
  'form): its password is replaced with the one given and its other sessions end, so an invite always ' +
  'reaches its recipient. A verified account is reached only with its own password (401 `Invalid email or ' +
  `password\`, rate-limited like sign-in); one without a password is 409 \`${ERR.inviteNeedsMagicLink}\` ` +
  '(after a sign-in link, the record shows among its invitations). The invite is used once; an unknown, ' +
  `used, revoked (a newer invite was issued) or expired (14 days) token is 400 \`${ERR.invite}\`. The ` +
  "account claims the invite's partner record.";
const magicDoc =
  'The link is one use and lasts 15 minutes. The account of its email is created if missing; following the ' +
  'link verifies its email and its mailbox. A link mailed after an application claims the partner record ' +
  'that application created; other links claim nothing (records of the email show as invitations: GET ' +
  '/api/partner/invitations). The first link an account follows clears a password set before (by an invite ' +
  'or an application form), ends its other sessions, and turns the records claimed by accepting invites ' +
  'back into invitations: set a password again with PUT /api/partner/me. Unknown, used or expired: 400 ' +
  `\`${ERR.magicLink}\`.`;

export function registerPartnerAuthRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const maxAge = deps.sessionTtlHours * 3600;
  const secure = (req: FastifyRequest) => req.protocol === 'https';

  const originOf = async (req: FastifyRequest): Promise<SessionOrigin> => ({
    ttlHours: deps.sessionTtlHours,
    ipHash: await ipHashOf(sql, req.ip),
  });
  /** The session an invite or a sign-in link ends with, in that operation's transaction. */
  const newSession = async (tx: Tx, accountId: number, req: FastifyRequest) =>
    openSession(tx, accountId, await originOf(req));

  async function logIn(req: FastifyRequest, reply: FastifyReply, b: { email: string; password: string }) {
    const email = normalEmail(b.email);
    const attempt = await beginPasswordCheck(deps, req, reply, 'partner', email);
    const account = await dal.accountByEmail(sql, email);
    // No account or no password: verified against a dummy hash, so timing does not reveal which emails exist.
    const stored = account?.password_hash ?? null;
    const ok = await verifyPassword(b.password, stored);
    if (!account || stored === null || !ok) throw new HttpError(401, ERR.credentials);
    await attempt.succeeded();
    // An older kind of hash is replaced now that the password is known, with the session (signIn).
    const rehash = needsRehash(stored) ? { previous: stored, next: await hashPassword(b.password) } : null;
    return { account, ...(await signIn(sql, Number(account.id), await originOf(req), rehash)) };
  }

  type Signed = { account: dal.AccountRow; token: string; expiresAt: Date };

  const acceptInvite = async (
    req: FastifyRequest,
    reply: FastifyReply,
    b: { token: string; password?: string | null; name?: string | null },
  ): Promise<Signed> => {
    const s = await acceptInviteTx(sql, b, {
      limit: (email) => beginPasswordCheck(deps, req, reply, 'partner', email),
      newSession: (tx, id) => newSession(tx, id, req),
    });
    return { account: s.account, ...s.session };
  };

  const verifyMagicLink = async (req: FastifyRequest, token: string): Promise<Signed> => {
    const s = await followMagicLink(sql, token, { newSession: (tx, id) => newSession(tx, id, req) });
    return { account: s.account, ...s.session };
  };

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
          'use) is mailed only to an address that has a partner account or partner record. Limited per ' +
          `client address and per email (429 \`${ERR.tooMany}\` with Retry-After).`,
        body: EmailBody,
        response: { 202: dataOf(Obj({ sent: Type.Boolean() })), ...errorResponses(400, 429) },
      },
    },
    async (req, reply) => {
      const email = normalEmail(req.body.email);
      await limitMagicLink(deps, req, reply, email);
      await mailSignInLink(sql, deps, email);
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
      await signOut(sql, p.sessionId);
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
      await signOut(sql, p.sessionId);
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
    // An unverified account sees none of its records (it has none it could have claimed since part three).
    const visible = account.email_verified_at === null ? [] : records;
    return {
      data: {
        account: toAccount(account),
        partners: visible.map((r) => ({
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
          claimed_via: Type.String({ enum: ['invite', 'application', 'magic_link', 'seed', 'invitation'] }),
          claimed_at: DateTime(),
        }),
      ),
    }),
  );

  app.get(
    '/api/partner/me',
    {
      config: { unverifiedPartner: true },
      schema: {
        tags,
        summary: 'The signed-in account and the partner records it has claimed',
        description:
          'Answers an unverified account too (`email_verified: false`, no records): the portal shows it a ' +
          'banner asking to follow the link mailed to the address. Every other partner route answers it 403.',
        security: partnerSecurity,
        response: { 200: MeOut, ...errorResponses(401) },
      },
    },
    async (req) => me(partnerOf(req).accountId),
  );

  app.put(
    '/api/partner/me',
    {
      config: { unverifiedPartner: true },
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: "Change the account's name or password",
        description:
          'Changing the password of an account that has one needs `current_password` (400 `' +
          ERR.currentPassword +
          '`; limited like sign-in, 429 `' +
          ERR.tooMany +
          '`); an account without one (magic links only) sets it directly. ' +
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
          const attempt = await beginPasswordCheck(deps, req, reply, 'partner', account.email);
          const ok =
            typeof b.current_password === 'string' &&
            (await verifyPassword(b.current_password, account.password_hash));
          if (!ok) throw new HttpError(400, ERR.currentPassword);
          await attempt.succeeded();
        }
        passwordHash = await hashPassword(b.password);
      }
      await changeAccount(sql, p, {
        ...(b.name === undefined ? {} : { name: cleanName(b.name) }),
        ...(passwordHash === undefined ? {} : { passwordHash }),
      });
      return me(p.accountId);
    },
  );
}
