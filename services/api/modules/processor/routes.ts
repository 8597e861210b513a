// The workspace's payment-processor connection (CONTRACT "Payment-processor webhooks"):
// PUT /api/advertiser/processor-connection records what the advertiser's processor account reports and
// returns the webhook signing secret; GET reads it back without the secret. This row is what the payments
// block of GET /api/tracking/status/:programId reads, and its webhook_secret is what inbound processor
// webhooks are verified with.
//
// Access: the connection belongs to a workspace, not a program, so it goes through workspaceAccess with
// program:update for writes and program:read for reads, checked before the body (requireWorkspace). Its
// signing secret verifies the processor events of every program of the workspace, so a key limited to some
// programs is 403 on all three routes (docs/security.md). `workspace_id` (body or query) picks the
// workspace; without it, a key acts on its own workspace and a session on the one it owns (else administers).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import {
  Data,
  MAX_QUERY_INTEGER,
  Nullable,
  StringEnum,
  Trimmed,
} from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { principalOf, programAccess } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import {
  WorkspaceIdField,
  WorkspaceIdQuery,
  managementSecurity,
  requireWorkspace,
  workspaceOfReq,
} from '../../common.ts';
import {
  deleteSecret,
  findConnection,
  listProcessorEvents,
  listSecrets,
  rollSecret,
  saveConnection,
  saveSecret,
} from './dal.ts';
import {
  CONNECTION_STATUSES,
  PROCESSOR_OUTCOMES,
  ROLL_GRACE_HOURS,
  connectionInput,
  connectionView,
  PROCESSORS,
  UNKNOWN_PROCESSOR,
  newWebhookSecret,
  processorConnectionView,
  secretError,
  toConnection,
  toProcessorEvent,
} from './service.ts';
import { isProcessor } from '../../../../shared/processors/index.ts';
import type { Processor } from '../../../../shared/processors/index.ts';

/** A processor's name in answers: the OpenAPI enum the SDK's and the dashboard's types read the list from. */
const ProcessorName = Type.Unsafe<Processor>({ type: 'string', enum: [...PROCESSORS] });

const flag = (k: string) => Type.Optional(Nullable(Type.Boolean(), `${k} must be a boolean`));

// Property order is the order of the checks (see shared/http/validation.ts).
const ConnectionInput = Type.Object({
  workspace_id: WorkspaceIdField,
  status: StringEnum(CONNECTION_STATUSES, `status must be one of ${CONNECTION_STATUSES.join(', ')}`),
  account_id: Type.Optional(
    Nullable(Trimmed(255), 'account_id must be a string of 1 to 255 characters or null'),
  ),
  charges_enabled: flag('charges_enabled'),
  payouts_enabled: flag('payouts_enabled'),
  details_submitted: flag('details_submitted'),
});

const connectionProperties = {
  status: Type.String(),
  account_id: Type.Union([Type.String(), Type.Null()]),
  charges_enabled: Type.Boolean(),
  payouts_enabled: Type.Boolean(),
  details_submitted: Type.Boolean(),
  connected_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};

