// POST/GET /api/advertiser/api-keys, PUT/DELETE /api/advertiser/api-keys/:id (spec 2 and 4.8, CONTRACT
// "Management API keys"). Keys are managed only with a dashboard session of an active owner or admin; an
// `affk_` key gets 403 on every route here. The full key is returned once, by POST; it is stored only as
// its SHA-256, and every other answer carries `key_masked` (`affk_AbCd…wxyz`) and `prefix` (the key's
// first 9 characters, `affk_` plus 4) instead. Revocation is soft: the row stays, status `revoked`.
//
// Workspace: POST and GET act on `?workspace_id=` (POST also takes it in the body), by default the one
// workspaceAccess picks. PUT and DELETE act on the key's own workspace; a key of a workspace the caller is
// not a member of (or not the `workspace_id` given) is 404, as is an unknown id.
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../shared/db/sql.ts';
import { HttpError, noValidation } from '../../../shared/http/server.ts';
import { isPlainObject } from '../../../shared/json.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../shared/domain/secrets.ts';
import { SCOPES, workspaceAccess, principalOf, parseId, requestedWorkspace } from '../access.ts';
import type { Principal } from '../access.ts';
import type { ApiDeps } from '../deps.ts';
import { memberErrors, workspaceQuery } from '../common.ts';

const PREFIX_LENGTH = 9;
const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

const keyProperties = {
  id: { type: 'integer' },
  name: { type: 'string' },
  prefix: { type: 'string', description: 'The first 9 characters of the key: `affk_` and 4 more' },
  scopes: { type: 'array', items: { type: 'string', enum: SCOPES } },
  program_scope: {
    type: ['array', 'null'],
    items: { type: 'string' },
    description: 'Program ids the key is limited to; null: every program of the workspace',
  },
  status: { type: 'string', enum: ['active', 'revoked'] },
  expires_at: { type: ['string', 'null'], format: 'date-time' },
  created_at: { type: 'string', format: 'date-time' },
  last_used_at: { type: ['string', 'null'], format: 'date-time' },
  revoked_at: { type: ['string', 'null'], format: 'date-time' },
  key_masked: { type: 'string', description: 'Masked key, `affk_AbCd…wxyz`' },
} as const;
const apiKey = { type: 'object', properties: keyProperties } as const;
const apiKeyData = { type: 'object', properties: { data: apiKey } } as const;
const createdKeyData = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        ...keyProperties,
        key: { type: 'string', description: 'The full key, `affk_…`. Shown only in this response.' },
      },
    },
  },
} as const;

const idParams = { type: 'object', properties: { id: { type: 'integer' } } } as const;

const scopesSchema = {
  type: 'array',
  minItems: 1,
  items: { type: 'string', enum: SCOPES },
  description: 'Default ["*"]',
} as const;
const programScopeSchema = {
  type: ['array', 'null'],
  minItems: 1,
  items: { type: ['string', 'integer'] },
  description: 'Program ids (strings or integers) of this workspace; null (default): all programs',
} as const;

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  program_scope: string[] | null;
  status: 'active' | 'revoked';
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  key_masked: string;
  workspace_id: string;
}
const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const toKey = (r: KeyRow) => ({
  id: Number(r.id),
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes,
  program_scope: r.program_scope,
  status: r.status,
  expires_at: iso(r.expires_at),
  created_at: r.created_at.toISOString(),
  last_used_at: iso(r.last_used_at),
  revoked_at: iso(r.revoked_at),
  key_masked: r.key_masked,
});

function parseName(v: unknown): string {
  if (v === undefined || v === null) throw new HttpError(400, 'name is required');
  const name = typeof v === 'string' ? v.trim() : '';
  if (name.length < 1 || name.length > 200) {
    throw new HttpError(400, 'name must be a string of 1 to 200 characters');
  }
  return name;
}

