// Process entry for the mail worker (docs/mail.md). Its consumer takes the mails the outbox relay published
// (topic `mail`) and records each in the mail log, once per id; the delivery queue (shared/delivery) sends
// what is due over SMTP and keeps the retries in the log (log.ts). Offsets are committed once the mails are
// in the log, so no request and no consumer ever waits for SMTP. Without SMTP_URL the mails are recorded as
// `skipped`. Readiness does not depend on the SMTP server: a server that is down only delays mail.
import { Counter } from 'prom-client';
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { deadLetter, ok } from '../../../shared/pipeline/step-outcome.ts';
import type { MailMessage } from '../../../shared/contracts/mail.ts';
import { startDeliveryQueue } from '../../../shared/delivery/queue.ts';
import { parseMailMessage } from './parse.ts';
import { renderMail } from './templates.ts';
import { createMailLog } from './log.ts';
import { createSmtpTransport, smtpDelivery } from './smtp.ts';

await runWorker({
  name: 'mail-worker',
  topic: 'mail',
  async build({ cfg, log, sql, topics, periodic }) {
    const mailLog = createMailLog({
      sql,
      topic: topics.mail,
      notify: { kafkaPrefix: cfg.kafkaPrefix, publicUrl: cfg.publicUrl },
    });
    const skipped = new Counter({
      name: 'svc_mail_skipped_total',
      help: 'Mails recorded as skipped: no SMTP configured',
      registers: [],
    });
    const queue = cfg.smtpUrl
      ? await startDeliveryQueue(
          { sql, log, periodic },
          {
            name: 'mail',
            store: mailLog,
            transport: smtpDelivery(createSmtpTransport(cfg)),
            policy: { scheduleMs: cfg.mailRetryDelaysMs, jitter: 0.2 },
            concurrency: cfg.mailConcurrency,
            // An attempt is bounded by the send timeout: the lease outlasts it with a margin.
            leaseMs: 2 * cfg.mailSendTimeoutMs,
            pollMs: cfg.mailPollMs,
            // Within the shutdown watchdog (9 s): the rest is released for the next worker.
            graceMs: Math.min(5_000, cfg.mailSendTimeoutMs),
          },
        )
      : null;
    if (!queue) log.info('SMTP_URL is not set: mail is recorded as skipped, not sent (docs/mail.md)');

    return {
      steps: {
        parse: (message) => {
          const m = parseMailMessage(message.value);
          return typeof m === 'string' ? deadLetter(m) : ok(m);
        },
        async apply(given: MailMessage[]) {
          // The same mail twice in a chunk (the relay published it twice): one row, as with a later copy.
          const byId = new Map<string, MailMessage>();
          for (const m of given) if (!byId.has(m.id)) byId.set(m.id, m);
          const mails = [...byId.values()].map((m) => ({ message: m, subject: renderMail(m).subject }));
          const recorded = await mailLog.add(mails, queue ? 'queued' : 'skipped');
          if (!queue) {
            skipped.inc(recorded);
            return { skipped: recorded };
          }
          if (recorded > 0) queue.wake();
          return { recorded };
        },
      },
      status: () => queue?.status() ?? null,
      close: () => queue?.close(),
      metrics: [skipped, ...(queue?.metrics ?? [])],
    };
  },
});
