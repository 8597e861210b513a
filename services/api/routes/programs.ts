// Programs (CONTRACT "Programs", spec 2 and 4.8): list, create, read, update, soft delete, go live and
// regenerate the tracking token, under /api/advertiser/affiliate-programs.
//
// The tracking token is shown in full only in the create and regenerate responses; it is stored as its
// SHA-256 and a masked form. Writing the row is all it takes to reach the ingress: triggers on programs
// append to cache_invalidations, which every ingress polls, so a regenerated or deleted token is dead there
// within one poll interval.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../../shared/db/sql.ts';
import {
  HttpError,
  ERROR_SCHEMA,
  jsonBody,
  noValidation,
  errorResponses,
} from '../../../shared/http/server.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../shared/domain/secrets.ts';
import { DEFAULT_POLICY, parsePolicy } from '../../../shared/domain/commission-policy.ts';
import {
  ROLE_PERMISSIONS,
  programAccess,
  workspaceAccess,
  principalOf,
  requestedWorkspace,
} from '../access.ts';
import type { Role } from '../access.ts';
import type { ApiDeps } from '../deps.ts';
import { isUniqueViolation, iso, managementSecurity, pathId } from '../common.ts';

// ---- programs ----

const SLUG_RE = /^[a-z0-9][a-z0-9-]{0,62}$/;
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
const MAX_ORIGINS = 100;

interface ProgramRow {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  status: 'draft' | 'live';
  cookie_window_days: number;
  currency: string;
  commission: unknown;
  allowed_origins: string[];
  api_token_masked: string | null;
  created_at: Date;
}

export interface Program {
  id: number;
  workspace_id: number;
  name: string;
  slug: string;
  status: 'draft' | 'live';
  cookie_window_days: number;
  currency: string;
  commission: unknown;
  allowed_origins: string[];
  api_token_masked: string | null;
  created_at: string;
}

const PROGRAM_COLUMNS = (sql: Sql) =>
  sql`id, workspace_id, name, slug, status, cookie_window_days, currency, commission, allowed_origins,
      api_token_masked, created_at`;

function toProgram(r: ProgramRow): Program {
  // Stored policies are normalised on write; rows written elsewhere (seed, the column default) are shown
  // normalised too when they parse, and as stored when they do not.
  const policy = parsePolicy(r.commission);
  return {
    id: Number(r.id),
    workspace_id: Number(r.workspace_id),
    name: r.name,
    slug: r.slug,
    status: r.status,
    cookie_window_days: r.cookie_window_days,
    currency: r.currency,
    commission: typeof policy === 'string' ? r.commission : policy,
    allowed_origins: r.allowed_origins,
    api_token_masked: r.api_token_masked,
    created_at: iso(r.created_at)!,
  };
}

const programProperties = {
  id: { type: 'integer' },
  workspace_id: { type: 'integer' },
  name: { type: 'string' },
  slug: { type: 'string' },
  status: { type: 'string', enum: ['draft', 'live'] },
  cookie_window_days: { type: 'integer' },
  currency: { type: 'string' },
  commission: {
    type: 'object',
    additionalProperties: true,
    description: 'Commission policy: type percentage|flat, percent or amount_cents, recurring, product_rules',
  },
  allowed_origins: { type: 'array', items: { type: 'string' } },
  api_token_masked: { type: ['string', 'null'] },
  created_at: { type: 'string', format: 'date-time' },
} as const;
const programSchema = { type: 'object', properties: programProperties } as const;
const programInput = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    slug: { type: 'string', pattern: SLUG_RE.source },
    cookie_window_days: { type: 'integer', minimum: 1, maximum: 3650 },
    currency: { type: 'string', description: 'ISO 4217 code' },
    commission: { type: 'object', additionalProperties: true },
    allowed_origins: { type: 'array', items: { type: 'string' } },
  },
} as const;
const idParams = { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } as const;

export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 50)
    .replace(/-+$/, '');
  return s === '' ? 'program' : s;
}

/**
 * The origins a browser may call click and lead from: scheme http or https, a host, an optional port,
 * nothing else (no path, query, fragment, credentials or wildcard). Stored as URL.origin (lowercase host,
 * default port dropped), which is what a browser sends in its Origin header.
 */