function parseScopes(v: unknown): string[] {
  if (!Array.isArray(v) || v.length === 0 || v.some((s) => typeof s !== 'string')) {
    throw new HttpError(400, 'scopes must be a non-empty array of strings');
  }
  for (const s of v as string[]) {
    if (!(SCOPES as readonly string[]).includes(s)) {
      throw new HttpError(400, `Unknown scope: ${s}. Allowed: ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(v as string[])];
}

/** Program ids, each a live (not deleted) program of the workspace; null = every program. */
async function parseProgramScope(sql: Sql, v: unknown, workspaceId: number): Promise<number[] | null> {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0) {
    throw new HttpError(400, 'program_scope must be null or a non-empty array of program ids');
  }
  const ids: number[] = [];
  for (const x of v as unknown[]) {
    const id = parseId(x);
    if (id === null)
      throw new HttpError(400, `program_scope has an invalid program id: ${JSON.stringify(x)}`);
    if (!ids.includes(id)) ids.push(id);
  }
  const found = await sql<{ id: string }[]>`
    select id from programs
    where id = any(${ids.map(String)}::bigint[]) and workspace_id = ${workspaceId} and deleted_at is null`;
  const known = new Set(found.map((r) => Number(r.id)));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw new HttpError(400, `program_scope: program ${missing.join(', ')} not found in this workspace`);
  }
  return ids;
}

function parseExpiresAt(v: unknown): Date | null {
  if (v === undefined || v === null) return null;
  const ms = typeof v === 'string' && ISO_DATETIME.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) {
    throw new HttpError(400, 'expires_at must be an ISO 8601 datetime with a time zone, or null');
  }
  if (ms <= Date.now()) throw new HttpError(400, 'expires_at must be in the future');
  return new Date(ms);
}

const COLUMNS = (sql: Sql) => sql`
  id, name, prefix, scopes, program_scope::text[] as program_scope, status, expires_at, created_at,
  last_used_at, revoked_at, key_masked, workspace_id`;

export function registerApiKeyRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const security = [{ session: [] }];

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
    const [row] = await sql<KeyRow[]>`select ${COLUMNS(sql)} from api_keys where id = ${id}`;
    const ws = row ? Number(row.workspace_id) : null;
    if (!row || (requested !== null && ws !== requested)) throw new HttpError(404, 'API key not found');
    try {
      await workspaceAccess(sql, p, 'manage', ws);
    } catch (e) {
      // Not a member of the key's workspace: do not reveal that the key exists.
      if (e instanceof HttpError && e.statusCode === 404) throw new HttpError(404, 'API key not found');
      throw e;
    }
    return row;
  }

  app.post(
    '/api/advertiser/api-keys',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary:
          'Create a management API key (dashboard session of an owner or admin); the key is shown once',
        security,
        querystring: workspaceQuery,
        body: {
          type: 'object',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            scopes: scopesSchema,
            program_scope: programScopeSchema,
            expires_at: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'ISO 8601 with a time zone, in the future; null (default): no expiry',
            },
            workspace_id: { type: 'integer', description: 'Same as the query parameter' },
          },
        },
        response: { 201: createdKeyData, ...memberErrors },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const requested = requestedWorkspace(req.query, b);
      const p = principalOf(req);
      const { workspaceId } = await workspaceAccess(sql, p, 'manage', requested);
      if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
      const name = parseName(b.name);
      const scopes = b.scopes === undefined ? ['*'] : parseScopes(b.scopes);
      const expiresAt = parseExpiresAt(b.expires_at);
      const programScope =
        b.program_scope === undefined ? null : await parseProgramScope(sql, b.program_scope, workspaceId);
      const key = generateSecret('affk_');
      const [row] = await sql<KeyRow[]>`
        insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes, program_scope, expires_at)
        values (${workspaceId}, ${p.userId}, ${name}, ${key.slice(0, PREFIX_LENGTH)}, ${hashSecret(key)},
                ${maskSecret(key)}, ${scopes}::text[],
                ${programScope === null ? null : programScope.map(String)}::bigint[], ${expiresAt})
        returning ${COLUMNS(sql)}`;
      return reply.code(201).send({ data: { ...toKey(row!), key } });
    },
  );

  app.get(
    '/api/advertiser/api-keys',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "List the workspace's API keys, newest first, revoked ones included (masked only)",
        security,
        querystring: workspaceQuery,
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: apiKey } } },
          ...memberErrors,
        },
      },
    },
    async (req) => {
      const requested = requestedWorkspace(req.query);
      const { workspaceId } = await workspaceAccess(sql, principalOf(req), 'manage', requested);
      const rows = await sql<KeyRow[]>`
        select ${COLUMNS(sql)} from api_keys where workspace_id = ${workspaceId} order by id desc`;
      return { data: rows.map(toKey) };
    },
  );

  app.put(
    '/api/advertiser/api-keys/:id',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: "Change an active key's name, scopes or program scope (takes effect on its next request)",
        description: 'expires_at cannot be changed (400): create a new key instead. A revoked key is 409.',
        security,
        params: idParams,
        querystring: workspaceQuery,
        body: {
          type: 'object',
          minProperties: 1,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 200 },
            scopes: scopesSchema,
            program_scope: programScopeSchema,
          },
        },
        response: { 200: apiKeyData, ...memberErrors },
      },
    },
    async (req) => {
      const current = await keyForManagement(req);
      const b = req.body;
      if (!isPlainObject(b)) throw new HttpError(400, 'Request body must be a JSON object');
      if (b.expires_at !== undefined) {
        throw new HttpError(400, 'expires_at cannot be changed; create a new key instead');
      }
      if (b.name === undefined && b.scopes === undefined && b.program_scope === undefined) {
        throw new HttpError(400, 'Nothing to update: send name, scopes or program_scope');
      }
      const name = b.name === undefined ? null : parseName(b.name);
      const scopes = b.scopes === undefined ? null : parseScopes(b.scopes);
      const ws = Number(current.workspace_id);
      const programScope =
        b.program_scope === undefined ? undefined : await parseProgramScope(sql, b.program_scope, ws);
      if (current.status === 'revoked') throw new HttpError(409, 'API key is revoked');
      const [row] = await sql<KeyRow[]>`
        update api_keys set
          name = coalesce(${name}, name),
          scopes = coalesce(${scopes}::text[], scopes),
          program_scope = ${
            programScope === undefined
              ? sql`program_scope`
              : sql`${programScope === null ? null : programScope.map(String)}::bigint[]`
          }
        where id = ${current.id} and status = 'active'
        returning ${COLUMNS(sql)}`;
      if (!row) throw new HttpError(409, 'API key is revoked');
      return { data: toKey(row) };
    },
  );

  app.delete(
    '/api/advertiser/api-keys/:id',
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Revoke a key (soft: status revoked, row kept); rejected (401) from its next request',
        description: 'Idempotent: revoking a revoked key returns it unchanged.',
        security,
        params: idParams,
        querystring: workspaceQuery,
        response: { 200: apiKeyData, ...memberErrors },
      },
    },
    async (req) => {
      const current = await keyForManagement(req);
      const [row] = await sql<KeyRow[]>`
        update api_keys set status = 'revoked', revoked_at = now()
        where id = ${current.id} and status = 'active'
        returning ${COLUMNS(sql)}`;
      return { data: toKey(row ?? current) };
    },
  );
}
