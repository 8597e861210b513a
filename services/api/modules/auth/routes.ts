// POST /api/auth/signup, /api/auth/login, /api/auth/logout (CONTRACT "Dashboard sessions").
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, ERROR_SCHEMA, noValidation, errorResponses } from '../../../../shared/http/server.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../../../../shared/domain/passwords.ts';
import { DateTime, Nullable, Obj, dataOf } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { authenticate } from './access.ts';
import { createAuthDal } from './dal.ts';
import { parseSignup } from './service.ts';

const signupSchema = {
  tags: ['auth'],
  summary: 'Create a user and the workspace it owns; returns a session',
  body: Type.Object({
    email: Type.String({ format: 'email' }),
    password: Type.String({ minLength: 10 }),
    name: Type.Optional(Type.String()),
    workspace_name: Type.Optional(Type.String()),
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
  body: Type.Object({ email: Type.String(), password: Type.String() }),
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

export function registerAuthRoutes(app: FastifyInstance, deps: ApiDeps): void {
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
    { validatorCompiler: noValidation, schema: signupSchema },
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

  app.post('/api/auth/login', { validatorCompiler: noValidation, schema: loginSchema }, async (req) => {
    const b = req.body;
    if (!isPlainObject(b) || typeof b.email !== 'string' || typeof b.password !== 'string') {
      throw new HttpError(400, 'email and password are required');
    }
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
