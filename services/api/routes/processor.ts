// The workspace's payment-processor connection (CONTRACT "Payment-processor webhooks"):
// PUT /api/advertiser/processor-connection records what the advertiser's processor account reports and
// returns the webhook signing secret; GET reads it back without the secret. This row is what the payments
// block of GET /api/tracking/status/:programId reads, and its webhook_secret is what inbound processor
// webhooks are verified with.
//
// Access: the connection belongs to a workspace, not a program, so it goes through workspaceAccess with
// program:update for writes (owner and admin sessions; a key with program:update or `*`) and program:read
// for reads (every active member; a key with program:read). `workspace_id` (body or query) picks the
// workspace; without it, a key acts on its own workspace and a session on the one it owns (else administers).
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { HttpError, jsonBody, noValidation, errorResponses } from '../../../shared/http/server.ts';
import { maskSecret } from '../../../shared/domain/secrets.ts';
import { workspaceAccess, principalOf, requestedWorkspace } from '../access.ts';
import type { ApiDeps } from '../deps.ts';
import { iso, managementSecurity } from '../common.ts';

export const CONNECTION_STATUSES = ['pending', 'connected', 'restricted', 'disconnected'] as const;
type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

interface ConnectionRow {
  status: string;
  account_id: string | null;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  connected_at: Date | null;
  webhook_secret: string;
}

const connectionProperties = {
  status: { type: 'string' },
  account_id: { type: ['string', 'null'] },
  charges_enabled: { type: 'boolean' },
  payouts_enabled: { type: 'boolean' },
  details_submitted: { type: 'boolean' },
  connected_at: { type: ['string', 'null'], format: 'date-time' },
} as const;

const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

export function registerProcessorRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { sql } = deps;
  const path = '/api/advertiser/processor-connection';

  app.put(
    path,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Record the payment-processor connection; returns the webhook signing secret',
        description:
          'Workspace-level; needs program:update (owner or admin session, or a key with that scope). The ' +
          'body replaces the stored state: omitted booleans are false, an omitted account_id is null. The ' +
          '`whsec_` signing secret is created on the first PUT and kept afterwards; connected_at is set the ' +
          'first time status becomes `connected`. Errors: 400 `status must be one of pending, connected, ' +
          'restricted, disconnected`, `account_id must be a string of 1 to 255 characters or null`, ' +
          '`<field> must be a boolean`, `workspace_id must be a positive integer`; 403; 404 `Workspace not found`.',
        security: managementSecurity,
        body: {
          type: 'object',
          required: ['status'],
          properties: {
            status: { type: 'string', enum: [...CONNECTION_STATUSES] },
            account_id: { type: ['string', 'null'] },
            charges_enabled: { type: 'boolean' },
            payouts_enabled: { type: 'boolean' },
            details_submitted: { type: 'boolean' },
            workspace_id: { type: 'integer' },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: { ...connectionProperties, webhook_secret: { type: 'string' } },
              },
            },
          },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const b = jsonBody(req);
      const requested = requestedWorkspace(req.query, b);
      if (!CONNECTION_STATUSES.includes(b.status as ConnectionStatus)) {
        throw new HttpError(400, `status must be one of ${CONNECTION_STATUSES.join(', ')}`);
      }
      const status = b.status as ConnectionStatus;
      let accountId: string | null = null;
      if (b.account_id !== undefined && b.account_id !== null) {
        const a = typeof b.account_id === 'string' ? b.account_id.trim() : '';
        if (a.length < 1 || a.length > 255)
          throw new HttpError(400, 'account_id must be a string of 1 to 255 characters or null');
        accountId = a;
      }
      const flags: Record<'charges_enabled' | 'payouts_enabled' | 'details_submitted', boolean> = {
        charges_enabled: false,
        payouts_enabled: false,
        details_submitted: false,
      };
      for (const k of Object.keys(flags) as (keyof typeof flags)[]) {
        if (b[k] === undefined || b[k] === null) continue;
        if (typeof b[k] !== 'boolean') throw new HttpError(400, `${k} must be a boolean`);
        flags[k] = b[k];
      }
      const ws = await workspaceAccess(sql, principalOf(req), 'program:update', requested);
      const [row] = await sql<ConnectionRow[]>`
        insert into processor_connections as pc (workspace_id, status, account_id, charges_enabled,
          payouts_enabled, details_submitted, webhook_secret, connected_at)
        values (${ws.workspaceId}, ${status}, ${accountId}, ${flags.charges_enabled}, ${flags.payouts_enabled},
                ${flags.details_submitted}, ${newWebhookSecret()},
                ${status === 'connected' ? sql`now()` : null})
        on conflict (workspace_id) do update set
          status = excluded.status,
          account_id = excluded.account_id,
          charges_enabled = excluded.charges_enabled,
          payouts_enabled = excluded.payouts_enabled,
          details_submitted = excluded.details_submitted,
          connected_at = coalesce(pc.connected_at, excluded.connected_at),
          updated_at = now()
        returning status, account_id, charges_enabled, payouts_enabled, details_submitted, connected_at,
                  webhook_secret`;
      return { data: { ...toConnection(row!), webhook_secret: row!.webhook_secret } };
    },
  );

  app.get(
    path,
    {
      validatorCompiler: noValidation,
      schema: {
        tags: ['management'],
        summary: 'Read the payment-processor connection (without the signing secret)',
        description:
          'Workspace-level; needs program:read. Without a stored connection the answer is status `pending`, ' +
          'no account and every flag false. Query `workspace_id` picks the workspace.',
        security: managementSecurity,
        querystring: { type: 'object', properties: { workspace_id: { type: 'integer' } } },
        response: {
          200: {
            type: 'object',
            properties: {
              data: {
                type: 'object',
                properties: {
                  ...connectionProperties,
                  webhook_secret_masked: { type: ['string', 'null'] },
                },
              },
            },
          },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      const requested = requestedWorkspace(req.query);
      const ws = await workspaceAccess(sql, principalOf(req), 'program:read', requested);
      const [row] = await sql<ConnectionRow[]>`
        select status, account_id, charges_enabled, payouts_enabled, details_submitted, connected_at,
               webhook_secret
        from processor_connections where workspace_id = ${ws.workspaceId}`;
      if (!row) {
        return {
          data: {
            status: 'pending',
            account_id: null,
            charges_enabled: false,
            payouts_enabled: false,
            details_submitted: false,
            connected_at: null,
            webhook_secret_masked: null,
          },
        };
      }
      return { data: { ...toConnection(row), webhook_secret_masked: maskSecret(row.webhook_secret) } };
    },
  );
}

function toConnection(r: ConnectionRow) {
  return {
    status: r.status,
    account_id: r.account_id,
    charges_enabled: r.charges_enabled,
    payouts_enabled: r.payouts_enabled,
    details_submitted: r.details_submitted,
    connected_at: iso(r.connected_at),
  };
}
