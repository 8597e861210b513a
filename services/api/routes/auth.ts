// POST /api/auth/signup, /api/auth/login, /api/auth/logout (CONTRACT "Dashboard sessions").
import type { FastifyInstance } from 'fastify';
import {
  HttpError,
  EMAIL_RE,
  ERROR_SCHEMA,
  noValidation,
  errorResponses,
} from '../../../shared/http/server.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { generateSecret, hashSecret } from '../../../shared/domain/secrets.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from '../../../shared/domain/passwords.ts';
import { authenticate } from '../access.ts';
import type { ApiDeps } from '../deps.ts';

const err = ERROR_SCHEMA;

export function registerAuthRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;

  async function newSession(userId: number): Promise<{ token: string; expiresAt: Date }> {
    const token = generateSecret('sess_');
    const expiresAt = new Date(Date.now() + deps.sessionTtlHours * 3600_000);
    await sql`insert into sessions (user_id, token_hash, expires_at) values (${userId}, ${hashSecret(token)}, ${expiresAt})`;
    return { token, expiresAt };
  }

  app.post(
    '/api/auth/signup',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['auth'],
        summary: 'Create a user and the workspace it owns; returns a session',
        body: {
          type: 'object',
          required: ['email', 'password'],
          properties: {
            email: { type: 'string', format: 'email' },
            password: { type: 'string', minLength: 10 },
            name: { type: 'string' },
            workspace_name: { type: 'string' },
          },
        },
        response: {
          201: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  user: {
                    type: 'object',
                    properties: {
                      id: { type: 'integer' },
                      email: { type: 'string' },
                      name: { type: ['string', 'null'] },
                    },
                  },
                  workspace: {
                    type: 'object',
                    properties: { id: { type: 'integer' }, name: { type: 'string' } },
                  },
                  session_token: { type: 'string' },
                },
              },
            },
          },
          ...errorResponses(400, 409),
        },
      },
    },
    async (req, reply) => {
      const b = req.body;
      if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
      const email = typeof b.email === 'string' ? b.email.trim() : '';
      if (!EMAIL_RE.test(email) || email.length > 320)
        throw new HttpError(400, 'email must be a valid email address');
      if (typeof b.password !== 'string' || b.password.length < 10) {
        throw new HttpError(400, 'password must be at least 10 characters');
      }
      if (b.password.length > 1024) throw new HttpError(400, 'password must be at most 1024 characters');
      for (const f of ['name', 'workspace_name'] as const) {
        if (
          b[f] !== undefined &&
          b[f] !== null &&
          (typeof b[f] !== 'string' || (b[f] as string).length > 200)
        ) {
          throw new HttpError(400, `${f} must be a string of at most 200 characters`);
        }
      }
      const name = (b.name as string | undefined)?.trim() || null;
      const passwordHash = await hashPassword(b.password);
      const result = await sql.begin(async (tx) => {
        const [user] = await tx<{ id: string }[]>`
          insert into users (email, name, password_hash) values (${email}, ${name}, ${passwordHash})
          on conflict ((lower(email))) do nothing returning id`;
        if (!user) return null;
        const wsName = (b.workspace_name as string | undefined)?.trim() || `${name ?? email}'s workspace`;
        const [ws] = await tx<
          { id: string }[]
        >`insert into workspaces (name) values (${wsName}) returning id`;
        await tx`insert into memberships (user_id, workspace_id, role) values (${user.id}, ${ws!.id}, 'owner')`;
        return { userId: Number(user.id), workspace: { id: Number(ws!.id), name: wsName } };
      });
      if (!result) throw new HttpError(409, 'A user with this email already exists');
      const session = await newSession(result.userId);
      return reply.code(201).send({
        data: {
          user: { id: result.userId, email, name },
          workspace: result.workspace,
          session_token: session.token,
        },
      });
    },
  );

  app.post(
    '/api/auth/login',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['auth'],
        summary: 'Log in; returns a session token',
        body: {
          type: 'object',
          required: ['email', 'password'],
          properties: { email: { type: 'string' }, password: { type: 'string' } },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  session_token: { type: 'string' },
                  expires_at: { type: 'string', format: 'date-time' },
                },
              },
            },
          },
          ...errorResponses(400, 401),
        },
      },
    },
    async (req) => {
      const b = req.body;
      if (!isPlainObject(b) || typeof b.email !== 'string' || typeof b.password !== 'string') {
        throw new HttpError(400, 'email and password are required');
      }
      const [user] = await sql<{ id: string; password_hash: string }[]>`
        select id, password_hash from users where lower(email) = lower(${b.email.trim()})`;
      // Verify against a dummy hash for unknown emails, so timing does not reveal which emails exist.
      const ok = await verifyPassword(b.password, user?.password_hash ?? DUMMY_HASH);
      if (!user || !ok) throw new HttpError(401, 'Invalid email or password');
      const session = await newSession(Number(user.id));
      return { data: { session_token: session.token, expires_at: session.expiresAt.toISOString() } };
    },
  );

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'End the session (the token is dead at once)',
        response: { 204: { type: 'null' }, 401: err },
      },
    },
    async (req, reply) => {
      const p = await authenticate(sql, req);
      if (p.kind !== 'session') throw new HttpError(401, 'Logout needs a dashboard session');
      await sql`update sessions set revoked_at = now() where id = ${p.sessionId}`;
      return reply.code(204).send();
    },
  );
}
