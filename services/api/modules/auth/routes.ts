// POST /api/auth/signup, /api/auth/login, /api/auth/logout (CONTRACT "Dashboard sessions"), and the
// dashboard's cookie session: POST /api/auth/session (log in), POST /api/auth/session/signup, GET and DELETE
// /api/auth/session (docs/dashboard.md "Session and CSRF"; the cookie and CSRF rules are in cookie.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, ERROR_SCHEMA, errorResponses } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import { hashPassword, needsRehash, verifyPassword } from '../../../../shared/domain/passwords.ts';
import {
  DateTime,
  Nullable,
  Obj,
  StringEnum,
  dataOf,
  requireBodyObject,
  sessionSecurity,
} from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { TOO_MANY_ATTEMPTS, beginPasswordCheck, beginSignup } from '../../sign-in-limits.ts';
import { authenticate, credentialOf } from './access.ts';
import { SESSION_COOKIE, clearedSessionCookie, csrfTokenFor, readCookie, sessionCookie } from './cookie.ts';
import { createAuthDal } from './dal.ts';
import { signup } from './operations.ts';
import { ROLES, optionalNameError, parseSignup, passwordError, signupEmailError } from './service.ts';

const limitsNote =
  `Limited per client address and per email (429 \`${TOO_MANY_ATTEMPTS}\` with Retry-After, the seconds ` +
  'until the next attempt is allowed; docs/security.md).';
const loginNote =
  `${limitsNote} At most 10 failures per email in 15 minutes by default; a successful log in clears them. ` +
  'A password hash of an older kind is replaced at a successful log in.';

const signupSchema = {
  tags: ['auth'],
  summary: 'Create a user and the workspace it owns; returns a session',
  description: limitsNote,
  // Property order is the order of the checks (shared/http/validation.ts).
  body: Type.Object({
    email: Checked<string>({ type: 'string', format: 'email', maxLength: 320 }, signupEmailError),
    password: Checked<string>({ type: 'string', minLength: 10, maxLength: 1024 }, passwordError),
    name: Type.Optional(
      Checked<string | null>({ type: ['string', 'null'], maxLength: 200 }, optionalNameError('name')),
    ),
    workspace_name: Type.Optional(
      Checked<string | null>(
        { type: ['string', 'null'], maxLength: 200 },
        optionalNameError('workspace_name'),
      ),
    ),
  }),
  response: {
    201: dataOf(
      Obj({
        user: Obj({ id: Type.Integer(), email: Type.String(), name: Nullable(Type.String()) }),
        workspace: Obj({ id: Type.Integer(), name: Type.String() }),
        session_token: Type.String(),
      }),
    ),
    ...errorResponses(400, 409, 429),
  },
};

const loginSchema = {
  tags: ['auth'],
  summary: 'Log in; returns a session token',
  description: loginNote,
  body: Type.Object(
    { email: Type.String(), password: Type.String() },
    { errorMessage: 'email and password are required' },
  ),
  response: {
    200: dataOf(Obj({ session_token: Type.String(), expires_at: DateTime() })),
    ...errorResponses(400, 401, 429),
  },
};

const logoutSchema = {
  tags: ['auth'],
  summary: 'End the session (the token is dead at once)',
  response: { 204: Type.Null(), 401: ERROR_SCHEMA },
};

const sessionInfo = Obj({
  user: Obj({ id: Type.Integer(), email: Type.String(), name: Nullable(Type.String()) }),
  workspaces: Type.Array(Obj({ id: Type.Integer(), name: Type.String(), role: StringEnum(ROLES) })),
  csrf_token: Type.String({
    description: 'Send as `X-CSRF-Token` on every cookie-authenticated request but GET/HEAD/OPTIONS',
  }),
  expires_at: DateTime(),
});
const cookieNote =
  'Sets the HttpOnly, SameSite=Strict `svc_session` cookie (Secure over HTTPS); the API accepts it on every ' +
  'authenticated route when no Authorization header is sent.';

