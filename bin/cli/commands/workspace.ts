// svc members, keys, processor, webhooks, notifications: what belongs to the workspace (--workspace-id,
// default the caller's first) rather than to one program.
import { api, arg, given, idArg, int, list, o, show, workspace } from '../context.ts';
import type { Commands } from '../context.ts';

const WEBHOOK_COLS = ['id', 'url', 'events', 'program_ids', 'status', 'disabled_reason', 'description'];
const endpoint = () => ({ path: { id: idArg(2, 'endpoint id') } });
const inWorkspace = (path: { id: number }) => ({ path, query: workspace() });

export const workspaceCommands: Commands = {
  async notifications() {
    const r = await api.GET('/api/advertiser/notifications', {
      params: {
        query: {
          ...workspace(),
          unread: o.unread ? 'true' : undefined,
          page: given(o.page),
          pageSize: given(o['page-size']),
        },
      },
    });
    if (o.json) return show(r);
    show(r, ['id', 'created_at', 'kind', 'title', 'read_at']);
    process.stdout.write(`${r.meta.unread} unread\n`);
  },
  'notifications read': async () =>
    show(
      await api.POST('/api/advertiser/notifications/{id}/read', {
        params: inWorkspace({ id: idArg(2, 'notification id') }),
      }),
      ['id', 'kind', 'title', 'read_at'],
    ),
  'notifications read-all': async () =>
    show(await api.POST('/api/advertiser/notifications/read-all', { params: { query: workspace() } }), [
      'updated',
    ]),

  'members list': async () =>
    show(await api.GET('/api/advertiser/members', { params: { query: workspace() } }), [
      'user_id',
      'email',
      'name',
      'role',
      'status',
    ]),
  'members add': async () =>
    show(
      await api.POST('/api/advertiser/members', {
        params: { query: workspace() },
        body: { email: given(o.email), role: given(o.role) },
      }),
      ['user_id', 'email', 'role', 'status'],
    ),
  'members remove': async () =>
    show(
      await api.DELETE('/api/advertiser/members/{userId}', {
        params: { path: { userId: idArg(2, 'user id') }, query: workspace() },
      }),
    ),

  'keys list': async () =>
    show(await api.GET('/api/advertiser/api-keys', { params: { query: workspace() } }), [
      'id',
      'name',
      'key_masked',
      'scopes',
      'program_scope',
      'status',
      'expires_at',
    ]),
  'keys create': async () =>
    show(
      await api.POST('/api/advertiser/api-keys', {
        params: { query: workspace() },
        body: {
          name: given(o.name),
          scopes: given(list(o.scopes)),
          program_scope: list(o.programs),
          expires_at: o.expires,
        },
      }),
      ['id', 'name', 'key', 'scopes', 'program_scope', 'expires_at'],
    ),
  'keys update': async () =>
    show(
      await api.PUT('/api/advertiser/api-keys/{id}', {
        params: inWorkspace({ id: idArg(2, 'key id') }),
        body: {
          name: o.name,
          scopes: given(list(o.scopes)),
          program_scope: o.programs === 'all' ? null : list(o.programs),
        },
      }),
      ['id', 'name', 'key_masked', 'scopes', 'program_scope', 'status'],
    ),
  'keys revoke': async () =>
    show(
      await api.DELETE('/api/advertiser/api-keys/{id}', { params: inWorkspace({ id: idArg(2, 'key id') }) }),
      ['id', 'name', 'key_masked', 'status'],
    ),

  'processor connect': async () =>
    show(
      await api.PUT('/api/advertiser/processor-connection', {
        params: { query: workspace() },
        body: {
          status: given(o.status),
          account_id: o.account,
          charges_enabled: o.charges ?? false,
          payouts_enabled: o.payouts ?? false,
          details_submitted: o.details ?? false,
        },
      }),
    ),
  'processor roll-secret': async () =>
    show(
      await api.POST('/api/advertiser/processor-connection/roll-secret', { params: { query: workspace() } }),
    ),
  'processor events': async () =>
    show(
      await api.GET('/api/advertiser/processor-events', {
        params: {
          query: {
            program_id: given(arg(2, 'program id')),
            outcome: given(o.outcome),
            page: given(o.page),
            pageSize: given(o['page-size']),
          },
        },
      }),
      ['received_at', 'type', 'event_id', 'outcome', 'reason', 'transaction_id', 'sale_id', 'commission_id'],
    ),

  'webhooks list': async () =>
    show(await api.GET('/api/advertiser/webhooks', { params: { query: workspace() } }), WEBHOOK_COLS),
  'webhooks add': async () =>
    show(
      await api.POST('/api/advertiser/webhooks', {
        params: { query: workspace() },
        body: {
          url: arg(2, 'endpoint url'),
          events: given(list(o.events)),
          program_ids: list(o.programs)?.map((p) => int(p, '--programs')),
          description: o.description,
        },
      }),
      [...WEBHOOK_COLS, 'secret'],
    ),
  'webhooks test': async () =>
    show(await api.POST('/api/advertiser/webhooks/{id}/test', { params: endpoint() }), ['event_id', 'type']),
  'webhooks deliveries': async () =>
    show(
      await api.GET('/api/advertiser/webhooks/{id}/deliveries', {
        params: {
          ...endpoint(),
          query: { status: given(o.status), page: given(o.page), pageSize: given(o['page-size']) },
        },
      }),
      ['id', 'type', 'status', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at', 'webhook_id'],
    ),
  'webhooks retry': async () =>
    show(
      await api.POST('/api/advertiser/webhook-deliveries/{id}/retry', {
        params: { path: { id: idArg(2, 'delivery id') } },
      }),
      ['id', 'type', 'status', 'attempts', 'next_attempt_at'],
    ),
  'webhooks rotate': async () =>
    show(await api.POST('/api/advertiser/webhooks/{id}/rotate-secret', { params: endpoint() }), [
      'secret',
      'previous_secret_expires_at',
    ]),
  'webhooks enable': async () =>
    show(await api.POST('/api/advertiser/webhooks/{id}/enable', { params: endpoint() }), WEBHOOK_COLS),
  'webhooks disable': async () =>
    show(
      await api.PUT('/api/advertiser/webhooks/{id}', { params: endpoint(), body: { status: 'disabled' } }),
      WEBHOOK_COLS,
    ),
  async 'webhooks delete'() {
    await api.DELETE('/api/advertiser/webhooks/{id}', { params: endpoint() });
    return show({ data: { deleted: int(arg(2, 'endpoint id'), 'endpoint id') } }, ['deleted']);
  },
};
