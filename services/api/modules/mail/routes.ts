// GET /api/advertiser/mail (docs/mail.md): the workspace's mail log, newest first: every mail the service
// sent or tried to send on the workspace's behalf (partner invites, sign-in links, notifications), with its
// status, attempts and the mail server's last error, so an advertiser can see a mail that never arrived.
// Read permission program:read (any role; a key with that scope and no program_scope: the log covers every
// program, so a key limited to some is 403 `API key is limited to programs <ids>`, as on every
// workspace-wide route); the recipient and subject are shown, the body never.
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { StringEnum } from '../../../../shared/http/validation.ts';
import { errorResponses } from '../../../../shared/http/server.ts';
import { MAIL_STATUSES } from '../../../../shared/contracts/mail-log.ts';
import { MAIL_TEMPLATES } from '../../../../shared/contracts/mail.ts';
import { principalOf, workspaceAccess } from '../auth/access.ts';
import type { ApiDeps } from '../../deps.ts';
import { DateTime, Nullable, Obj, WorkspaceIdQuery, managementSecurity, workspaceOf } from '../../common.ts';
import { mailOfWorkspace } from './dal.ts';
import { ERR, MAX_PAGE_SIZE, pagination, toMail } from './service.ts';

const MailOut = Obj({
  id: Type.String({ description: 'Stable per mail: `invite:<id>`, `magic:<id>`, `notification:<id>…`' }),
  to: Type.String(),
  template: Type.String({ enum: [...MAIL_TEMPLATES] }),
  subject: Type.String(),
  status: Type.String({ enum: [...MAIL_STATUSES] }),
  attempts: Type.Integer({ description: 'SMTP attempts made so far' }),
  last_error: Nullable(Type.String({ description: "The mail server's last answer or the connection error" })),
  next_attempt_at: Nullable(DateTime({ description: 'When a queued mail is tried next' })),
  sent_at: Nullable(DateTime()),
  created_at: DateTime(),
  updated_at: DateTime(),
});

// Property order is the order of the checks (shared/http/validation.ts); workspace_id is checked first,
// with the access check, in preValidation.
const MailQuery = Type.Object({
  workspace_id: WorkspaceIdQuery.properties.workspace_id,
  status: Type.Optional(StringEnum(MAIL_STATUSES, ERR.status)),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, errorMessage: ERR.page })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: 50, errorMessage: ERR.pageSize }),
  ),
});

const workspaces = new WeakMap<FastifyRequest, number>();

export function registerMailRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    '/api/advertiser/mail',
    {
      preValidation: async (req) => {
        const access = await workspaceAccess(sql, principalOf(req), 'program:read', workspaceOf(req));
        workspaces.set(req, access.workspaceId);
      },
      schema: {
        tags: ['management'],
        summary: "The workspace's mail log: what was sent, what is retried, what failed",
        description:
          'Permission program:read (every role; an API key with scope program:read and no program_scope). ' +
          'Newest first. `status`: queued (waiting for its next attempt, `next_attempt_at`), sending, sent, ' +
          'failed (every attempt failed: the workspace also got a `mail_failed` notification), skipped (no ' +
          'SMTP server configured). The recipient and subject are shown, the body never. `page` (default 1) ' +
          'and `pageSize` (1..100, default 50). Errors: 400 `workspace_id must be a positive integer`, ' +
          `\`${ERR.status}\`, \`${ERR.page}\`, \`${ERR.pageSize}\`; 403 \`API key is limited to programs <ids>\` ` +
          'for a key limited to some programs; ' +
          '404 `Workspace not found`.',
        security: managementSecurity,
        querystring: MailQuery,
        response: {
          200: Obj({
            data: Type.Array(MailOut),
            meta: Obj({
              pagination: Obj({
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
      const workspaceId = workspaces.get(req)!;
      const { status, page = 1, pageSize = 50 } = req.query;
      const { rows, total } = await mailOfWorkspace(sql, workspaceId, {
        status,
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      return { data: rows.map(toMail), meta: { pagination: pagination(page, pageSize, total) } };
    },
  );
}
