// Notifications, for both sides: the partner portal's list (/api/partner/notifications) and the advertiser
// dashboard's (/api/advertiser/notifications, the bell). Same answer shape and read routes on both APIs:
// `{ data: [{ id, kind, title, body, data, program_id, read_at, created_at }], meta: { unread, pagination } }`,
// `POST …/:id/read`, `POST …/read-all`.
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.ts';
import { ErrorBox, Pager, dateTime, useLoad, useSubmit } from './ui.tsx';
import { View } from './skeleton.tsx';

export interface AppNotification {
  id: number;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown> | null;
  program_id: number | null;
  read_at: string | null;
  created_at: string;
}

interface Page {
  data: AppNotification[];
  meta: { unread: number; pagination: Pagination };
}

type Query = Record<string, string | number | undefined>;

/** The pages of a list answer (`meta.pagination`). */
export interface Pagination {
  page: number;
  pageSize: number;
  pageCount: number;
  total: number;
}

/** Kinds that ask the reader to act (the spec's manual-review warning): shown as warnings. */
const WARNINGS = new Set(['paid_commission_refunded', 'mail_failed']);

/** How often an open page asks for the unread count (it also asks on every page change). */
export const UNREAD_POLL_MS = 60_000;

/**
 * The unread count of `base` (…/notifications; null: not now), asked when `deps` change (the page, a read), and once a
 * minute. A failed ask keeps the last count: the page itself shows errors.
 */
export function useUnreadCount(base: string | null, query: Query, deps: unknown[]): number {
  const [unread, setUnread] = useState(0);
  useEffect(() => {
    if (base === null) return;
    let live = true;
    const ask = () =>
      api
        .get<Page>(base, { ...query, unread: 'true' })
        .then((r) => live && setUnread(r.meta.unread))
        .catch(() => undefined);
    ask();
    const timer = setInterval(ask, UNREAD_POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [base, JSON.stringify(query), ...deps]);
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
  base: string;
  query?: Query;
  page: number;
  onPage(page: number): void;
  onRead(): void;
  empty: string;
}) {
  const { base, page } = props;
  const query = props.query ?? {};
  const list = useLoad(() => api.get<Page>(base, { ...query, page }), [base, JSON.stringify(query), page]);
  const act = useSubmit();
  const read = (path: string) =>
    void act
      .run(async () => {
        await api.post(path, {}, query);
      })
      .then((ok) => {
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
                  <button type="button" disabled={act.busy} onClick={() => read(`${base}/read-all`)}>
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
                            onClick={() => read(`${base}/${n.id}/read`)}
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
