// Process entry for the mail worker (docs/mail.md). Its consumer takes the mails the outbox relay published
// (topic `mail`) and records each in the mail log, once per id; a periodic task sends what is due over SMTP
// and keeps the retries in Postgres (send.ts). Offsets are committed once the mails are in the log, so no
// request and no consumer ever waits for SMTP. Without SMTP_URL the mails are recorded as `skipped`.
// Readiness does not depend on the SMTP server: a server that is down only delays mail (retries).
import { Counter } from 'prom-client';
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import type { ConsumedMessage } from '../../../shared/pipeline/kafka.ts';
import { writeDeadLetters } from '../../../shared/pipeline/dead-letters.ts';
import type { DeadLetter } from '../../../shared/pipeline/dead-letters.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import { parseMailMessage } from './parse.ts';
import { renderMail } from './templates.ts';
import { createMailLog } from './log.ts';
import { createSendStep } from './send.ts';
import { createSmtpTransport } from './smtp.ts';

await runWorker({
  name: 'mail-worker',
  topic: 'mail',
  async build({ cfg, log, sql, producer, topics, periodic }) {
    const mailLog = createMailLog({
      sql,
      topic: topics.mail,
      notify: { kafkaPrefix: cfg.kafkaPrefix, publicUrl: cfg.publicUrl },
    });
    const counter = (name: string, help: string) => new Counter({ name, help, registers: [] });
    const counters = {
      sent: counter('svc_mail_sent_total', 'Mails the SMTP server accepted'),
      retried: counter('svc_mail_attempts_failed_total', 'SMTP attempts that failed and will be retried'),
      failed: counter('svc_mail_failed_total', 'Mails failed after their last attempt (the dead end)'),
      skipped: counter('svc_mail_skipped_total', 'Mails recorded as skipped: no SMTP configured'),
    };
    const transport = cfg.smtpUrl ? createSmtpTransport(cfg) : null;
    if (!transport) log.info('SMTP_URL is not set: mail is recorded as skipped, not sent (docs/mail.md)');
    let figures = { received: 0, recorded: 0, sent: 0, retried: 0, failed: 0, deadLetters: 0 };

    const sender = transport
      ? (() => {
          const sendDue = createSendStep({
            log: mailLog,
            transport,
            logger: log,
            retryDelaysMs: cfg.mailRetryDelaysMs,
            concurrency: cfg.mailConcurrency,
            // An attempt is bounded by the send timeout: the lease outlasts it with a margin.
            leaseMs: 2 * cfg.mailSendTimeoutMs,
            counters,
          });
          return periodic({
            name: 'mail sender',
            intervalMs: cfg.mailPollMs,
            async run() {
              const r = await sendDue();
              figures.sent += r.sent;
              figures.retried += r.retried;
              figures.failed += r.failed;
              return r.more;
            },
          });
        })()
      : null;

    async function handle(messages: ConsumedMessage[]): Promise<void> {
      const dead: DeadLetter[] = [];
      const mails: { message: MailMessage; subject: string }[] = [];
      const seen = new Set<string>();
      for (const message of messages) {
        const m = parseMailMessage(message.value);
        if (typeof m === 'string') dead.push({ message, step: 'parse', reason: m });
        // The same mail twice in a chunk (the relay published it twice): one row, as with a later copy.
        else if (!seen.has(m.id)) {
          seen.add(m.id);
          mails.push({ message: m, subject: renderMail(m).subject });
        }
      }
      const status = transport ? 'queued' : 'skipped';
      const recorded = await mailLog.record(mails, status);
      if (status === 'skipped') counters.skipped.inc(recorded);
      await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, dead);
      figures.received += messages.length;
      figures.recorded += recorded;
      figures.deadLetters += dead.length;
      if (recorded > 0) sender?.wake();
    }

    return {
      handle,
      status() {
        const f = figures;
        if (Object.values(f).every((v) => v === 0)) return null;
        figures = { received: 0, recorded: 0, sent: 0, retried: 0, failed: 0, deadLetters: 0 };
        return transport ? f : { ...f, skipped: f.recorded };
      },
      close: () => transport?.close(),
      metrics: Object.values(counters),
    };
  },
});
