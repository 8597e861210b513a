// Programs (CONTRACT "Programs", spec 2 and 4.8): list, create, read, update, soft delete, go live and
// regenerate the tracking token, under /api/advertiser/affiliate-programs.
//
// The tracking token is shown in full only in the create and regenerate responses; it is stored as its
// SHA-256 and a masked form. A regenerated or deleted token is dead at once (docs/ingress.md).
import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import {
  Checked,
  Data,
  DataList,
  Nullable,
  StringEnum,
  Trimmed,
} from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { generateSecret, hashSecret, maskSecret } from '../../../../shared/domain/secrets.ts';
import { MAX_AMOUNT_CENTS, currencyPattern } from '../../../../shared/domain/money.ts';
import { PolicyIn, PolicyOut, policyError } from '../../../../shared/domain/policy-schema.ts';
import { RISK_RULES_DOC, riskRulesError } from '../../../../shared/domain/risk-rules.ts';
import { principalOf, scopedWorkspaceAccess } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import {
  PROGRAM_NOT_FOUND,
  ProgramParams,
  WorkspaceIdField,
  WorkspaceIdQuery,
  isUniqueViolation,
  managementSecurity,
  programOf,
  requireProgram,
  requireWorkspace,
  workspaceOfReq,
} from '../../common.ts';
import * as dal from './dal.ts';
import { updateProgram } from './operations.ts';
import {
  ERR,
  LISTING_ROLES,
  MAX_ORIGINS,
  SLUG_RE,
  checkStatusUnchanged,
  currencyError,
  newProgram,
  originsError,
  programFields,
  rejectNulls,
  toProgram,
  websiteUrlError,
} from './service.ts';

// ---- schemas ----

// The policy's one schema (shared/domain/policy-schema.ts): the check is parsePolicy's, the document the
// request schema it walks; answers show the normalised form.
const Policy = Checked<Record<string, unknown>>(PolicyIn, policyError);
const Origins = Checked<string[]>(
  {
    type: 'array',
    maxItems: MAX_ORIGINS,
    items: { type: 'string', maxLength: 300, description: 'http(s)://host[:port], nothing more' },
    description: 'Origins a browser may send click and lead from; stored as URL.origin',
  },
  originsError,
);
const Currency = Checked<string>(
  { type: 'string', pattern: currencyPattern(true), description: 'ISO 4217 code (any case)', default: 'USD' },
  currencyError,
);
const Name = Trimmed(200, { errorMessage: ERR.name });
const Slug = Type.String({ pattern: SLUG_RE.source, errorMessage: ERR.slug });
const CookieWindow = Type.Integer({ minimum: 1, maximum: 3650, default: 60, errorMessage: ERR.cookieWindow });
const HoldDays = Type.Integer({
  minimum: 0,
  maximum: 365,
  default: 30,
  description:
    'Days from a sale until its commission is payable (applies to commissions created after a change)',
  errorMessage: ERR.holdDays,
});
const MinPayout = Type.Integer({
  minimum: 0,
  maximum: MAX_AMOUNT_CENTS,
  default: 0,
  description: 'The smallest payout, in cents: a partner owed less is not paid yet (it carries over)',
  errorMessage: ERR.minPayout,
});
// Applications (docs/partners.md): the public page at /p/<slug>, auto-approval, its text, own links.
const PublicPage = Type.Boolean({
  default: false,
  description: 'Show the program at /p/<slug> and GET /api/public/programs/:slug, and take applications',
  errorMessage: ERR.publicPage,
});
const AutoApprove = Type.Boolean({
  default: false,
  description: 'Applications are approved at once (with one link)',
  errorMessage: ERR.autoApprove,
});
const Description = Type.String({
  maxLength: 2000,
  description: 'Shown on the public page',
  errorMessage: ERR.description,
});
const PartnerLinks = Type.Boolean({
  default: true,
  description: 'Approved partners may create their own links',
  errorMessage: ERR.partnerLinks,
});

// Codes (docs/codes.md): where full referral links point, and whether a code beats a click.
const WebsiteUrl = Checked<string>(
  { type: 'string', maxLength: 2000, description: 'http(s) URL: full referral links are built on it' },
  websiteUrlError,
);
const CodeAttribution = StringEnum(['fallback', 'override'] as const, ERR.codeAttribution, {
  default: 'fallback',
  description:
    "fallback: a code attributes a sale whose customer has no partner; override: a code's partner gets the sale " +
    'even when a click or lead named another',
});
const RiskRulesIn = Checked<Record<string, boolean>>(RISK_RULES_DOC, riskRulesError);

