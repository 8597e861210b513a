// POST/GET /api/advertiser/api-keys, PUT/DELETE /api/advertiser/api-keys/:id (spec 2 and 4.8, CONTRACT
// "Management API keys"). Keys are managed only with a dashboard session of an active owner or admin; an
// `affk_` key gets 403 on every route here.
//
// Workspace: POST and GET act on `?workspace_id=` (POST also takes it in the body), by default the one
// workspaceAccess picks. PUT and DELETE act on the key's own workspace; a key of a workspace the caller is
// not a member of (or not the `workspace_id` given) is 404, as is an unknown id.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, requiresBody } from '../../../../shared/http/server.ts';
import { Checked } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../../shared/domain/secrets.ts';
import {
  DateTime,
  Nullable,
  Obj,
  StringEnum,
  WorkspaceIdField,
  bodyObject,
  dataOf,
  manageOf,
  parseId,
  requireBodyObject,
  requireManage,
  workspaceRoute,
} from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf, workspaceAccess } from '../auth/access.ts';
import type { Principal } from '../auth/access.ts';
import { SCOPES, requestedWorkspace } from '../auth/service.ts';
import { createApiKeyDal } from './dal.ts';
import { createKey } from './operations.ts';
import type { KeyRow } from './dal.ts';
import {
  KEY_NOT_FOUND,
  KEY_REVOKED,
  PREFIX_LENGTH,
  checkKeyUpdate,
  checkProgramsFound,
  expiresAtError,
  nameError,
  parseExpiresAt,
  parseName,
  parseProgramIds,
  parseScopes,
  programIdsError,
  scopesError,
  toKey,
} from './service.ts';

const keyProperties = {
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first 9 characters of the key: `affk_` and 4 more' }),
  scopes: Type.Array(StringEnum(SCOPES)),
  program_scope: Nullable(
    Type.Array(Type.String(), {
      description: 'Program ids the key is limited to; null: every program of the workspace',
    }),
  ),
  status: StringEnum(['active', 'revoked']),
  expires_at: Nullable(DateTime()),
  created_at: DateTime(),
  last_used_at: Nullable(DateTime()),
  revoked_at: Nullable(DateTime()),
  key_masked: Type.String({ description: 'Masked key, `affk_AbCd…wxyz`' }),
};
const apiKey = Obj(keyProperties);
const createdKey = Obj({
  ...keyProperties,
  key: Type.String({ description: 'The full key, `affk_…`. Shown only in this response.' }),
});
const idParams = Obj({ id: Type.Integer({ minimum: 1 }) });

// Request schemas (shared/http/validation.ts): each field is checked by the service's rule (Checked), whose
// message it answers; `doc` is what the OpenAPI shows. Property order is the order of the checks.
const name = Checked<string>(
  { type: 'string', minLength: 1, maxLength: 200, description: '1 to 200 characters once trimmed' },
  nameError,
);
const scopes = Checked<string[]>(
  { ...Type.Array(StringEnum(SCOPES), { minItems: 1, description: 'Default ["*"]' }) },
  scopesError,
);
const programScope = Checked<(string | number)[] | null>(
  {
    type: ['array', 'null'],
    minItems: 1,
    // What parseId takes: 1 to 15 digits naming a positive number, or a positive safe integer.
    items: {
      type: ['string', 'integer'],
      pattern: '^(?=[0-9]{1,15}$)0*[1-9][0-9]*$',
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    },
    description: 'Program ids (strings or integers) of this workspace; null (default): all programs',
  },
  programIdsError,
);
const expiresAt = Checked<string | null>(
  {
    ...Nullable(
      DateTime({ description: 'ISO 8601 with a time zone, in the future; null (default): no expiry' }),
    ),
  },
  (v) => expiresAtError(v, Date.now()),
);
const CreateBody = Type.Object({
  workspace_id: WorkspaceIdField,
  name,
  scopes: Type.Optional(scopes),
  expires_at: Type.Optional(expiresAt),
  program_scope: Type.Optional(programScope),
});
// expires_at and "nothing to update" are checked before these fields (checkKeyUpdate, preValidation).
const UpdateBody = Type.Object(
  { name: Type.Optional(name), scopes: Type.Optional(scopes), program_scope: Type.Optional(programScope) },
  { minProperties: 1 },
);