const sessionLoginSchema = {
  tags: ['auth'],
  summary: 'Dashboard log in: the session as an HttpOnly cookie',
  description: `${cookieNote} ${loginNote}`,
  body: loginSchema.body,
  response: { 200: dataOf(sessionInfo), ...errorResponses(400, 401, 429) },
};

const sessionSignupSchema = {
  tags: ['auth'],
  summary: 'Dashboard sign up: a user, the workspace it owns, and the session as an HttpOnly cookie',
  description: `${cookieNote} Same validation, limits and errors as POST /api/auth/signup.`,
  body: signupSchema.body,
  response: { 201: dataOf(sessionInfo), ...errorResponses(400, 409, 429) },
};

const sessionGetSchema = {
  tags: ['auth'],
  summary: 'The current session (cookie or Bearer): user, workspaces, CSRF token, expiry',
  description:
    'With an Authorization header: that `sess_` session, or 401 (a credential that is not a live ' +
    "dashboard session is an error, as on every route). Without one, the `svc_session` cookie's session; " +
    'no cookie, or one whose session expired or was revoked, is 200 `{ "data": null }`: "no session" is an ' +
    'answer, not an error (the dashboard asks on every first load), and a dead cookie is cleared.',
  // `{}`: without a credential the answer is 200 `{ "data": null }`, not 401.
  security: [...sessionSecurity, {}],
  response: { 200: Obj({ data: Nullable(sessionInfo) }), 401: ERROR_SCHEMA },
};

const sessionDeleteSchema = {
  tags: ['auth'],
  summary:
    'Dashboard log out: revokes the session and clears the cookie (needs X-CSRF-Token with the cookie)',
  security: sessionSecurity,
  response: { 204: Type.Null(), ...errorResponses(401, 403) },
};

/**
 * Registers signup, login, logout and the cookie session routes; `app` must validate with typeBoxValidator (app.ts gives them their own
 * scope: they are outside the authenticated one).
 */