// Property order is the order of the checks (see shared/http/validation.ts). On create, null is "omitted".
const opt = <T extends TSchema>(s: T) => Type.Optional(Nullable(s, s.errorMessage as string | undefined));
const CreateBody = Type.Object({
  workspace_id: WorkspaceIdField,
  name: Name,
  slug: opt(Slug),
  cookie_window_days: opt(CookieWindow),
  currency: opt(Currency),
  commission: opt(Policy),
  allowed_origins: opt(Origins),
  hold_days: opt(HoldDays),
  min_payout_cents: opt(MinPayout),
  public_page: opt(PublicPage),
  auto_approve: opt(AutoApprove),
  description: opt(Description),
  partner_links: opt(PartnerLinks),
  website_url: opt(WebsiteUrl),
  code_attribution: opt(CodeAttribution),
  risk_rules: opt(RiskRulesIn),
});
// On update, only the fields given change; null is refused (rejectNulls) before these checks.
const UpdateBody = Type.Object({
  name: Type.Optional(Name),
  slug: Type.Optional(Slug),
  cookie_window_days: Type.Optional(CookieWindow),
  currency: Type.Optional(Currency),
  commission: Type.Optional(Policy),
  allowed_origins: Type.Optional(Origins),
  hold_days: Type.Optional(HoldDays),
  min_payout_cents: Type.Optional(MinPayout),
  public_page: Type.Optional(PublicPage),
  auto_approve: Type.Optional(AutoApprove),
  description: Type.Optional(Nullable(Description, ERR.description)),
  partner_links: Type.Optional(PartnerLinks),
  website_url: Type.Optional(Nullable(WebsiteUrl, ERR.websiteUrl)),
  code_attribution: Type.Optional(CodeAttribution),
  risk_rules: Type.Optional(RiskRulesIn),
  status: Type.Optional(
    StringEnum(['draft', 'live'] as const, ERR.status, { description: 'Only the current status' }),
  ),
});

const programProperties = {
  id: Type.Integer(),
  workspace_id: Type.Integer(),
  name: Type.String(),
  slug: Type.String(),
  status: Type.String({ enum: ['draft', 'live'] }),
  cookie_window_days: Type.Integer(),
  currency: Type.String(),
  commission: PolicyOut,
  allowed_origins: Type.Array(Type.String()),
  api_token_masked: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  hold_days: Type.Integer({ description: 'Days from a sale until its commission is payable' }),
  min_payout_cents: Type.Integer({ description: 'The smallest payout, in cents' }),
  public_page: Type.Boolean(),
  auto_approve: Type.Boolean(),
  description: Type.Union([Type.String(), Type.Null()]),
  partner_links: Type.Boolean(),
  website_url: Type.Union([Type.String(), Type.Null()]),
  code_attribution: Type.String({ enum: ['fallback', 'override'] }),
  risk_rules: Type.Object(
    { disposable_email: Type.Boolean(), shared_payout_method: Type.Boolean(), paid_search: Type.Boolean() },
    { description: RISK_RULES_DOC.description },
  ),
};
const ProgramOut = Type.Object(programProperties);

// ---- routes ----