export function registerProcessorRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const path = '/api/advertiser/processor-connection';

  app.put(
    path,
    {
      // The workspace and the caller's access are checked before the body's fields.
      preValidation: requireWorkspace(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Record the payment-processor connection; returns the webhook signing secret',
        description:
          'Workspace-level; needs program:update (owner or admin session, or a key with that scope). The ' +
          'body replaces the stored state: omitted booleans are false, an omitted account_id is null. The ' +
          '`whsec_` signing secret is created on the first PUT and kept afterwards; connected_at is set the ' +
          'first time status becomes `connected`. Errors: 400 `status must be one of pending, connected, ' +
          'restricted, disconnected`, `account_id must be a string of 1 to 255 characters or null`, ' +
          '`<field> must be a boolean`, `workspace_id must be a positive integer`; 403 (a key limited to some ' +
          'programs: `API key is limited to programs <ids>`); 404 `Workspace not found`.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        body: ConnectionInput,
        response: {
          200: Data(Type.Object({ ...connectionProperties, webhook_secret: Type.String() })),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const input = connectionInput(req.body);
      const ws = workspaceOfReq(req);
      const row = await saveConnection(sql, ws.workspaceId, input, newWebhookSecret());
      return { data: { ...toConnection(row), webhook_secret: row.webhook_secret } };
    },
  );

  app.get(
    path,
    {
      preValidation: requireWorkspace(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: 'Read the payment-processor connection (without the signing secret)',
        description:
          'Workspace-level; needs program:read. Without a stored connection the answer is status `pending`, ' +
          'no account and every flag false. Query `workspace_id` picks the workspace. 403 for a key limited ' +
          'to some programs (`API key is limited to programs <ids>`).',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        response: {
          200: Data(
            Type.Object({
              ...connectionProperties,
              webhook_secret_masked: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => ({ data: connectionView(await findConnection(sql, workspaceOfReq(req).workspaceId)) }),
  );

  app.post(
    `${path}/roll-secret`,
    {
      preValidation: requireWorkspace(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Roll the webhook signing secret',
        description:
          `Workspace-level; needs program:update. Returns a new \`whsec_\` secret; the previous one keeps verifying for ${ROLL_GRACE_HOURS} ` +
          'hours, so the processor can be updated without losing events (as Stripe rolls its own). Errors: 404 ' +
          '`No payment-processor connection to roll` before the first PUT; 403 (a key limited to some programs: ' +
          '`API key is limited to programs <ids>`); 404 `Workspace not found`.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        response: {
          200: Data(
            Type.Object({
              webhook_secret: Type.String(),
              previous_valid_until: Type.String({ format: 'date-time' }),
            }),
          ),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const secret = await rollSecret(
        sql,
        workspaceOfReq(req).workspaceId,
        newWebhookSecret(),
        ROLL_GRACE_HOURS,
      );
      if (secret === null) throw new HttpError(404, 'No payment-processor connection to roll');
      const until = new Date(Date.now() + ROLL_GRACE_HOURS * 3600_000).toISOString();
      return { data: { webhook_secret: secret, previous_valid_until: until } };
    },
  );

  registerConnectionsRoutes(fastify, deps);

  const EventsQuery = Type.Object({
    program_id: Type.Integer({
      minimum: 1,
      maximum: MAX_QUERY_INTEGER,
      errorMessage: 'program_id must be a positive integer',
    }),
    outcome: Type.Optional(
      StringEnum(PROCESSOR_OUTCOMES, `outcome must be one of ${PROCESSOR_OUTCOMES.join(', ')}`),
    ),
    page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 1,
        errorMessage: 'page must be a positive integer',
      }),
    ),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 20,
        errorMessage: 'pageSize must be an integer between 1 and 100',
      }),
    ),
  });

  app.get(
    '/api/advertiser/processor-events',
    {
      schema: {
        tags: ['management'],
        summary: 'Payment-processor events of a program and what each did',
        description:
          'Needs program:read on the program. Newest first. Outcomes: `attributed` (sale with commission), ' +
          '`recorded` (sale without; reason says why), `unattributed` (no sale: `no_metadata`, ' +
          '`customer_not_found`, `program_mismatch`), `refund_applied` (reason: reversed, refunded, skipped, ' +
          'no_commission), `linked`, `waiting` (what it waits for), `ignored`, `failed`. `processor` names who ' +
          `sent it (${PROCESSORS.join(', ')}). See docs/stripe.md and docs/processors.md.`,
        security: managementSecurity,
        querystring: EventsQuery,
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                id: Type.Integer(),
                processor: ProcessorName,
                event_id: Type.String(),
                type: Type.String(),
                livemode: Type.Boolean(),
                received_at: Type.String({ format: 'date-time' }),
                outcome: Type.String(),
                reason: Nullable(Type.String()),
                transaction_id: Nullable(Type.String()),
                sale_id: Nullable(Type.Integer()),
                commission_id: Nullable(Type.Integer()),
              }),
            ),
            meta: Type.Object({
              pagination: Type.Object({
                page: Type.Integer(),
                pageSize: Type.Integer(),
                pageCount: Type.Integer(),
                total: Type.Integer(),
              }),
            }),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const q = req.query;
      const access = await programAccess(sql, principalOf(req), q.program_id, 'program:read');
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 20;
      const { rows, total } = await listProcessorEvents(
        sql,
        access.programId,
        q.outcome ?? null,
        pageSize,
        (page - 1) * pageSize,
      );
      return {
        data: rows.map(toProcessorEvent),
        meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } },
      };
    },
  );
}

