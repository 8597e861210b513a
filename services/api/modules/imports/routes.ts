// Imports (CONTRACT part five; docs/importing.md): bring a program from Rewardful, Dub or a CSV file.
// Creating one (program:update) answers 202 with the import queued: its first command is in the outbox and
// the import worker runs it page by page. Reading them and their error rows needs program:read; a cancel,
// program:update. The campaign picker's list is read from the source with the credentials given, which are
// not kept. Credentials are never answered back.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError, errorResponses, requiresBody } from '../../../../shared/http/server.ts';
import { Checked, Data, DataList, Nullable, StringEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { csvHeaderError } from '../../../../shared/importing/sources/csv.ts';
import { SOURCES } from '../../../../shared/importing/sources/index.ts';
import { sourceGet, SourceError } from '../../../../shared/importing/http.ts';
import { acquire, limitKey } from '../../../../shared/importing/rate-limit.ts';
import { COUNT_KEYS, OUTCOMES, SOURCE_NAMES } from '../../../../shared/importing/types.ts';
import type { SourceName } from '../../../../shared/importing/types.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import { parseCsv } from '../../../../shared/csv.ts';
import type { ApiDeps } from '../../deps.ts';
import { ProgramParams, managementSecurity, programOf, requireProgram } from '../../common.ts';
import * as dal from './dal.ts';
import { cancelImport, createImport } from './operations.ts';
import {
  CREDENTIAL_FIELD,
  ERR,
  checkApiBaseUrl,
  credentialsError,
  firstStep,
  importOptions,
  sealCredentials,
  toImport,
} from './service.ts';
import type { OptionsBody } from './service.ts';

const ImportParams = Type.Object({
  id: Type.Integer({ minimum: 1, description: 'Program id' }),
  importId: Type.Integer({ minimum: 1, description: 'Import id' }),
});

const API_SOURCES = SOURCE_NAMES.filter((s) => SOURCES[s].baseUrl !== null);
const Credentials = Checked<Record<string, unknown>>(
  {
    type: 'object',
    description:
      'Rewardful: `{ api_secret }` (sent as HTTP Basic `secret:`); Dub: `{ api_key }` (Bearer). Kept encrypted ' +
      '(AES-256-GCM) until the import ends, then deleted; never answered back.',
  },
  (v) => (isPlainObject(v) ? null : ERR.credentials),
);
// Property order is the order of the checks (shared/http/validation.ts).
const Options = Type.Object(
  {
    api_base_url: Type.Optional(
      Nullable(
        Type.String({
          minLength: 1,
          maxLength: 2000,
          errorMessage: ERR.apiBaseUrl,
          description:
            "Replaces the source's base URL (a proxy, a test double): http:// or https://; a private or loopback " +
            'address only with WEBHOOK_ALLOW_PRIVATE=true (docs/importing.md)',
        }),
        ERR.apiBaseUrl,
      ),
    ),
    campaign_ids: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 200, errorMessage: ERR.campaignIds }), {
          minItems: 1,
          maxItems: 1000,
          errorMessage: ERR.campaignIds,
          description: 'Only these campaigns (Rewardful) or groups (Dub) and their partners and commissions',
        }),
        ERR.campaignIds,
      ),
    ),
    include_inactive: Type.Optional(
      Type.Boolean({
        errorMessage: ERR.includeInactive,
        description: 'Also partners that are not active at the source (they join as pending)',
      }),
    ),
    dry_run: Type.Optional(
      Type.Boolean({ errorMessage: ERR.dryRun, description: 'Read everything, count, write nothing' }),
    ),
  },
  { errorMessage: ERR.options },
);
/**
 * What each source's credentials need, for the OpenAPI document only (JSON Schema if/then, which the validator
 * leaves alone): the handler checks them with its own messages (`credentials.api_secret is required: …`).
 */
