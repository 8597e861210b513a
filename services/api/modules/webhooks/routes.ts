// Outbound webhook endpoints and their delivery log (CONTRACT "Webhooks to integrators", docs/webhooks.md):
// /api/advertiser/webhooks[/:id[/rotate-secret|/test|/enable|/deliveries]] and
// /api/advertiser/webhook-deliveries/:id[/retry]. Workspace-level: scope webhooks:read for reads and
// webhooks:write for changes (owner and admin sessions and `*` keys have both; member and viewer roles have
// neither). POST and GET of the list act on `?workspace_id=` (POST also takes it in the body), by default the
// one the caller owns (else administers); the others act on the endpoint's own workspace, and an endpoint or
// delivery of a workspace the caller cannot see is 404.
//
// A key limited to some programs (program_scope) sees and manages only the endpoints wholly inside its
// scope: those whose program_ids are all its programs. Others (program_ids null, or naming another
// program) are not listed and are 404 by id, as are their deliveries; registering or changing an endpoint
// with program_ids null (or omitted at registration) or naming another program is 403 `API key is limited
// to programs <ids>` (docs/security.md).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Data, DataList } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { isPlainObject } from '../../../../shared/json.ts';
import type { ApiDeps } from '../../deps.ts';
import {
  WorkspaceIdQuery,
  managementSecurity,
  pathId,
  requireWorkspace,
  workspaceOfReq,
} from '../../common.ts';
import { RefusedAddressError, checkWebhookUrl } from '../../../../shared/webhooks/address.ts';
import type { AddressPolicy } from '../../../../shared/webhooks/address.ts';
import { newSigningSecret } from '../../../../shared/webhooks/signature.ts';
import * as dal from './dal.ts';
import * as ops from './operations.ts';
import { createWebhookAccess } from './access.ts';
import {
  ACCESS,
  AttemptOut,
  DeliveryOut,
  DeliveryQuery,
  EndpointCreate,
  EndpointOut,
  EndpointUpdate,
  EndpointWithSecret,
  IdParams,
  PAST_SCOPE,
  SECRET_DOC,
  URL_RULES,
  deliveryProperties,
} from './schemas.ts';
import {
  DELIVERY_NOT_FOUND,
  ENDPOINT_DISABLED,
  ENDPOINT_NOT_FOUND,
  ROTATION_OVERLAP_HOURS,
  missingProgramsError,
  normaliseDescription,
  normaliseEvents,
  normaliseProgramIds,
  toAttempt,
  toDelivery,
  toEndpoint,
} from './service.ts';

/** Without a policy from the configuration: the strict rules. */
const STRICT: AddressPolicy = { allowPrivate: false, resolve: {} };