const ConnectionView = Type.Object({
  processor: ProcessorName,
  connected: Type.Boolean(),
  secret_masked: Nullable(Type.String()),
  webhook_url: Type.String(),
});

const SecretInput = Type.Object({
  workspace_id: WorkspaceIdField,
  webhook_secret: Type.String({ errorMessage: 'webhook_secret must be a string of 1 to 255 characters' }),
});

const ProcessorParams = Type.Object({ processor: Type.String() });

/** The processor named in the path, or 404. */
function processorOf(p: string): Processor {
  if (!isProcessor(p)) throw new HttpError(404, UNKNOWN_PROCESSOR);
  return p;
}

/**
 * Every processor's webhook secret (CONTRACT part three): the one the processor's dashboard shows, pasted
 * here. Same access as the Stripe connection: program:update to write, program:read to read, workspace-level
 * (a key limited to some programs is 403). Stripe's row is the singular route's.
 */
function registerConnectionsRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const path = '/api/advertiser/processor-connections';
  const errors =
    '400 `webhook_secret must be a string of 1 to 255 characters`, `webhook_secret must start with whsec_ ' +
    'for Stripe`, `webhook_secret must be 6 to 40 characters for Lemon Squeezy`, `workspace_id must be a ' +
    `positive integer\`; 403 (a key limited to some programs: \`API key is limited to programs <ids>\`); 404 \`${UNKNOWN_PROCESSOR}\`, ` +
    '`Workspace not found`.';

  app.get(
    path,
    {
      preValidation: requireWorkspace(sql, 'program:read'),
      schema: {
        tags: ['management'],
        summary: 'Which payment processors are connected, and the webhook URL to paste into each',
        description:
          `Workspace-level; needs program:read. One row per processor (${PROCESSORS.join(', ')}): ` +
          '`connected`, the masked secret, and `webhook_url` with `{programId}` to fill in per program. 403 for ' +
          'a key limited to some programs.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        response: { 200: Data(Type.Array(ConnectionView)), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const secrets = await listSecrets(sql, workspaceOfReq(req).workspaceId);
      return { data: PROCESSORS.map((p) => processorConnectionView(p, secrets.get(p), deps.publicUrl)) };
    },
  );

  app.put(
    `${path}/:processor`,
    {
      preValidation: requireWorkspace(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Connect a payment processor: store the webhook signing secret its dashboard shows',
        description:
          'Workspace-level; needs program:update. `webhook_secret`: Stripe the endpoint’s `whsec_` secret ' +
          '(the singular /processor-connection row: created `connected`, a roll’s previous secret ends), Paddle ' +
          'the notification destination’s secret key, Lemon Squeezy the signing secret typed in its webhook ' +
          'form (6–40 characters), Polar the endpoint’s secret. Replaces the stored one. Errors: ' +
          errors,
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        params: ProcessorParams,
        body: SecretInput,
        response: { 200: Data(ConnectionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const processor = processorOf(req.params.processor);
      const secret = req.body.webhook_secret.trim();
      const error = secretError(processor, secret);
      if (error) throw new HttpError(400, error);
      await saveSecret(sql, workspaceOfReq(req).workspaceId, processor, secret);
      return { data: processorConnectionView(processor, secret, deps.publicUrl) };
    },
  );

  app.delete(
    `${path}/:processor`,
    {
      preValidation: requireWorkspace(sql, 'program:update'),
      schema: {
        tags: ['management'],
        summary: 'Disconnect a payment processor: forget its webhook secret',
        description:
          'Workspace-level; needs program:update. Its events are refused (400, no secret) from then on; ' +
          'idempotent. Stripe: removes the singular /processor-connection row. Errors: 403, 404 ' +
          `\`${UNKNOWN_PROCESSOR}\`, \`Workspace not found\`.`,
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        params: ProcessorParams,
        response: { 200: Data(ConnectionView), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const processor = processorOf(req.params.processor);
      await deleteSecret(sql, workspaceOfReq(req).workspaceId, processor);
      return { data: processorConnectionView(processor, undefined, deps.publicUrl) };
    },
  );
}