const credentialsNeeds = Object.entries(CREDENTIAL_FIELD).map(([s, field]) => ({
  if: { properties: { source: { const: s } } },
  then: {
    required: ['credentials'],
    properties: {
      credentials: {
        type: 'object',
        required: [field],
        properties: { [field]: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' } },
      },
    },
  },
}));
// A JSON body names a source with an API; a CSV file is sent as text/csv (its own message says how).
const CreateBody = Type.Object(
  {
    source: StringEnum(API_SOURCES, `${ERR.source}: ${ERR.csvAsJson}`),
    credentials: Type.Optional(Credentials),
    options: Type.Optional(Options),
  },
  { allOf: credentialsNeeds },
);
const CampaignsBody = Type.Object(
  {
    source: StringEnum(API_SOURCES, `source must be one of ${API_SOURCES.join(', ')}`),
    credentials: Credentials,
    options: Type.Optional(Options),
  },
  { allOf: credentialsNeeds },
);
const CsvBody = Type.String({ description: 'The CSV file (`text/csv`), with `?source=csv`' });
const CreateQuery = Type.Object({
  source: Type.Optional(
    StringEnum(['csv'] as const, 'source must be csv (a CSV import) or given in the body'),
  ),
  dry_run: Type.Optional(StringEnum(['true', 'false'] as const, 'dry_run must be true or false')),
});

const Outcomes = Type.Object(Object.fromEntries(OUTCOMES.map((o) => [o, Type.Integer()])));
export const ImportOut = Type.Object({
  id: Type.Integer(),
  program_id: Type.Integer(),
  source: Type.String({ enum: [...SOURCE_NAMES] }),
  status: Type.String({ enum: ['queued', 'running', 'completed', 'failed', 'canceled'] }),
  step: Type.String({ description: "The source's step read next (`done` once every step was read)" }),
  dry_run: Type.Boolean(),
  options: Type.Object({
    api_base_url: Type.Union([Type.String(), Type.Null()]),
    campaign_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
    include_inactive: Type.Boolean(),
  }),
  counts: Type.Object(Object.fromEntries(Object.values(COUNT_KEYS).map((k) => [k, Outcomes])), {
    description:
      'Per kind of row: created, updated (changed at the source since an earlier run, or found here already), ' +
      'skipped (unchanged since an earlier run, or not brought on purpose: with an error row) and failed ' +
      '(with an error row)',
  }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed' }),
  created_at: Type.String({ format: 'date-time' }),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const ErrorRow = Type.Object({
  kind: Type.String({ enum: ['group', 'partner', 'link', 'code', 'customer', 'commission'] }),
  external_id: Type.String(),
  code: Type.String(),
  message: Type.String(),
});
const Campaign = Type.Object({
  id: Type.String(),
  name: Type.String(),
  commission: Type.Unknown({ description: 'Its terms as a commission policy, as the import would set them' }),
});

/** At most this many error rows are answered (they are kept whatever their number). */
const MAX_ERROR_ROWS = 50_000;

const tags = ['management'];
const security = managementSecurity;

export function registerImportRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  // Its own scope: the only management route that reads a body other than JSON (a CSV file).
  void fastify.register(async (scope) => routes(scope, deps));
}

function routes(fastify: FastifyInstance, deps: ApiDeps) {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const policy = deps.webhookPolicy ?? { allowPrivate: false, resolve: {} };
  const key = deps.imports?.secretKey ?? null;
  const csvMax = deps.imports?.csvMaxBytes ?? 10 * 1024 * 1024;
  const base = '/api/advertiser/affiliate-programs/:id/imports';
  app.addContentTypeParser('text/csv', { parseAs: 'string', bodyLimit: csvMax }, (_req, body, done) =>
    done(null, body),
  );

  const needsBody = requiresBody(async (req: FastifyRequest) => {
    if (req.body === undefined || req.body === null)
      throw new HttpError(400, 'Request body must be a JSON object');
  });

  app.post(
    base,
    {
      preValidation: [requireProgram(sql, 'program:update'), needsBody],
      bodyLimit: csvMax,
      config: { anyBodyType: true },
      schema: {
        tags,
        summary: 'Start an import from Rewardful, Dub or a CSV file',
        description:
          'Scope program:update. JSON `{ source: "rewardful" | "dub", credentials, options }`, or the CSV file itself ' +
          '(`Content-Type: text/csv`) with `?source=csv` (`&dry_run=true` for a dry run): columns `email` (required), ' +
          '`name`, `link`, `coupon_code`, `stripe_promotion_code`, `group` (a group slug). Answers 202 with the import ' +
          'queued; the import worker runs it one source page per Kafka command (docs/importing.md). Errors: 400 naming ' +
          'the field (`' +
          ERR.source +
          '`, `credentials.api_secret is required: …`, `' +
          ERR.apiBaseUrl +
          '`, `' +
          ERR.csvEmpty +
          '`, the CSV header), 413 for a file over IMPORT_CSV_MAX_BYTES, 503 `' +
          ERR.noKey +
          '`.',
        security,
        params: ProgramParams,
        querystring: CreateQuery,
        body: { content: { 'application/json': { schema: CreateBody }, 'text/csv': { schema: CsvBody } } },
        response: { 202: Data(ImportOut), ...errorResponses(400, 401, 403, 404, 413, 415, 503) },
      } as never,
    },
    async (req, reply) => {
      const { programId } = programOf(req);
      const query = req.query as { source?: 'csv'; dry_run?: 'true' | 'false' };
      const contentType = String(req.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      if (contentType === 'text/csv') {
        if (query.source !== 'csv') throw new HttpError(400, ERR.csvQuery);
        const text = req.body as string;
        if (parseCsv(text).every((r) => r.every((f) => f.trim() === '')))
          throw new HttpError(400, ERR.csvEmpty);
        const header = csvHeaderError(text);
        if (header !== null) throw new HttpError(400, header);
        const row = await createImport(sql, deps.kafkaPrefix, {
          programId,
          source: 'csv',
          step: firstStep('csv'),
          dryRun: query.dry_run === 'true',
          options: importOptions(undefined).options,
          credentials: null,
          csv: text,
        });
        return reply.code(202).send({ data: toImport(row) });
      }
      if (contentType !== 'application/json')
        throw new HttpError(415, 'Content-Type must be application/json or text/csv');
      const body = req.body as { source: SourceName; credentials?: unknown; options?: OptionsBody };
      // ?source and ?dry_run belong to a text/csv body; a JSON body says both itself.
      const credentials = body.credentials ?? {};
      const bad = credentialsError(body.source, credentials);
      if (bad !== null) throw new HttpError(400, bad);
      const { options, dryRun } = importOptions(body.options);
      await checkApiBaseUrl(options.api_base_url, policy);
      const sealed = sealCredentials(key, programId, body.source, credentials);
      const row = await createImport(sql, deps.kafkaPrefix, {
        programId,
        source: body.source,
        step: firstStep(body.source),
        dryRun,
        options,
        credentials: sealed,
        csv: null,
      });
      return reply.code(202).send({ data: toImport(row) });
    },
  );

  app.post(
    `${base}/campaigns`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      // Room for a list of campaign ids past its limit (1,000 of up to 200 characters): its 400 names it.
      bodyLimit: 1024 * 1024,
      schema: {
        tags,
        summary: "The source's campaigns (Rewardful) or groups (Dub), for the campaign picker",
        description:
          'Scope program:update. Reads them from the source with the credentials given, which are not kept. Errors: ' +
          '400 naming the field, or the source refusing the credentials; 502 when the source cannot be read.',
        security,
        params: ProgramParams,
        body: CampaignsBody,
        response: { 200: DataList(Campaign), ...errorResponses(400, 401, 403, 404, 502) },
      },
    },
    async (req) => {
      const { source, credentials, options: o } = req.body;
      const bad = credentialsError(source, credentials);
      if (bad !== null) throw new HttpError(400, bad);
      const { options } = importOptions(o);
      await checkApiBaseUrl(options.api_base_url, policy);
      const adapter = SOURCES[source];
      const baseUrl = options.api_base_url ?? adapter.baseUrl!;
      const creds = credentials as Record<string, string>;
      // A request does not wait long for a source's rate limit: the picker can ask again.
      const wait = async (ms: number) => {
        if (ms > 5_000)
          throw new SourceError(`${adapter.label} asks to wait ${Math.ceil(ms / 1000)} s: try again then`);
        await new Promise((r) => setTimeout(r, ms));
      };
      const limit = adapter.rateLimit;
      const get = sourceGet(baseUrl, adapter.auth(creds).headers, {
        policy,
        timeoutMs: 15_000,
        maxBytes: 5 * 1024 * 1024,
        // The account's one limit, shared with its imports (rate-limit.ts).
        ...(limit ? { acquire: () => acquire(sql, limitKey(source, baseUrl, creds), limit, wait) } : {}),
        wait,
        label: adapter.label,
      });
      try {
        return { data: await adapter.campaigns!({ options, get, csv: null }) };
      } catch (err) {
        if (!(err instanceof SourceError)) throw err;
        throw new HttpError(/refused the credentials/.test(err.message) ? 400 : 502, err.message);
      }
    },
  );

  app.get(
    base,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags,
        summary: "The program's imports, newest first (at most 100)",
        description: 'Scope program:read.',
        security,
        params: ProgramParams,
        response: { 200: DataList(ImportOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: (await dal.importsOf(sql, programOf(req).programId, 100)).map(toImport) }),
  );

  async function found(req: FastifyRequest & { params: { importId: number } }) {
    const row = await dal.importOf(sql, programOf(req).programId, req.params.importId);
    if (!row) throw new HttpError(404, ERR.notFound);
    return row;
  }

  app.get(
    `${base}/:importId(^\\d+)`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags,
        summary: 'An import: status, step, counts',
        description: 'Scope program:read. 404 `' + ERR.notFound + '` for an import of another program.',
        security,
        params: ImportParams,
        response: { 200: Data(ImportOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: toImport(await found(req)) }),
  );

  app.get(
    `${base}/:importId(^\\d+)/errors`,
    {
      preValidation: requireProgram(sql, 'program:read'),
      schema: {
        tags,
        summary: 'The rows an import skipped or could not bring, each with its code',
        description:
          'Scope program:read. Codes: docs/importing.md "Error codes" (`inactive_partner`, `customer_not_found`, ' +
          '`currency_mismatch`, `already_tracked`, `link_taken`, …). At most ' +
          MAX_ERROR_ROWS +
          ' rows, oldest first.',
        security,
        params: ImportParams,
        response: { 200: DataList(ErrorRow), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const row = await found(req);
      return { data: await dal.errorsOf(sql, Number(row.id), MAX_ERROR_ROWS) };
    },
  );

  app.post(
    `${base}/:importId(^\\d+)/cancel`,
    {
      preValidation: requireProgram(sql, 'program:update'),
      schema: {
        tags,
        summary: 'Cancel a queued or running import',
        description:
          'Scope program:update. Its credentials and file are deleted; what its pages applied stays (a later import ' +
          'finds it and creates nothing twice). 409 `Import already <status>` when it had ended.',
        security,
        params: ImportParams,
        response: { 200: Data(ImportOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => {
      const done = await cancelImport(sql, deps.kafkaPrefix, programOf(req).programId, req.params.importId);
      if (!done) throw new HttpError(404, ERR.notFound);
      if (!done.canceled) throw new HttpError(409, ERR.ended(done.row.status));
      return { data: toImport(done.row) };
    },
  );
}