export function registerWebhookRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;
  const webhookPolicy = deps.webhookPolicy ?? STRICT;
  const base = '/api/advertiser/webhooks';
  const { endpointFor, scopedEndpoint, deliveryFor, checkProgramIds } = createWebhookAccess(sql);

  /** 400 unless the URL passes the SSRF rules (resolving its name) and the programs are the workspace's. */
  async function checkTargets(
    workspaceId: number,
    u: string | undefined,
    programs: number[] | null | undefined,
  ) {
    if (u !== undefined) {
      try {
        await checkWebhookUrl(u, webhookPolicy);
      } catch (err) {
        if (err instanceof RefusedAddressError) throw new HttpError(400, err.message);
        throw err;
      }
    }
    if (programs) {
      const missing = missingProgramsError(programs, await dal.livePrograms(sql, workspaceId, programs));
      if (missing !== null) throw new HttpError(400, missing);
    }
  }

  app.post(
    base,
    {
      // The caller's access, and a scoped key's program_ids, before the body's 400s.
      preValidation: [
        requireWorkspace(sql, 'webhooks:write', true),
        async (req) => {
          const b = req.body;
          checkProgramIds(workspaceOfReq(req), isPlainObject(b) ? b.program_ids : undefined);
        },
      ],
      schema: {
        tags: ['webhooks'],
        summary: 'Register a webhook endpoint; the signing secret is returned this once',
        description:
          ACCESS +
          URL_RULES +
          'Deliveries follow Standard Webhooks (docs/webhooks.md): headers webhook-id, webhook-timestamp and ' +
          'webhook-signature (HMAC-SHA256 with the secret). Errors: 400 `url must be an https:// URL`, ' +
          '`url host <host> resolves to a <class> address (<ip>): webhooks are only sent to public addresses`, ' +
          '`url host <host> does not resolve (…)`, `Unknown event type: <type>. Allowed: …`, ' +
          '`program_ids has a program not in this workspace: <ids>`, `description must be …`; ' +
          PAST_SCOPE +
          '403; 404 `Workspace not found`.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        body: EndpointCreate,
        response: { 201: Data(EndpointWithSecret), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      const ws = workspaceOfReq(req);
      const input = {
        url: req.body.url.trim(),
        events: normaliseEvents(req.body.events),
        program_ids: normaliseProgramIds(req.body.program_ids),
        description: normaliseDescription(req.body.description),
      };
      await checkTargets(ws.workspaceId, input.url, input.program_ids);
      const secret = newSigningSecret();
      const row = await dal.insertEndpoint(sql, ws.workspaceId, input, secret);
      return reply.code(201).send({ data: { ...toEndpoint(row), secret } });
    },
  );

  app.get(
    base,
    {
      schema: {
        tags: ['webhooks'],
        summary: "The workspace's webhook endpoints (without their secrets)",
        description: ACCESS + 'Query `workspace_id` picks the workspace.',
        security: managementSecurity,
        querystring: WorkspaceIdQuery,
        response: { 200: DataList(EndpointOut), ...errorResponses(400, 401, 403, 404) },
      },
      preValidation: requireWorkspace(sql, 'webhooks:read', true),
    },
    async (req) => {
      const ws = workspaceOfReq(req);
      return { data: (await dal.endpointsOf(sql, ws.workspaceId, ws.programScope)).map(toEndpoint) };
    },
  );

  const one = `${base}/:id`;
  app.get(
    one,
    {
      schema: {
        tags: ['webhooks'],
        summary: 'One webhook endpoint (without its secret)',
        description: ACCESS + 'Errors: 404 `Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        response: { 200: Data(EndpointOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => ({ data: toEndpoint(await endpointFor(req, req.params.id, 'webhooks:read')) }),
  );

  app.put(
    one,
    {
      preValidation: async (req) => {
        // Before the body's 400s: a caller who may not touch the endpoint learns nothing from them.
        const { access } = await scopedEndpoint(
          req,
          pathId((req.params as { id?: unknown }).id),
          'webhooks:write',
        );
        const b = req.body;
        if (isPlainObject(b) && b.program_ids !== undefined) checkProgramIds(access, b.program_ids);
      },
      schema: {
        tags: ['webhooks'],
        summary: 'Change a webhook endpoint: url, events, program_ids, description, status',
        description:
          ACCESS +
          URL_RULES +
          'Omitted fields keep their values. `status: "disabled"` stops deliveries to it (pending ones wait); ' +
          '`"enabled"` is the same as POST …/enable. Errors as for POST (program_ids: when given), and 400 ' +
          '`status must be enabled or disabled`; 404 `Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        body: EndpointUpdate,
        response: { 200: Data(EndpointOut), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const current = await endpointFor(req, req.params.id, 'webhooks:write');
      const b = req.body;
      const change = {
        ...(b.url !== undefined ? { url: b.url.trim() } : {}),
        ...(b.events !== undefined ? { events: normaliseEvents(b.events) } : {}),
        ...(b.program_ids !== undefined ? { program_ids: normaliseProgramIds(b.program_ids) } : {}),
        ...(b.description !== undefined ? { description: normaliseDescription(b.description) } : {}),
        ...(b.status !== undefined ? { status: b.status } : {}),
      };
      await checkTargets(Number(current.workspace_id), change.url, change.program_ids);
      const row = await ops.updateEndpoint(sql, req.params.id, change);
      if (!row) throw new HttpError(404, ENDPOINT_NOT_FOUND);
      return { data: toEndpoint(row) };
    },
  );

  app.delete(
    one,
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook endpoint and its delivery log',
        description: ACCESS + 'Pending deliveries are dropped. Errors: 404 `Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (req, reply) => {
      await endpointFor(req, req.params.id, 'webhooks:write');
      if (!(await dal.deleteEndpoint(sql, req.params.id))) throw new HttpError(404, ENDPOINT_NOT_FOUND);
      return reply.code(204).send();
    },
  );

  app.post(
    `${one}/rotate-secret`,
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Rotate the signing secret; the new one is returned this once',
        description:
          ACCESS +
          `For ${ROTATION_OVERLAP_HOURS} hours both secrets sign every delivery (two space-separated ` +
          'signatures in webhook-signature, the new one first), so the receiver can switch without missing ' +
          'one; after that only the new one. Rotating again within that time drops the oldest secret. ' +
          'Errors: 404 `Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        response: {
          200: Data(
            Type.Object({
              secret: Type.String({ description: SECRET_DOC }),
              previous_secret_expires_at: Type.String({ format: 'date-time' }),
            }),
          ),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      await endpointFor(req, req.params.id, 'webhooks:write');
      const secret = newSigningSecret();
      const row = await dal.rotateSecret(sql, req.params.id, secret, ROTATION_OVERLAP_HOURS);
      if (!row) throw new HttpError(404, ENDPOINT_NOT_FOUND);
      return {
        data: { secret, previous_secret_expires_at: new Date(row.previous_secret_expires_at!).toISOString() },
      };
    },
  );

  app.post(
    `${one}/test`,
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a webhook.test event to this endpoint',
        description:
          ACCESS +
          'A `webhook.test` event (data: endpoint_id, message, is_test: true) is recorded and delivered to ' +
          'this endpoint only, like any event: signed, retried, in the delivery log. Errors: 404 `Webhook ' +
          'endpoint not found`; 409 `Webhook endpoint is disabled; enable it first`.',
        security: managementSecurity,
        params: IdParams,
        response: {
          202: Data(Type.Object({ event_id: Type.String(), type: Type.Literal('webhook.test') })),
          ...errorResponses(401, 403, 404, 409),
        },
      },
    },
    async (req, reply) => {
      const row = await endpointFor(req, req.params.id, 'webhooks:write');
      if (row.status !== 'enabled') throw new HttpError(409, ENDPOINT_DISABLED);
      const eventId = await ops.sendTestEvent(sql, deps.kafkaPrefix, row);
      if (eventId === undefined) throw new HttpError(409, ENDPOINT_DISABLED);
      return reply.code(202).send({ data: { event_id: eventId, type: 'webhook.test' as const } });
    },
  );

  app.post(
    `${one}/enable`,
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Enable a disabled webhook endpoint',
        description:
          ACCESS +
          'An endpoint is disabled by its owner, after failing every attempt for 5 days (WEBHOOK_DISABLE_AFTER), ' +
          'or when it answers 410 Gone. Enabling it makes its pending deliveries due at once; failed ones can ' +
          'be retried one by one. Events that happened while it was disabled are not sent. Errors: 404 ' +
          '`Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        response: { 200: Data(EndpointOut), ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      await endpointFor(req, req.params.id, 'webhooks:write');
      const row = await ops.enableEndpoint(sql, req.params.id);
      if (!row) throw new HttpError(404, ENDPOINT_NOT_FOUND);
      return { data: toEndpoint(row) };
    },
  );

  app.get(
    `${one}/deliveries`,
    {
      schema: {
        tags: ['webhooks'],
        summary: "The endpoint's delivery log, newest first",
        description:
          ACCESS +
          'One row per event sent to this endpoint: its webhook-id (the same at every attempt), status ' +
          '(pending, delivered, failed), attempts, the last answer (status code, error, first 4 KB of the ' +
          'body), when the next attempt is due, and the payload. `status` filters; `page` (default 1) and ' +
          '`pageSize` (1..100, default 20) page; `meta.has_more` says whether a next page exists. Errors: 400 ' +
          '`status must be one of pending, delivered, failed`, `page must be a positive integer`, `pageSize ' +
          'must be an integer from 1 to 100`; 404 `Webhook endpoint not found`.',
        security: managementSecurity,
        params: IdParams,
        querystring: DeliveryQuery,
        response: {
          200: Type.Object({
            data: Type.Array(DeliveryOut),
            meta: Type.Object({ page: Type.Integer(), pageSize: Type.Integer(), has_more: Type.Boolean() }),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req) => {
      await endpointFor(req, req.params.id, 'webhooks:read');
      const { status, page = 1, pageSize = 20 } = req.query;
      const rows = await dal.deliveriesOf(sql, req.params.id, {
        status,
        limit: pageSize + 1,
        offset: (page - 1) * pageSize,
      });
      return {
        data: rows.slice(0, pageSize).map(toDelivery),
        meta: { page, pageSize, has_more: rows.length > pageSize },
      };
    },
  );

  app.get(
    '/api/advertiser/webhook-deliveries/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'One delivery with every attempt',
        description:
          ACCESS +
          "The delivery as in the log, plus `attempt_log`: each attempt's time, duration and answer. " +
          'Errors: 404 `Webhook delivery not found`.',
        security: managementSecurity,
        params: IdParams,
        response: {
          200: Data(Type.Object({ ...deliveryProperties, attempt_log: Type.Array(AttemptOut) })),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (req) => {
      const { row } = await deliveryFor(req, req.params.id, 'webhooks:read');
      const attempts = await dal.attemptsOf(sql, req.params.id);
      return { data: { ...toDelivery(row), attempt_log: attempts.map(toAttempt) } };
    },
  );

  app.post(
    '/api/advertiser/webhook-deliveries/:id/retry',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Attempt a delivery again now',
        description:
          ACCESS +
          'A pending delivery is attempted now, its schedule going on after; a delivered or failed one gets ' +
          'one more attempt with the same webhook-id (and ends delivered or failed again). An attempt already ' +
          'in flight is left to finish. Errors: 404 `Webhook delivery not found`; 409 `Webhook endpoint is ' +
          'disabled; enable it first`.',
        security: managementSecurity,
        params: IdParams,
        response: { 202: Data(DeliveryOut), ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { endpoint } = await deliveryFor(req, req.params.id, 'webhooks:write');
      if (endpoint.status !== 'enabled') throw new HttpError(409, ENDPOINT_DISABLED);
      const row = await ops.retryDelivery(sql, req.params.id);
      if (!row) throw new HttpError(404, DELIVERY_NOT_FOUND);
      return reply.code(202).send({ data: toDelivery(row) });
    },
  );
}