export function registerAuthRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const dal = createAuthDal(sql);

  async function newSession(userId: number): Promise<{ token: string; expiresAt: Date }> {
    const token = generateSecret('sess_');
    const expiresAt = new Date(Date.now() + deps.sessionTtlHours * 3600_000);
    await dal.createSession(userId, hashSecret(token), expiresAt);
    return { token, expiresAt };
  }

  const TAKEN = 'A user with this email already exists';

  /**
   * Signup (bearer or cookie): the user and workspace made, and the new session; 409 for a known email.
   * The limits come first and a known email is refused before the password is hashed.
   */
  async function signUp(req: FastifyRequest, reply: FastifyReply, body: unknown) {
    const s = parseSignup(body);
    const attempt = await beginSignup(deps, req, reply, s.email);
    if (await dal.userByEmail(s.email)) throw new HttpError(409, TAKEN);
    const passwordHash = await hashPassword(s.password);
    const result = await signup(sql, dal, { ...s, passwordHash });
    if (!result) throw new HttpError(409, TAKEN);
    await attempt.succeeded();
    return { signup: s, ...result, session: await newSession(result.userId) };
  }

  /**
   * Log in (bearer or cookie): the user's id and a new session; 401 for a wrong email or password. The
   * limits come first (429), before any hashing.
   */
  async function logIn(req: FastifyRequest, reply: FastifyReply, b: { email: string; password: string }) {
    const email = b.email.trim();
    const attempt = await beginPasswordCheck(deps, req, reply, 'dashboard', email);
    const user = await dal.userByEmail(email);
    // An unknown email verifies against a dummy hash, so timing does not reveal which emails exist.
    const ok = await verifyPassword(b.password, user?.password_hash);
    if (!user || !ok) throw new HttpError(401, 'Invalid email or password');
    await attempt.succeeded();
    // An older kind of hash is replaced now that the password is known; compare-and-set, so a password
    // changed meanwhile is never overwritten.
    if (needsRehash(user.password_hash)) {
      await dal.replacePasswordHash(Number(user.id), user.password_hash, await hashPassword(b.password));
    }
    return { userId: Number(user.id), session: await newSession(Number(user.id)) };
  }

  app.post(
    '/api/auth/signup',
    // No body at all (or JSON null) is `Request body must be a JSON object`, as before the schema.
    { preValidation: requireBodyObject, schema: signupSchema },
    async (req, reply) => {
      const { signup: s, userId, workspace, session } = await signUp(req, reply, req.body);
      return reply.code(201).send({
        data: { user: { id: userId, email: s.email, name: s.name }, workspace, session_token: session.token },
      });
    },
  );

  app.post('/api/auth/login', { schema: loginSchema }, async (req, reply) => {
    const { session } = await logIn(req, reply, req.body);
    return { data: { session_token: session.token, expires_at: session.expiresAt.toISOString() } };
  });

  app.post('/api/auth/logout', { schema: logoutSchema }, async (req, reply) => {
    const p = await authenticate(sql, req);
    if (p.kind !== 'session') throw new HttpError(401, 'Logout needs a dashboard session');
    await dal.revokeSession(p.sessionId);
    return reply.code(204).send();
  });

  // The dashboard's cookie session. Secure when the request came over HTTPS (req.protocol honours
  // X-Forwarded-Proto only with TRUST_PROXY).
  const maxAge = deps.sessionTtlHours * 3600;
  async function sessionAnswer(userId: number, token: string, expiresAt: Date) {
    const u = await dal.sessionUser(userId);
    if (!u) throw new HttpError(401, 'Invalid or expired session');
    return {
      data: {
        user: { id: Number(u.user.id), email: u.user.email, name: u.user.name },
        workspaces: u.workspaces.map((w) => ({ id: Number(w.id), name: w.name, role: w.role })),
        csrf_token: csrfTokenFor(token),
        expires_at: expiresAt.toISOString(),
      },
    };
  }

  app.post('/api/auth/session', { schema: sessionLoginSchema }, async (req, reply) => {
    const { userId, session } = await logIn(req, reply, req.body);
    reply.header('set-cookie', sessionCookie(session.token, maxAge, req.protocol === 'https'));
    return sessionAnswer(userId, session.token, session.expiresAt);
  });

  app.post(
    '/api/auth/session/signup',
    { preValidation: requireBodyObject, schema: sessionSignupSchema },
    async (req, reply) => {
      const { userId, session } = await signUp(req, reply, req.body);
      reply.header('set-cookie', sessionCookie(session.token, maxAge, req.protocol === 'https'));
      return reply.code(201).send(await sessionAnswer(userId, session.token, session.expiresAt));
    },
  );

  app.get('/api/auth/session', { schema: sessionGetSchema }, async (req, reply) => {
    const viaHeader = req.headers.authorization !== undefined;
    if (!viaHeader && readCookie(req.headers.cookie, SESSION_COOKIE) === undefined) return { data: null };
    const { token } = credentialOf(req);
    const row = token.startsWith('sess_') ? await dal.sessionByHash(hashSecret(token)) : undefined;
    if (!row) {
      if (viaHeader) {
        if (!token.startsWith('sess_')) throw new HttpError(401, 'This needs a dashboard session');
        throw new HttpError(401, 'Invalid or expired session');
      }
      // The browser's cookie outlived its session: no session, and the cookie goes.
      reply.header('set-cookie', clearedSessionCookie(req.protocol === 'https'));
      return { data: null };
    }
    return sessionAnswer(Number(row.user_id), token, row.expires_at);
  });

  app.delete('/api/auth/session', { schema: sessionDeleteSchema }, async (req, reply) => {
    const p = await authenticate(sql, req);
    if (p.kind !== 'session') throw new HttpError(401, 'Logout needs a dashboard session');
    await dal.revokeSession(p.sessionId);
    reply.header('set-cookie', clearedSessionCookie(req.protocol === 'https'));
    return reply.code(204).send();
  });
}