export function parseOrigins(v: unknown): string[] | string {
  const shape = `allowed_origins must be an array of at most ${MAX_ORIGINS} origins such as https://shop.example.com`;
  if (!Array.isArray(v) || v.length > MAX_ORIGINS) return shape;
  const out: string[] = [];
  for (const [i, s] of v.entries()) {
    const bad = `allowed_origins[${i}] must be an origin such as https://shop.example.com (http or https, host and optional port; no path, query or wildcard)`;
    if (typeof s !== 'string' || s.length > 300) return bad;
    let u: URL;
    try {
      u = new URL(s.trim());
    } catch {
      return bad;
    }
    if (
      (u.protocol !== 'https:' && u.protocol !== 'http:') ||
      u.username !== '' ||
      u.password !== '' ||
      u.hostname.includes('*') ||
      u.pathname !== '/' ||
      u.search !== '' ||
      u.hash !== ''
    ) {
      return bad;
    }
    if (!out.includes(u.origin)) out.push(u.origin);
  }
  return out;
}

/** The program fields of a create or update body; only the fields present are returned. */
function parseProgramFields(b: Record<string, unknown>, creating: boolean) {
  const f: {
    name?: string;
    slug?: string;
    cookie_window_days?: number;
    currency?: string;
    commission?: unknown;
    allowed_origins?: string[];
  } = {};
  const present = (k: string) => b[k] !== undefined && (creating ? b[k] !== null : true);
  if (creating || b.name !== undefined) {
    const name = typeof b.name === 'string' ? b.name.trim() : '';
    if (name.length < 1 || name.length > 200)
      throw new HttpError(400, 'name is required and must be 1 to 200 characters');
    f.name = name;
  }
  if (present('slug')) {
    if (typeof b.slug !== 'string' || !SLUG_RE.test(b.slug)) {
      throw new HttpError(
        400,
        'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
      );
    }
    f.slug = b.slug;
  }
  if (present('cookie_window_days')) {
    const d = b.cookie_window_days;
    if (!Number.isSafeInteger(d) || (d as number) < 1 || (d as number) > 3650) {
      throw new HttpError(400, 'cookie_window_days must be an integer from 1 to 3650');
    }
    f.cookie_window_days = d as number;
  }
  if (present('currency')) {
    const c = typeof b.currency === 'string' ? b.currency.trim().toUpperCase() : '';
    if (!/^[A-Z]{3}$/.test(c) || !CURRENCIES.has(c))
      throw new HttpError(400, 'currency must be an ISO 4217 currency code');
    f.currency = c;
  }
  if (present('commission')) {
    const policy = parsePolicy(b.commission);
    if (typeof policy === 'string') throw new HttpError(400, policy);
    f.commission = policy;
  }
  if (present('allowed_origins')) {
    const origins = parseOrigins(b.allowed_origins);
    if (typeof origins === 'string') throw new HttpError(400, origins);
    f.allowed_origins = origins;
  }
  return f;
}

/** Roles that may list programs (all of them today; read from the role table, not assumed). */
const LISTING_ROLES: Role[] = (Object.keys(ROLE_PERMISSIONS) as Role[]).filter((r) =>
  ROLE_PERMISSIONS[r].has('program:list'),
);

