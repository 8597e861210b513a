// Notifications, for both sides: the partner portal's list (/api/partner/notifications) and the advertiser
// dashboard's (/api/advertiser/notifications, the bell). Same answer shape and read routes on both APIs:
// `{ data: [{ id, kind, title, body, data, program_id, read_at, created_at }], meta: { unread, pagination } }`,
// `POST …/:id/read`, `POST …/read-all`; each side's routes are a NotificationSource.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import type { Answer } from './api.ts';
import { useAction, useLoad } from './hooks.ts';
import { dateTime } from './format.ts';
import { ErrorBox, Pager } from './widgets.tsx';
import { View } from './skeleton.tsx';

type Page = Answer<'get', '/api/partner/notifications'>;

/** The pages of a list answer (`meta.pagination`). */
export type Pagination = Page['meta']['pagination'];

/** One side's notification routes; `key` changes when they do (another workspace). */
export interface NotificationSource {
  key: string;
  list(query: { unread?: 'true'; page?: number }): Promise<Page>;
  read(id: number): Promise<unknown>;
  readAll(): Promise<unknown>;
}

/** The advertiser's: the workspace's notifications. */
export function workspaceNotifications(workspaceId: number): NotificationSource {
  const query = { workspace_id: workspaceId };
  return {
    key: `workspace ${workspaceId}`,
    list: (q) => api.GET('/api/advertiser/notifications', { params: { query: { ...query, ...q } } }),
    read: (id) => api.POST('/api/advertiser/notifications/{id}/read', { params: { path: { id }, query } }),
    readAll: () => api.POST('/api/advertiser/notifications/read-all', { params: { query } }),
  };
}

/** The signed-in partner's. */
export const partnerNotifications: NotificationSource = {
  key: 'partner',
  list: (query) => api.GET('/api/partner/notifications', { params: { query } }),
  read: (id) => api.POST('/api/partner/notifications/{id}/read', { params: { path: { id } } }),
  readAll: () => api.POST('/api/partner/notifications/read-all'),
};

/** Kinds that ask the reader to act (the spec's manual-review warning): shown as warnings. */
const WARNINGS = new Set(['paid_commission_refunded', 'mail_failed']);

/** How often an open page asks for the unread count (it also asks on every page change). */
export const UNREAD_POLL_MS = 60_000;

/**
 * The unread count of `source` (null: not now), asked when `deps` change (the page, a read), and once a
 * minute. A failed ask keeps the last count: the page itself shows errors.
 */
export function useUnreadCount(source: NotificationSource | null, deps: unknown[]): number {
  const [unread, setUnread] = useState(0);
  useEffect(() => {
    if (source === null) return;
    let live = true;
    const ask = () =>
      source
        .list({ unread: 'true' })
        .then((r) => live && setUnread(r.meta.unread))
        .catch(() => undefined);
    ask();
    const timer = setInterval(ask, UNREAD_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [source?.key, ...deps]);
  return unread;
}

/** The count beside a "Notifications" link or bell, read out as "3 unread". */
export function UnreadBadge(props: { count: number }) {
  if (props.count <= 0) return null;
  return (
    <span class="count" data-testid="unread">
      <span aria-hidden="true">{props.count > 99 ? '99+' : props.count}</span>
      <span class="sr-only"> ({props.count} unread)</span>
    </span>
  );
}

/**
 * The list: unread ones stand out, warnings in yellow; "Mark read" on each unread one, "Mark all read".
 * `page` and `onPage` come from the caller's address (?page=); `onRead` after any read (the unread badge).
 */
export function NotificationList(props: {
  source: NotificationSource;
  page: number;
  onPage(page: number): void;
  onRead(): void;
  empty: string;
}) {
  const { source, page } = props;
  const list = useLoad(() => source.list({ page }), [source.key, page]);
  const act = useAction();
  const read = (call: () => Promise<unknown>) =>
    void act.run(call).then((ok) => {
      if (!ok) return;
      list.reload();
      props.onRead();
    });

  return (
    <>
      <ErrorBox error={act.error} />
      <View loaded={list} lines={5} label="Loading notifications">
        {(r) => {
          return (
            <>
              <p class="toolbar">
                <span data-testid="unread-line">
                  {r.meta.unread === 0 ? 'Nothing unread.' : `${r.meta.unread} unread`}
                </span>
                {r.meta.unread > 0 && (
                  <button type="button" disabled={act.busy} onClick={() => read(source.readAll)}>
                    Mark all read
                  </button>
                )}
              </p>
              {r.data.length === 0 ? (
                <p class="empty">{page > 1 ? 'No more notifications.' : props.empty}</p>
              ) : (
                <ul class="notifications">
                  {r.data.map((n) => (
                    <li
                      key={n.id}
                      class={`${n.read_at ? 'read' : 'unread'}${WARNINGS.has(n.kind) ? ' warning' : ''}`}
                      data-kind={n.kind}
                    >
                      <h2>
                        {!n.read_at && <span class="sr-only">Unread: </span>}
                        {WARNINGS.has(n.kind) && (
                          <span class="warning-mark" role="img" aria-label="Needs your attention">
                            ⚠{' '}
                          </span>
                        )}
                        {n.title}
                      </h2>
                      <p class="body">{n.body}</p>
                      <p class="muted">
                        {dateTime(n.created_at)}
                        {n.read_at ? ` · read ${dateTime(n.read_at)}` : ''}{' '}
                        {!n.read_at && (
                          <button
                            type="button"
                            disabled={act.busy}
                            onClick={() => read(() => source.read(n.id))}
                          >
                            Mark read<span class="sr-only"> ({n.title})</span>
                          </button>
                        )}
                      </p>
                    </li>
                  ))}
                </ul>
              )}
              <Pager
                page={page}
                pageCount={r.meta.pagination.pageCount}
                note={`${r.meta.pagination.total} notifications`}
                label="Notification pages"
                onPage={props.onPage}
              />
            </>
          );
        }}
      </View>
    </>
  );
}
