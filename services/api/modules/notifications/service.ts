// The rules of reading notifications, pure: the query, the answer shape, the kinds in use (documented in
// docs/api.md "Notifications").
import { iso } from '../../common.ts';
import type { NotificationRow } from './dal.ts';

export const ERR = {
  unread: "unread must be 'true' or 'false'",
  page: 'page must be an integer of at least 1',
  pageSize: 'pageSize must be an integer between 1 and 100',
  notFound: 'Notification not found',
} as const;

/** `?unread=true|false` as a filter; absent: every notification. */
export const unreadFilter = (v: 'true' | 'false' | undefined): boolean | null =>
  v === undefined ? null : v === 'true';

export const toNotification = (r: NotificationRow) => ({
  id: Number(r.id),
  kind: r.kind,
  title: r.title,
  body: r.body,
  data: r.data ?? {},
  program_id: r.program_id === null ? null : Number(r.program_id),
  read_at: iso(r.read_at),
  created_at: iso(r.created_at)!,
});

/** The advertiser's items also say which workspace they are addressed to. */
export const toWorkspaceNotification = (r: NotificationRow) => ({
  ...toNotification(r),
  workspace_id: r.workspace_id === null ? null : Number(r.workspace_id),
});