export function registerProgramRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs';

  async function loadProgram(id: number): Promise<Program> {
    const [row] = await sql<ProgramRow[]>`
      select ${PROGRAM_COLUMNS(sql)} from programs where id = ${id} and deleted_at is null`;
    if (!row) throw new HttpError(404, 'Program not found');
    return toProgram(row);
  }

  app.get(
    base,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'List the programs the caller can see',
        description:
          'Scope program:list. A dashboard session sees the programs of every workspace where it is an active ' +
          "member; an API key sees its workspace's programs, limited to its program_scope when set. Only " +
          'api_token_masked is returned, never the token.',
        security: managementSecurity,
        response: {
          200: { type: 'object', properties: { data: { type: 'array', items: programSchema } } },
          ...errorResponses(401, 403),
        },
      },
    },
    async (req) => {
      const p = principalOf(req);
      let rows: ProgramRow[];
      if (p.kind === 'api_key') {
        await workspaceAccess(sql, p, 'program:list', null);
        rows = await sql<ProgramRow[]>`
          select ${PROGRAM_COLUMNS(sql)} from programs
          where workspace_id = ${p.workspaceId} and deleted_at is null
            ${p.programScope === null ? sql`` : sql`and id = any(${p.programScope}::bigint[])`}
          order by id`;
      } else {
        rows = await sql<ProgramRow[]>`
          select ${PROGRAM_COLUMNS(sql)} from programs
          where deleted_at is null and workspace_id in (
            select workspace_id from memberships
            where user_id = ${p.userId} and status = 'active' and role = any(${LISTING_ROLES}::text[]))
          order by id`;
      }
      return { data: rows.map(toProgram) };
    },
  );

  app.post(
    base,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Create a program (status draft); the tracking token is returned in full this once',
        description:
          'Scope program:create. `workspace_id` picks the workspace (default: the key’s workspace, or the ' +
          'session user’s own). The slug is generated from the name when omitted (with a random suffix when ' +
          'taken). Errors: 400 `name is required and must be 1 to 200 characters`, `slug must be 1 to 63 ' +
          'lowercase letters, digits or dashes, starting with a letter or digit`, `cookie_window_days must be ' +
          'an integer from 1 to 3650`, `currency must be an ISO 4217 currency code`, commission policy ' +
          'messages, `allowed_origins…`, `workspace_id must be a positive integer`; 404 `Workspace not ' +
          'found`; 409 `slug is already taken`.',
        security: managementSecurity,
        body: {
          ...programInput,
          required: ['name'],
          properties: { ...programInput.properties, workspace_id: { type: 'integer' } },
        },
        response: {
          201: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  ...programProperties,
                  api_token: { type: 'string', description: 'aff_… shown only here' },
                },
              },
            },
          },
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const b = jsonBody(req);
      const requested = requestedWorkspace(req.query, b);
      const f = parseProgramFields(b, true);
      const ws = await workspaceAccess(sql, p, 'program:create', requested);
      const token = generateSecret('aff_');
      const commission = f.commission ?? DEFAULT_POLICY;
      const candidates = f.slug !== undefined ? [f.slug] : [slugify(f.name!)];
      if (f.slug === undefined) {
        for (let i = 0; i < 5; i++) candidates.push(`${candidates[0]}-${randomBytes(3).toString('hex')}`);
      }
      for (const slug of candidates) {
        const [row] = await sql<ProgramRow[]>`
          insert into programs (workspace_id, name, slug, cookie_window_days, currency, commission,
                                allowed_origins, api_token_hash, api_token_masked)
          values (${ws.workspaceId}, ${f.name!}, ${slug}, ${f.cookie_window_days ?? 60}, ${f.currency ?? 'USD'},
                  ${sql.json(commission as never)}, ${f.allowed_origins ?? []}::text[],
                  ${hashSecret(token)}, ${maskSecret(token)})
          on conflict (slug) do nothing
          returning ${PROGRAM_COLUMNS(sql)}`;
        if (row) return reply.code(201).send({ data: { ...toProgram(row), api_token: token } });
      }
      if (f.slug !== undefined) throw new HttpError(409, 'slug is already taken');
      throw new HttpError(409, 'Could not generate a free slug; give one explicitly');
    },
  );

  app.get<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Read a program',
        description: 'Scope program:read. 404 `Program not found` for a program of another workspace.',
        security: managementSecurity,
        params: idParams,
        response: {
          200: { type: 'object', properties: { data: programSchema } },
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const id = pathId(req.params.id);
      await programAccess(sql, principalOf(req), id, 'program:read');
      return { data: await loadProgram(id) };
    },
  );

  app.put<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Update a program (only the fields given change)',
        description:
          'Scope program:update. Changeable: name, slug, cookie_window_days, currency, commission, ' +
          'allowed_origins (same rules and messages as create). `status` is changed only by go-live: a ' +
          'different value is 400 `status is changed with POST /api/advertiser/affiliate-programs/:id/go-live`. ' +
          '409 `slug is already taken`.',
        security: managementSecurity,
        params: idParams,
        body: programInput,
        response: {
          200: { type: 'object', properties: { data: programSchema } },
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req) => {
      const id = pathId(req.params.id);
      await programAccess(sql, principalOf(req), id, 'program:update');
      const b = jsonBody(req);
      for (const k of ['slug', 'cookie_window_days', 'currency', 'commission', 'allowed_origins', 'name']) {
        if (b[k] === null) throw new HttpError(400, `${k} cannot be null`);
      }
      const f = parseProgramFields(b, false);
      if (b.status !== undefined) {
        const current = await loadProgram(id);
        if (b.status !== current.status) {
          throw new HttpError(
            400,
            'status is changed with POST /api/advertiser/affiliate-programs/:id/go-live',
          );
        }
      }
      try {
        const [row] = await sql<ProgramRow[]>`
          update programs set
            name = coalesce(${f.name ?? null}::text, name),
            slug = coalesce(${f.slug ?? null}::text, slug),
            cookie_window_days = coalesce(${f.cookie_window_days ?? null}::integer, cookie_window_days),
            currency = coalesce(${f.currency ?? null}::char(3), currency),
            commission = coalesce(${f.commission === undefined ? null : sql.json(f.commission as never)}::jsonb, commission),
            allowed_origins = coalesce(${f.allowed_origins ?? null}::text[], allowed_origins),
            updated_at = now()
          where id = ${id} and deleted_at is null
          returning ${PROGRAM_COLUMNS(sql)}`;
        if (!row) throw new HttpError(404, 'Program not found');
        return { data: toProgram(row) };
      } catch (err) {
        if (isUniqueViolation(err, 'programs_slug_key')) throw new HttpError(409, 'slug is already taken');
        throw err;
      }
    },
  );

  app.delete<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Delete a program (soft: kept for audit; its tracking token is rejected from then on)',
        description: 'Scope program:delete. 204 on success; the program is 404 afterwards.',
        security: managementSecurity,
        params: idParams,
        response: { 204: { type: 'null' }, 401: ERROR_SCHEMA, 403: ERROR_SCHEMA, 404: ERROR_SCHEMA },
      },
    },
    async (req, reply) => {
      const id = pathId(req.params.id);
      await programAccess(sql, principalOf(req), id, 'program:delete');
      const rows = await sql`
        update programs set deleted_at = now(), updated_at = now()
        where id = ${id} and deleted_at is null returning id`;
      if (rows.length === 0) throw new HttpError(404, 'Program not found');
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    `${base}/:id/go-live`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Publish a program: status draft → live (a live program is returned unchanged)',
        description: 'Scope program:go_live.',
        security: managementSecurity,
        params: idParams,
        response: {
          200: { type: 'object', properties: { data: programSchema } },
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const id = pathId(req.params.id);
      await programAccess(sql, principalOf(req), id, 'program:go_live');
      await sql`
        update programs set status = 'live', updated_at = now()
        where id = ${id} and status = 'draft' and deleted_at is null`;
      return { data: await loadProgram(id) };
    },
  );

  app.post<{ Params: { id: string } }>(
    `${base}/:id/regenerate-api-token`,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Regenerate the tracking token; the old one stops working at once',
        description:
          'Scope program:regenerate-token. The new token is returned in full only here. The ingress drops the ' +
          'old token within its cache poll interval (well under a second by default).',
        security: managementSecurity,
        params: idParams,
        response: {
          200: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: { api_token: { type: 'string' }, api_token_masked: { type: 'string' } },
              },
            },
          },
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const id = pathId(req.params.id);
      await programAccess(sql, principalOf(req), id, 'program:regenerate-token');
      const token = generateSecret('aff_');
      const masked = maskSecret(token);
      const rows = await sql`
        update programs set api_token_hash = ${hashSecret(token)}, api_token_masked = ${masked}, updated_at = now()
        where id = ${id} and deleted_at is null returning id`;
      if (rows.length === 0) throw new HttpError(404, 'Program not found');
      return { data: { api_token: token, api_token_masked: masked } };
    },
  );
}