export function registerProgramRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const base = '/api/advertiser/affiliate-programs';

  async function loadProgram(id: number) {
    const row = await dal.findProgram(sql, id);
    if (!row) throw new HttpError(404, PROGRAM_NOT_FOUND);
    return toProgram(row);
  }

  app.get(
    base,
    {
      schema: {
        tags: ['management'],
        summary: 'List the programs the caller can see',
        description:
          'Scope program:list. A dashboard session sees the programs of every workspace where it is an active ' +
          "member; an API key sees its workspace's programs, limited to its program_scope when set. Only " +
          'api_token_masked is returned, never the token.',
        security: managementSecurity,
        response: { 200: DataList(ProgramOut), ...errorResponses(401, 403) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      if (p.kind === 'api_key') {
        const ws = await scopedWorkspaceAccess(sql, p, 'program:list', null);
        return { data: (await dal.programsOfWorkspace(sql, ws.workspaceId, ws.programScope)).map(toProgram) };
      }
      return { data: (await dal.programsOfUser(sql, p.userId, LISTING_ROLES)).map(toProgram) };
    },
  );

  app.post(
    base,
    {
      // The workspace and the caller's access are checked before the body's fields.
      preValidation: requireWorkspace(sql, 'program:create'),
      schema: {
        tags: ['management'],
        summary: 'Create a program (status draft); the tracking token is returned in full this once',
        description:
          'Scope program:create. `workspace_id` picks the workspace (default: the key’s workspace, or the ' +
          'session user’s own). The slug is generated from the name when omitted (with a random suffix when ' +
          'taken). Errors: 400 `name is required and must be 1 to 200 characters`, `slug must be 1 to 63 ' +
          'lowercase letters, digits or dashes, starting with a letter or digit`, `cookie_window_days must be ' +
          'an integer from 1 to 3650`, `currency must be an ISO 4217 currency code`, commission policy ' +
          'messages, `allowed_origins…`, `hold_days must be an integer from 0 to 365` (default 30), ' +
          '`min_payout_cents must be an integer from 0 to 1000000000000` (default 0), ' +
          '`workspace_id must be a positive integer`; 403 (a key limited to some programs: `API key is ' +
          'limited to programs <ids>`); 404 `Workspace not found`; 409 `slug is already taken`. Applications (docs/partners.md): `public_page` and ' +
          '`auto_approve` (default false), `partner_links` (default true), `description` (at most 2,000 ' +
          'characters): 400 `public_page must be true or false`, `auto_approve must be true or false`, ' +
          '`partner_links must be true or false`, `description must be a string of at most 2000 characters`. ' +
          'Codes (docs/codes.md): `website_url` (an http(s) URL, where full referral links point), `code_attribution` ' +
          '(`fallback`, the default, or `override`): 400 `' +
          ERR.websiteUrl +
          '`, `' +
          ERR.codeAttribution +
          '`.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        body: CreateBody,
        response: {
          201: Data(
            Type.Object({
              ...programProperties,
              api_token: Type.String({ description: 'aff_… shown only here' }),
            }),
          ),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const f = newProgram(req.body);
      const ws = workspaceOfReq(req);
      const token = generateSecret('aff_');
      for (const slug of f.slugs) {
        const row = await dal.insertProgram(sql, {
          ...f,
          workspaceId: ws.workspaceId,
          slug,
          tokenHash: hashSecret(token),
          tokenMasked: maskSecret(token),
        });
        if (row) return reply.code(201).send({ data: { ...toProgram(row), api_token: token } });
      }
      throw new HttpError(409, req.body.slug ? ERR.slugTaken : ERR.noFreeSlug);
    },
  );

  app.get(
    `${base}/:id`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: 'Read a program',
        description: 'Scope program:read. 404 `Program not found` for a program of another workspace.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: Data(ProgramOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: await loadProgram(programOf(req).programId) }),
  );

  app.put(
    `${base}/:id`,
    {
      preValidation: [requireProgram(sql, 'program:update'), async (req) => rejectNulls(req.body)],
      schema: {
        tags: ['management'],
        summary: 'Update a program (only the fields given change)',
        description:
          'Scope program:update. Changeable: name, slug, cookie_window_days, currency, commission, ' +
          'allowed_origins, public_page, auto_approve, partner_links, description, hold_days, ' +
          'min_payout_cents, website_url, code_attribution (same rules and messages as create; none may be null, `<field> cannot be null`, ' +
          'but description and website_url, which null clears; hold_days applies to commissions created after the change, ' +
          'min_payout_cents to payouts created after it). ' +
          '`status` is changed only by go-live: a different value is 400 `status is changed with POST ' +
          '/api/advertiser/affiliate-programs/:id/go-live`. 409 `slug is already taken`; 409 `' +
          ERR.currencyLocked +
          '` (amounts of two currencies are never added).',
        security: managementSecurity,
        params: ProgramParams,
        body: UpdateBody,
        response: { 200: Data(ProgramOut), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => {
      const id = programOf(req).programId;
      const f = programFields(req.body);
      if (req.body.status !== undefined)
        checkStatusUnchanged(req.body.status, (await loadProgram(id)).status);
      try {
        const row = await updateProgram(sql, id, f);
        if (!row) throw new HttpError(404, PROGRAM_NOT_FOUND);
        if (row === 'currency-locked') throw new HttpError(409, ERR.currencyLocked);
        return { data: toProgram(row) };
      } catch (err) {
        if (isUniqueViolation(err, 'programs_slug_key')) throw new HttpError(409, ERR.slugTaken);
        throw err;
      }
    },
  );

  app.delete(
    `${base}/:id`,
    {
      preValidation: requireProgram(sql, 'program:delete'),
      schema: {
        tags: ['management'],
        summary: 'Delete a program (soft: kept for audit; its tracking token is rejected from then on)',
        description: 'Scope program:delete. 204 on success; the program is 404 afterwards.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (req, reply) => {
      if (!(await dal.deleteProgram(sql, programOf(req).programId)))
        throw new HttpError(404, PROGRAM_NOT_FOUND);
      return reply.code(204).send();
    },
  );

  app.post(
    `${base}/:id/go-live`,
    {
      preValidation: requireProgram(sql, 'program:go_live'),
      schema: {
        tags: ['management'],
        summary: 'Publish a program: status draft → live (a live program is returned unchanged)',
        description: 'Scope program:go_live.',
        security: managementSecurity,
        params: ProgramParams,
        response: { 200: Data(ProgramOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const id = programOf(req).programId;
      await dal.goLive(sql, id);
      return { data: await loadProgram(id) };
    },
  );

  app.post(
    `${base}/:id/regenerate-api-token`,
    {
      preValidation: requireProgram(sql, 'program:regenerate-token'),
      schema: {
        tags: ['management'],
        summary: 'Regenerate the tracking token; the old one stops working at once',
        description:
          'Scope program:regenerate-token. The new token is returned in full only here. Every tracking request ' +
          'that starts after this answer is refused with the old token (401).',
        security: managementSecurity,
        params: ProgramParams,
        response: {
          200: Data(Type.Object({ api_token: Type.String(), api_token_masked: Type.String() })),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const token = generateSecret('aff_');
      const masked = maskSecret(token);
      if (!(await dal.replaceToken(sql, programOf(req).programId, hashSecret(token), masked))) {
        throw new HttpError(404, PROGRAM_NOT_FOUND);
      }
      return { data: { api_token: token, api_token_masked: masked } };
    },
  );
}
