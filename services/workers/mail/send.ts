// The send step, one round of the mail worker's periodic task: claim the due mails (new ones and retries
// whose time has come, skip locked: any number of mail workers share them), send each over SMTP, and record
// each result as soon as it is known: sent; or queued again after the next wait of MAIL_RETRY_DELAYS (with
// jitter, so mails that failed together do not all come back together); or, after the last attempt,
// failed, with a notification to the advertiser of the mail's workspace.
//
// A mail is claimed with a lease (status sending until next_attempt_at), so a worker killed mid-send
// leaves it to be taken again once the lease ends. The one duplicate that can happen: the SMTP server
// accepted the mail and the worker died before it recorded `sent`; the mail then goes out again with the
// same Message-ID (docs/mail.md "Delivery guarantees").
import type { Counter } from 'prom-client';
import type { Logger } from '../../../shared/logger.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import type { ClaimedMail, MailLog } from './log.ts';
import type { MailTransport } from './smtp.ts';
import { smtpError } from './smtp.ts';
import { renderMail } from './templates.ts';

export interface SendStepDeps {
  log: MailLog;
  transport: MailTransport;
  logger: Logger;
  /** MAIL_RETRY_DELAYS: the wait after the 1st, 2nd, … failed attempt; one more failure is the dead end. */
  retryDelaysMs: readonly number[];
  /** Mails claimed and sent at once. */
  concurrency: number;
  /** The lease on a claimed mail: longer than an attempt may take. */
  leaseMs: number;
  counters: { sent: Counter; retried: Counter; failed: Counter };
  random?: () => number;
}

export interface SendRound {
  sent: number;
  retried: number;
  failed: number;
  /** More may be due: the round took as many as it could. */
  more: boolean;
}

/** The wait after failed attempt number `attempt` (1-based), ±20 % jitter; null: that was the last one. */
export function retryDelay(delays: readonly number[], attempt: number, random = Math.random): number | null {
  const base = delays[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (0.8 + 0.4 * random()));
}

const WHAT: Record<MailMessage['template'], (m: MailMessage) => string> = {
  partner_invite: () => 'The partner invite',
  magic_link: () => 'The sign-in link',
  notification: (m) => `The notification "${(m.data as { title: string }).title}"`,
  payout_method_changed: () => 'The payout-method change notice',
};

/** The advertiser's notification of a mail that failed for good (not mailed: their mail may be what fails). */
export function failureNotice(mail: ClaimedMail, error: string): NotificationInput | null {
  const m = mail.message;
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

export function createSendStep(deps: SendStepDeps) {
  const { log, transport, logger, retryDelaysMs, concurrency, leaseMs, counters } = deps;
  const random = deps.random ?? Math.random;

  /** null when the server accepted the mail; otherwise what went wrong (a template's failure included). */
  async function sendOne(mail: ClaimedMail): Promise<string | null> {
    try {
      await transport.send({ id: mail.id, to: mail.message.to, ...renderMail(mail.message) });
      return null;
    } catch (err) {
      return smtpError(err);
    }
  }

  async function attempt(mail: ClaimedMail, round: SendRound): Promise<void> {
    // Only SMTP's own failures count as a failed attempt; a Postgres error below fails the round instead.
    // An attempt past the last (a worker died mid-send on the last one, and the lease ran out) is not made.
    const error =
      mail.attempt > retryDelaysMs.length + 1
        ? 'the worker sending it stopped, and no attempts are left'
        : await sendOne(mail);
    if (error === null) {
      if (await log.markSent(mail.id, mail.attempt)) {
        round.sent++;
        counters.sent.inc();
      }
      return;
    }
    const delay = retryDelay(retryDelaysMs, mail.attempt, random);
    if (delay !== null) {
      if (await log.markRetry(mail.id, mail.attempt, delay, error)) {
        round.retried++;
        counters.retried.inc();
      }
      return;
    }
    if (await log.markFailed(mail.id, mail.attempt, error, failureNotice(mail, error))) {
      round.failed++;
      counters.failed.inc();
      logger.warn(
        { mail_id: mail.id, template: mail.message.template, attempts: mail.attempt, error },
        'mail failed after its last attempt; the advertiser is notified',
      );
    }
  }

  return async function sendDue(): Promise<SendRound> {
    const claimed = await log.claim(concurrency, leaseMs);
    const round: SendRound = { sent: 0, retried: 0, failed: 0, more: claimed.length === concurrency };
    // Each result is recorded as soon as it is known: the window in which a crash resends a mail the
    // server accepted is one UPDATE long.
    await Promise.all(claimed.map((m) => attempt(m, round)));
    return round;
  };
}
