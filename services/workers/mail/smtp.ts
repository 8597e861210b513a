// Sending one mail over SMTP with nodemailer (SMTP_URL, MAIL_FROM): a pool of up to MAIL_CONCURRENCY
// connections, every attempt bounded by MAIL_SEND_TIMEOUT_MS (the connection, greeting and socket timeouts,
// and a bound on the whole attempt, which keeps it well inside its lease on the mail). `smtpDelivery` is the
// delivery queue's SMTP transport (shared/delivery/queue.ts): each attempt renders the mail and sends it.
import { createHash } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Config } from '../../../shared/config.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import type { Transport } from '../../../shared/delivery/queue.ts';
import { renderMail } from './templates.ts';
import type { RenderedMail } from './templates.ts';

export interface OutgoingMail extends RenderedMail {
  /** The mail log id: the same Message-ID on every attempt (a receiver may drop a second copy). */
  id: string;
  to: string;
}

export interface MailTransport {
  /** Resolves with the server's final response once the server accepted the mail; rejects otherwise. */
  send(mail: OutgoingMail): Promise<string>;
  close(): void;
}

/** The address part of `Name <address>` or of a bare address. */
export function addressOf(from: string): string {
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1]! : from).trim();
}

/** A Message-ID stable per mail log id, on the From address's domain. */
export function messageIdOf(id: string, from: string): string {
  const domain = addressOf(from).split('@')[1] ?? 'localhost';
  return `<${createHash('sha256').update(id).digest('hex').slice(0, 32)}@${domain}>`;
}

/** What an SMTP failure says, for the log and the advertiser: the server's answer when there is one. */
export function smtpError(err: unknown): string {
  const e = err as { response?: unknown; message?: unknown; code?: unknown } | null;
  const text =
    typeof e?.response === 'string' && e.response !== ''
      ? e.response
      : typeof e?.message === 'string'
        ? e.message
        : String(err);
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

export function createSmtpTransport(
  cfg: Pick<Config, 'smtpUrl' | 'mailFrom' | 'mailConcurrency' | 'mailSendTimeoutMs'>,
): MailTransport {
  if (!cfg.smtpUrl) throw new Error('no SMTP_URL');
  const timeout = cfg.mailSendTimeoutMs;
  const transport = nodemailer.createTransport({
    url: cfg.smtpUrl,
    pool: true,
    maxConnections: cfg.mailConcurrency,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    logger: false,
  });
  return {
    async send(mail) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer from the SMTP server within ${timeout} ms`)),
          timeout,
        );
      });
      try {
        const info = await Promise.race([
          transport.sendMail({
            from: cfg.mailFrom,
            to: mail.to,
            subject: mail.subject,
            text: mail.text,
            html: mail.html,
            messageId: messageIdOf(mail.id, cfg.mailFrom),
            headers: { 'X-Svc-Mail-Id': mail.id },
          }),
          bound,
        ]);
        return info.response;
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      transport.close();
    },
  };
}

/** Rejects once `signal` aborts (the worker shutting down); otherwise settles with `work`. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('aborted: the worker is shutting down'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

/**
 * The queue's SMTP transport. Every failure is a failed attempt, a refusal (550) as much as a server that
 * cannot be reached, a template's failure included; `answered` when the server replied with a code.
 */
export function smtpDelivery(smtp: MailTransport): Transport<MailMessage, null> {
  return {
    async send(job, _at, signal) {
      try {
        const mail = { id: job.id, to: job.payload.to, ...renderMail(job.payload) };
        await unlessAborted(smtp.send(mail), signal);
        return { type: 'accepted', detail: null };
      } catch (err) {
        const answered = typeof (err as { response?: unknown } | null)?.response === 'string';
        return { type: 'failed', error: smtpError(err), answered, detail: null };
      }
    },
    close: () => smtp.close(),
  };
}
