// Notifications with read state (CONTRACT part two "Partners who sign in"; docs/api.md "Notifications"):
// the partner's (GET /api/partner/notifications and its read routes, in the partner-authenticated scope)
// and the advertiser's (GET /api/advertiser/notifications, the dashboard's bell: the spec's manual-review
// warning and everything else addressed to a workspace). A notification that is not the caller's is 404.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TProperties, TSchema } from '@sinclair/typebox';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { StringEnum as CheckedEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { DateTime, Nullable, Obj, WorkspaceIdQuery, dataOf, managementSecurity } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { principalOf, requestedWorkspace, workspaceAccess } from '../auth/access.ts';
import { partnerOf, partnerSecurity } from '../partner-auth/access.ts';
import { listNotifications, markAllRead, markRead } from './dal.ts';
import type { NotificationRow, Recipient } from './dal.ts';
import { ERR, toNotification, toWorkspaceNotification, unreadFilter } from './service.ts';

const itemProps = {
  id: Type.Integer(),
  kind: Type.String({ description: 'docs/api.md "Notifications" lists the kinds' }),
  title: Type.String(),
  body: Type.String(),
  data: Type.Object({}, { additionalProperties: true }),
  program_id: Nullable(Type.Integer()),
  read_at: Nullable(DateTime()),
  created_at: DateTime(),
};
const listQuery = {
  unread: Type.Optional(CheckedEnum(['true', 'false'] as const, ERR.unread)),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, errorMessage: ERR.page })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 100, default: 20, errorMessage: ERR.pageSize }),
  ),
};
const listAnswer = (item: TSchema) =>
  Obj({
    data: Type.Array(item),
    meta: Obj({
      unread: Type.Integer({ description: "The recipient's unread notifications, whatever the filter" }),
      pagination: Obj({
        page: Type.Integer(),
        pageSize: Type.Integer(),
        pageCount: Type.Integer(),
        total: Type.Integer(),
      }),
    }),
  });
const IdParams = Type.Object({ id: Type.Integer({ description: 'Notification id' }) });
const listDoc =
  '`unread=true` lists the unread ones, `false` the read ones; `page` (default 1), `pageSize` (1..100, ' +
  'default 20); newest first. `meta.unread` is the unread count (the badge).';

interface Who {
  recipient: (req: FastifyRequest) => Promise<Recipient>;
  map: (r: NotificationRow) => Record<string, unknown>;
}

function registerRoutes(
  fastify: FastifyInstance,
  deps: ApiDeps,
  base: string,
  who: Who,
  doc: {
    tags: string[];
    security: Record<string, string[]>[];
    audience: string;
    item: TSchema;
    query: TProperties;
  },
): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    base,
    {
      schema: {
        tags: doc.tags,
        summary: `${doc.audience} notifications, newest first, with the unread count`,
        description: listDoc,
        security: doc.security,
        querystring: Type.Object({ ...doc.query, ...listQuery }),
        response: { 200: listAnswer(doc.item), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query as { unread?: 'true' | 'false'; page?: number; pageSize?: number };
      const page = q.page ?? 1;
      const pageSize = q.pageSize ?? 20;
      const r = await listNotifications(sql, await who.recipient(req), {
        unread: unreadFilter(q.unread),
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      return {
        data: r.rows.map(who.map),
        meta: {
          unread: r.unread,
          pagination: { page, pageSize, pageCount: Math.ceil(r.total / pageSize), total: r.total },
        },
      };
    },
  );

  app.post(
    `${base}/:id/read`,
    {
      schema: {
        tags: doc.tags,
        summary: 'Mark a notification read',
        description: `404 \`${ERR.notFound}\` for one that is not addressed to the caller. Read stays read.`,
        security: doc.security,
        querystring: Type.Object(doc.query),
        params: IdParams,
        response: { 200: dataOf(doc.item), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const id = req.params.id;
      const row =
        Number.isSafeInteger(id) && id > 0 ? await markRead(sql, await who.recipient(req), id) : undefined;
      if (!row) throw new HttpError(404, ERR.notFound);
      return { data: who.map(row) };
    },
  );

  app.post(
    `${base}/read-all`,
    {
      schema: {
        tags: doc.tags,
        summary: 'Mark every unread notification read',
        security: doc.security,
        querystring: Type.Object(doc.query),
        response: { 200: dataOf(Obj({ updated: Type.Integer() })), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => ({ data: { updated: await markAllRead(sql, await who.recipient(req)) } }),
  );
}

/** The partner's notifications (partner-authenticated scope). */
export function registerPartnerNotificationRoutes(app: FastifyInstance, deps: ApiDeps): void {
  registerRoutes(
    app,
    deps,
    '/api/partner/notifications',
    {
      recipient: async (req) => ({ accountId: partnerOf(req).accountId }),
      map: toNotification,
    },
    {
      tags: ['partner'],
      security: partnerSecurity,
      audience: "The partner's",
      item: Obj(itemProps),
      query: {},
    },
  );
}

/**
 * The advertiser's notifications (authenticated scope): those of `?workspace_id=`, or without it those of
 * every workspace where the session's user is an active member (a key: its workspace). Needs
 * dashboard:view, which every role has.
 */
export function registerAdvertiserNotificationRoutes(app: FastifyInstance, deps: ApiDeps): void {
  registerRoutes(
    app,
    deps,
    '/api/advertiser/notifications',
    {
      recipient: async (req) => {
        const p = principalOf(req);
        const requested = requestedWorkspace(req.query);
        if (requested === null && p.kind === 'session') {
          return { userId: p.userId };
        }
        const ws = await workspaceAccess(deps.sql, p, 'dashboard:view', requested);
        return { workspaceIds: [ws.workspaceId] };
      },
      map: toWorkspaceNotification,
    },
    {
      tags: ['management'],
      security: managementSecurity,
      audience: "The workspace's",
      item: Obj({ ...itemProps, workspace_id: Nullable(Type.Integer()) }),
      query: WorkspaceIdQuery.properties,
    },
  );
}
