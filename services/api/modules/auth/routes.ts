// POST /api/auth/signup, /api/auth/login, /api/auth/logout (CONTRACT "Dashboard sessions").
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, ERROR_SCHEMA, errorResponses } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../../../../shared/domain/passwords.ts';
import { DateTime, Nullable, Obj, dataOf, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate } from './access.ts';
import { createAuthDal } from './dal.ts';
import { optionalNameError, parseSignup, passwordError, signupEmailError } from './service.ts';

const signupSchema = {
  tags: ['auth'],
  summary: 'Create a user and the workspace it owns; returns a session',
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
    ...errorResponses(400, 409),
  },
};

const loginSchema = {
  tags: ['auth'],
  summary: 'Log in; returns a session token',
  body: Type.Object(
    { email: Type.String(), password: Type.String() },
    { errorMessage: 'email and password are required' },
  ),
  response: {
    200: dataOf(Obj({ session_token: Type.String(), expires_at: DateTime() })),
    ...errorResponses(400, 401),
  },
};

const logoutSchema = {
  tags: ['auth'],
  summary: 'End the session (the token is dead at once)',
  response: { 204: Type.Null(), 401: ERROR_SCHEMA },
};

/**
 * Registers signup, login and logout; `app` must validate with typeBoxValidator (app.ts gives them their own
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

  app.post(
    '/api/auth/signup',
    // No body at all (or JSON null) is `Request body must be a JSON object`, as before the schema.
    { preValidation: requireBodyObject, schema: signupSchema },
    async (req, reply) => {
      const s = parseSignup(req.body);
      const passwordHash = await hashPassword(s.password);
      const result = await dal.signup({ ...s, passwordHash });
      if (!result) throw new HttpError(409, 'A user with this email already exists');
      const session = await newSession(result.userId);
      return reply.code(201).send({
        data: {
          user: { id: result.userId, email: s.email, name: s.name },
          workspace: result.workspace,
          session_token: session.token,
        },
      });
    },
  );

  app.post('/api/auth/login', { schema: loginSchema }, async (req) => {
    const b = req.body;
    const user = await dal.userByEmail(b.email.trim());
    // Verify against a dummy hash for unknown emails, so timing does not reveal which emails exist.
    const ok = await verifyPassword(b.password, user?.password_hash ?? DUMMY_HASH);
    if (!user || !ok) throw new HttpError(401, 'Invalid email or password');
    const session = await newSession(Number(user.id));
    return { data: { session_token: session.token, expires_at: session.expiresAt.toISOString() } };
  });

  app.post('/api/auth/logout', { schema: logoutSchema }, async (req, reply) => {
    const p = await authenticate(sql, req);
    if (p.kind !== 'session') throw new HttpError(401, 'Logout needs a dashboard session');
    await dal.revokeSession(p.sessionId);
    return reply.code(204).send();
  });
}