export function registerApiKeyRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const dal = createApiKeyDal(sql);

  /** Program ids, each a live (not deleted) program of the workspace; null = every program. */
  async function programScopeOf(v: unknown, workspaceId: number): Promise<number[] | null> {
    const ids = parseProgramIds(v);
    if (ids !== null) checkProgramsFound(ids, await dal.livePrograms(ids, workspaceId));
    return ids;
  }

  /** The key `id` (any status) and the workspace it belongs to, checked for 'manage'. */
  async function keyForManagement(req: {
    principal?: Principal;
    params: unknown;
    query: unknown;
  }): Promise<KeyRow> {
    const p = principalOf(req);
    // A key never manages keys: 403 before anything about the id is revealed.
    if (p.kind === 'api_key') await workspaceAccess(sql, p, 'manage', null);
    const requested = requestedWorkspace(req.query);
    const id = parseId((req.params as { id?: unknown }).id);
    if (id === null) throw new HttpError(400, 'id must be a positive integer');
    const row = await dal.byId(id);
    const ws = row ? Number(row.workspace_id) : null;
    if (!row || (requested !== null && ws !== requested)) throw new HttpError(404, KEY_NOT_FOUND);
    try {
      await workspaceAccess(sql, p, 'manage', ws);
    } catch (e) {
      // Not a member of the key's workspace: do not reveal that the key exists.
      if (e instanceof HttpError && e.statusCode === 404) throw new HttpError(404, KEY_NOT_FOUND);
      throw e;
    }
    return row;
  }

  /** keyForManagement as a preValidation hook (its 400/404/403 come before the body's); read with keyOf. */
  const keys = new WeakMap<FastifyRequest, KeyRow>();
  const requireKey = async (req: FastifyRequest): Promise<void> => {
    keys.set(req, await keyForManagement(req));
  };
  const keyOf = (req: FastifyRequest): KeyRow => {
    const row = keys.get(req);
    if (row === undefined) throw new Error('route has no requireKey hook');
    return row;
  };

  app.post(
    '/api/advertiser/api-keys',
    {
      preValidation: [requireManage(sql, true), requireBodyObject],
      schema: workspaceRoute({
        summary:
          'Create a management API key (dashboard session of an owner or admin); the key is shown once',
        body: CreateBody,
        response: { 201: dataOf(createdKey) },
      }),
    },
    async (req, reply) => {
      const p = principalOf(req);
      const { workspaceId } = manageOf(req);
      const b = req.body;
      const name = parseName(b.name);
      const scopes = b.scopes === undefined ? ['*'] : parseScopes(b.scopes);
      const expiresAt = parseExpiresAt(b.expires_at, Date.now());
      const programScope =
        b.program_scope === undefined ? null : await programScopeOf(b.program_scope, workspaceId);
      const key = generateSecret('affk_');
      const row = await createKey(sql, dal, req, {
        workspaceId,
        createdBy: p.userId,
        name,
        prefix: key.slice(0, PREFIX_LENGTH),
        hash: hashSecret(key),
        masked: maskSecret(key),
        scopes,
        programScope,
        expiresAt,
      });
      return reply.code(201).send({ data: { ...toKey(row), key } });
    },
  );

  app.get(
    '/api/advertiser/api-keys',
    {
      preValidation: requireManage(sql),
      schema: workspaceRoute({
        summary: "List the workspace's API keys, newest first, revoked ones included (masked only)",
        response: { 200: dataOf(Type.Array(apiKey)) },
      }),
    },
    async (req) => ({ data: (await dal.list(manageOf(req).workspaceId)).map(toKey) }),
  );

  app.put(
    '/api/advertiser/api-keys/:id',
    {
      preValidation: [requireKey, requiresBody(async (req) => checkKeyUpdate(bodyObject(req.body)))],
      schema: workspaceRoute({
        summary: "Change an active key's name, scopes or program scope (takes effect on its next request)",
        description: 'expires_at cannot be changed (400): create a new key instead. A revoked key is 409.',
        params: idParams,
        body: UpdateBody,
        response: { 200: dataOf(apiKey) },
      }),
    },
    async (req) => {
      const current = keyOf(req);
      const b = req.body;
      const name = b.name === undefined ? null : parseName(b.name);
      const scopes = b.scopes === undefined ? null : parseScopes(b.scopes);
      const ws = Number(current.workspace_id);
      const programScope =
        b.program_scope === undefined ? undefined : await programScopeOf(b.program_scope, ws);
      if (current.status === 'revoked') throw new HttpError(409, KEY_REVOKED);
      const row = await dal.update(current.id, { name, scopes, programScope });
      if (!row) throw new HttpError(409, KEY_REVOKED);
      return { data: toKey(row) };
    },
  );

  app.delete(
    '/api/advertiser/api-keys/:id',
    {
      preValidation: requireKey,
      schema: workspaceRoute({
        summary: 'Revoke a key (soft: status revoked, row kept); rejected (401) from its next request',
        description: 'Idempotent: revoking a revoked key returns it unchanged.',
        params: idParams,
        response: { 200: dataOf(apiKey) },
      }),
    },
    async (req) => {
      const current = keyOf(req);
      return { data: toKey((await dal.revoke(current.id)) ?? current) };
    },
  );
}
