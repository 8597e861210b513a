// SQL of the advertiser's mail log (0015_mail.sql): a workspace's mails, newest first, and their count.
import type { Sql } from '../../../../shared/db/sql.ts';
import type { MailStatus } from '../../../../shared/contracts/mail-log.ts';

export interface MailRow {
  id: string;
  recipient: string;
  template: string;
  subject: string;
  status: MailStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  sent_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function mailOfWorkspace(
  sql: Sql,
  workspaceId: number,
  q: { status: MailStatus | undefined; limit: number; offset: number },
): Promise<{ rows: MailRow[]; total: number }> {
  const byStatus = q.status === undefined ? sql`` : sql`and status = ${q.status}`;
  const [rows, [count]] = await Promise.all([
    sql<MailRow[]>`
      select id, recipient, template, subject, status, attempts, last_error, next_attempt_at, sent_at,
             created_at, updated_at
      from mail_log
      where workspace_id = ${workspaceId} ${byStatus}
      order by created_at desc, id desc
      limit ${q.limit} offset ${q.offset}`,
    sql<{ n: number }[]>`
      select count(*)::int as n from mail_log where workspace_id = ${workspaceId} ${byStatus}`,
  ]);
  return { rows, total: count!.n };
}
