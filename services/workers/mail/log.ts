// The mail worker's SQL on the mail log (0015_mail.sql). Every row is one mail; its status says where it is:
// queued (due at next_attempt_at) → sending (an attempt under way, leased until next_attempt_at) → sent, or
// back to queued with a later next_attempt_at, or failed (the dead end); skipped when no SMTP is configured.
// A result is recorded only by the attempt that claimed the row (its `attempts` value is the claim's token),
// so a worker whose lease ran out cannot overwrite what a later attempt recorded. The link of a mail (an
// invite or sign-in token) is kept only while the mail may still be sent: a sent, failed or skipped row
// loses `message.data.url`.
import type { Sql } from '../../../shared/db/sql.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import { queueNotifications } from '../../../shared/db/notifications.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';

export interface ClaimedMail {
  id: string;
  message: MailMessage;
  /** This attempt's number (1 for the first): the claim's token. */
  attempt: number;
}

export interface MailLog {
  /**
   * Records the mails of a chunk (one statement); a mail already in the log (the relay published it twice,
   * Kafka redelivered it) is left as it is. Returns how many were new.
   */
  record(
    mails: readonly { message: MailMessage; subject: string }[],
    status: 'queued' | 'skipped',
  ): Promise<number>;
  /**
   * Claims up to `limit` of this deployment's due mails (queued and due, or sending with an expired lease)
   * that no other worker holds, marks them sending, leased for `leaseMs`, and counts the attempt.
   */
  claim(limit: number, leaseMs: number): Promise<ClaimedMail[]>;
  markSent(id: string, attempt: number): Promise<boolean>;
  markRetry(id: string, attempt: number, delayMs: number, error: string): Promise<boolean>;
  /** The dead end: status failed and, for a mail of a workspace, the advertiser's notification, together. */
  markFailed(id: string, attempt: number, error: string, notice: NotificationInput | null): Promise<boolean>;
}

export function createMailLog(deps: {
  sql: Sql;
  topic: string;
  notify: { kafkaPrefix: string; publicUrl: string };
}): MailLog {
  const { sql, topic } = deps;

  return {
    async record(mails, status) {
      if (mails.length === 0) return 0;
      // The message travels as JSON text and is cast per row (a jsonb[] parameter would be encoded twice).
      const rows = await sql`
        insert into mail_log (id, topic, workspace_id, recipient, template, subject, message, status,
                              next_attempt_at)
        select id, ${topic}, workspace_id, recipient, template, subject,
               case when ${status} = 'queued' then message::jsonb else message::jsonb #- '{data,url}' end,
               ${status}, case when ${status} = 'queued' then now() end
        from unnest(
          ${mails.map((m) => m.message.id)}::text[],
          ${mails.map((m) => m.message.workspace_id)}::bigint[],
          ${mails.map((m) => m.message.to)}::text[],
          ${mails.map((m) => m.message.template)}::text[],
          ${mails.map((m) => m.subject)}::text[],
          ${mails.map((m) => JSON.stringify(m.message))}::text[]
        ) as v(id, workspace_id, recipient, template, subject, message)
        on conflict (id) do nothing
        returning id`;
      return rows.length;
    },

    async claim(limit, leaseMs) {
      const rows = await sql<{ id: string; message: MailMessage; attempts: number }[]>`
        with due as (
          select id from mail_log
          where topic = ${topic} and status in ('queued', 'sending') and next_attempt_at <= now()
          order by next_attempt_at
          limit ${limit}
          for update skip locked
        )
        update mail_log m
        set status = 'sending', attempts = m.attempts + 1,
            next_attempt_at = now() + ${leaseMs}::float8 * interval '1 millisecond', updated_at = now()
        from due where m.id = due.id
        returning m.id, m.message, m.attempts`;
      return rows.map((r) => ({ id: r.id, message: r.message, attempt: r.attempts }));
    },

    async markSent(id, attempt) {
      const rows = await sql`
        update mail_log
        set status = 'sent', sent_at = now(), next_attempt_at = null, last_error = null, updated_at = now(),
            message = message #- '{data,url}'
        where id = ${id} and status = 'sending' and attempts = ${attempt}
        returning id`;
      return rows.length === 1;
    },

    async markRetry(id, attempt, delayMs, error) {
      const rows = await sql`
        update mail_log
        set status = 'queued', next_attempt_at = now() + ${delayMs}::float8 * interval '1 millisecond',
            last_error = ${error}, updated_at = now()
        where id = ${id} and status = 'sending' and attempts = ${attempt}
        returning id`;
      return rows.length === 1;
    },

    async markFailed(id, attempt, error, notice) {
      return sql.begin(async (tx) => {
        const rows = await tx`
          update mail_log
          set status = 'failed', next_attempt_at = null, last_error = ${error}, updated_at = now(),
              message = message #- '{data,url}'
          where id = ${id} and status = 'sending' and attempts = ${attempt}
          returning id`;
        if (rows.length === 0) return false;
        // A workspace that does not exist (a message from elsewhere) has nobody to tell.
        const [ws] = notice ? await tx`select 1 from workspaces where id = ${notice.workspace_id}` : [];
        if (notice && ws) await queueNotifications(tx, deps.notify.kafkaPrefix, [notice]);
        return true;
      });
    },
  };
}
