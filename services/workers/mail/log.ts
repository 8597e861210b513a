// The mail log (0015_mail.sql) as a delivery queue's store (shared/delivery/queue.ts). Every row is one mail;
// its status says where it is: queued (due at next_attempt_at) → sending (an attempt under way, leased until
// next_attempt_at) → sent, or back to queued with a later next_attempt_at, or failed (the dead end); skipped
// when no SMTP is configured. A claim counts the attempt, and the count is the claim's token: a result is
// recorded only by the attempt that claimed the row, so a worker whose lease ran out cannot overwrite what a
// later attempt recorded. The link of a mail (an invite or sign-in token) is kept only while the mail may
// still be sent: a sent, failed or skipped row loses `message.data.url`.
import { boolArray } from '../../../shared/db/sql.ts';
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import { queueNotifications } from '../../../shared/db/notifications.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';
import type { Job } from '../../../shared/delivery/outcome.ts';
import type { DeliveryStore, Result } from '../../../shared/delivery/queue.ts';

export type MailJob = Job<MailMessage>;

export interface MailLog extends DeliveryStore<MailMessage, null> {
  /**
   * Records the mails of a chunk (one statement); a mail already in the log (the relay published it twice,
   * Kafka redelivered it) is left as it is. Returns how many were new.
   */
  add(
    mails: readonly { message: MailMessage; subject: string }[],
    status: 'queued' | 'skipped',
  ): Promise<number>;
}

const WHAT: Record<MailMessage['template'], (m: MailMessage) => string> = {
  partner_invite: () => 'The partner invite',
  magic_link: () => 'The sign-in link',
  notification: (m) => `The notification "${(m.data as { title: string }).title}"`,
  payout_method_changed: () => 'The payout-method change notice',
};

/** The advertiser's notification of a mail that failed for good (not mailed: their mail may be what fails). */
export function failureNotice(mail: MailJob, error: string): NotificationInput | null {
  const m = mail.payload;
  if (m.workspace_id === null) return null;
  return {
    notification_key: `mail:${mail.id}:failed`,
    recipient_type: 'advertiser',
    partner_id: null,
    workspace_id: m.workspace_id,
    program_id: null,
    kind: 'mail_failed',
    title: `A mail to ${m.to} could not be delivered`,
    body: `${WHAT[m.template](m)} to ${m.to} was not delivered after ${mail.attempt} attempts. The mail server's last answer: ${error}`,
    data: { mail_id: mail.id, to: m.to, template: m.template, attempts: mail.attempt, last_error: error },
    mail: false,
  };
}

/** When the mail was queued (its outbox row), or else when the log received it. */
function createdAtOf(m: MailMessage, received: Date): Date {
  const at = Date.parse(m.created_at);
  return Number.isNaN(at) ? received : new Date(at);
}

/** The row a result leaves: its status, the wait before the next attempt, the error kept. */
function rowOf(r: Result<MailMessage, null>) {
  const o = r.outcome;
  switch (o.type) {
    case 'delivered':
      return { status: 'sent', delayMs: null, error: null, released: false };
    case 'retry':
      return { status: 'queued', delayMs: o.delayMs, error: o.error, released: false };
    case 'failed':
      return { status: 'failed', delayMs: null, error: o.error, released: false };
    case 'released':
      return { status: 'queued', delayMs: 0, error: null, released: true };
  }
}

export function createMailLog(deps: {
  sql: Sql;
  topic: string;
  notify: { kafkaPrefix: string; publicUrl: string };
}): MailLog {
  const { sql, topic } = deps;

  return {
    async add(mails, status) {
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

    // This deployment's due mails (queued and due, or sending with an expired lease), marked sending, leased
    // and counted. Mail has no per-key limit: `busy` is not used.
    async claim(limit, leaseMs) {
      const rows = await sql<{ id: string; message: MailMessage; attempts: number; created_at: Date }[]>`
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
        returning m.id, m.message, m.attempts, m.created_at`;
      return rows.map((r): MailJob => ({
        id: r.id,
        token: String(r.attempts),
        attempt: r.attempts,
        once: false,
        key: null,
        createdAt: createdAtOf(r.message, r.created_at),
        payload: r.message,
        logFields: { template: r.message.template },
      }));
    },

    async record(tx: Tx, results) {
      if (results.length === 0) return new Set();
      const rows = results.map(rowOf);
      const col = <T>(f: (row: ReturnType<typeof rowOf>, r: Result<MailMessage, null>) => T) =>
        results.map((r, i) => f(rows[i]!, r));
      // A released attempt is not counted: the next claim makes the same attempt again.
      const recorded = await tx<{ id: string }[]>`
        update mail_log m set
          status = v.status,
          attempts = case when v.released then m.attempts - 1 else m.attempts end,
          next_attempt_at = case when v.status = 'queued'
                                 then now() + v.delay_ms * interval '1 millisecond' end,
          sent_at = case when v.status = 'sent' then now() else m.sent_at end,
          last_error = case when v.released then m.last_error else v.error end,
          message = case when v.status in ('sent', 'failed') then m.message #- '{data,url}' else m.message end,
          updated_at = now()
        from unnest(
          ${col((_, r) => r.job.id)}::text[], ${col((_, r) => r.job.attempt)}::int[],
          ${col((row) => row.status)}::text[], ${col((row) => row.delayMs)}::float8[],
          ${col((row) => row.error)}::text[], ${boolArray(col((row) => row.released))}::text[]::bool[]
        ) as v(id, attempt, status, delay_ms, error, released)
        where m.id = v.id and m.status = 'sending' and m.attempts = v.attempt
        returning m.id`;
      return new Set(recorded.map((r) => r.id));
    },

    // The dead end: the mail is failed (record) and, for a mail of a workspace, its advertiser notified in the
    // same transaction.
    async settle(tx, recorded) {
      for (const r of recorded) {
        if (r.outcome.type !== 'failed') continue;
        const notice = failureNotice(r.job, r.outcome.error);
        // A workspace that does not exist (a message from elsewhere) has nobody to tell.
        const [ws] = notice ? await tx`select 1 from workspaces where id = ${notice.workspace_id}` : [];
        if (notice && ws) await queueNotifications(tx, deps.notify.kafkaPrefix, [notice]);
      }
      return {};
    },
  };
}
