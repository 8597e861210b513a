// SQL of notifications as their recipients read them: a partner account reads those addressed to the
// partner records it claimed, a dashboard user or key those addressed to its workspaces. Read state is the
// row's read_at (one per notification: a workspace's members share it).
import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../../../../shared/db/sql.ts';

/** Whose notifications: a partner account's, or those of some workspaces. */
export type Recipient = { accountId: number } | { workspaceIds: number[] } | { userId: number };

export interface NotificationRow {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: unknown;
  program_id: string | null;
  workspace_id: string | null;
  partner_id: string | null;
  read_at: Date | null;
  created_at: Date;
}

function whose(sql: Sql, r: Recipient): PendingQuery<Row[]> {
  if ('accountId' in r) {
    return sql`recipient_type = 'partner'
      and partner_id in (select partner_id from partner_claims where account_id = ${r.accountId})`;
  }
  if ('userId' in r) {
    return sql`recipient_type = 'advertiser'
      and workspace_id in (select workspace_id from memberships where user_id = ${r.userId} and status = 'active')`;
  }
  return sql`recipient_type = 'advertiser' and workspace_id = any(${r.workspaceIds}::bigint[])`;
}

const COLUMNS = (sql: Sql) =>
  sql`id, kind, title, body, data, program_id, workspace_id, partner_id, read_at, created_at`;

/** A page, newest first; the total of the filter and the recipient's unread count. */
export async function listNotifications(
  sql: Sql,
  r: Recipient,
  q: { unread: boolean | null; limit: number; offset: number },
) {
  const filter =
    q.unread === null ? sql`` : q.unread ? sql`and read_at is null` : sql`and read_at is not null`;
  const [rows, [counts]] = await Promise.all([
    sql<NotificationRow[]>`
      select ${COLUMNS(sql)} from notifications where ${whose(sql, r)} ${filter}
      order by created_at desc, id desc limit ${q.limit} offset ${q.offset}`,
    sql<{ total: string; unread: string }[]>`
      select count(*) filter (where true ${filter})::text as total,
             count(*) filter (where read_at is null)::text as unread
      from notifications where ${whose(sql, r)}`,
  ]);
  return { rows, total: Number(counts!.total), unread: Number(counts!.unread) };
}

/** Marks one notification read (keeps the first read_at); undefined when it is not the recipient's. */
export async function markRead(sql: Sql, r: Recipient, id: number) {
  const [row] = await sql<NotificationRow[]>`
    update notifications set read_at = coalesce(read_at, now())
    where id = ${id} and ${whose(sql, r)}
    returning ${COLUMNS(sql)}`;
  return row;
}

/** Marks every unread notification of the recipient read; how many were. */
export async function markAllRead(sql: Sql, r: Recipient): Promise<number> {
  const rows = await sql`
    update notifications set read_at = now() where read_at is null and ${whose(sql, r)} returning id`;
  return rows.length;
}
