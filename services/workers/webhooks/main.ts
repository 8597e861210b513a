// Process entry for the webhook worker (docs/webhooks.md): consumes the `webhook-events` topic in its own
// consumer group (more workers share its partitions), stores each event once and fans it out to the
// matching endpoints as delivery rows (fan-out.ts), and delivers them with the delivery queue
// (shared/delivery; its store deliveries.ts, its transport send.ts): due rows are claimed at once on new
// deliveries, freed slots and the API's NOTIFY (a retry asked for, an endpoint enabled), and every
// WEBHOOK_POLL_MS for retries whose time has come. Every delivery waiting for a retry survives any restart
// of any process: only Postgres holds it.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { deadLetter, ok } from '../../../shared/pipeline/step-outcome.ts';
import { startDeliveryQueue } from '../../../shared/delivery/queue.ts';
import type { WebhookEvent } from '../../../shared/contracts/webhook-events.ts';
import { createFanOutStep, parseWebhookEvent } from './fan-out.ts';
import { createDeliveryStore } from './deliveries.ts';
import { createSender, httpDelivery } from './send.ts';
import { pruneDeliveryLog } from './prune.ts';

await runWorker({
  name: 'webhook-worker',
  topic: 'webhookEvents',
  // Nothing waits on the worker's answer: fetches gather up to 200 ms of events into larger chunks.
  batchFetches: true,
  async build({ cfg, log, sql, periodic }) {
    const w = cfg.webhooks;
    if (w.allowPrivate)
      log.info('WEBHOOK_ALLOW_PRIVATE=true: webhooks may go to http:// and private or loopback addresses');
    const fanOut = createFanOutStep({ sql });
    const queue = await startDeliveryQueue(
      { sql, log, periodic },
      {
        name: 'webhooks',
        store: createDeliveryStore({ sql, log, cfg }),
        transport: httpDelivery(
          createSender({
            policy: { allowPrivate: w.allowPrivate, resolve: w.resolve },
            timeoutMs: w.timeoutMs,
            maxSockets: w.endpointConcurrency,
          }),
        ),
        policy: { scheduleMs: w.retryScheduleMs, jitter: 0.1 },
        concurrency: w.concurrency,
        // Past the attempt's own bound, with room for a slow flush: a live worker's claim never expires under it.
        leaseMs: w.timeoutMs + w.leaseMarginMs,
        pollMs: w.pollMs,
        // Within the shutdown watchdog (9 s): the rest is released for the next worker.
        graceMs: Math.min(5_000, w.timeoutMs),
        wakeOn: 'svc_webhook_due',
      },
    );
    periodic({
      name: 'webhook log pruning',
      intervalMs: 3_600_000,
      run: () => pruneDeliveryLog(sql, w.retentionDays),
    });

    return {
      steps: {
        parse: (message) => {
          const event = parseWebhookEvent(message.value);
          return typeof event === 'string' ? deadLetter(event) : ok(event);
        },
        applyStep: 'fan-out',
        async apply(events: WebhookEvent[]) {
          const r = await fanOut(events);
          if (r.deliveries > 0) queue.wake();
          return r;
        },
      },
      metrics: queue.metrics,
      status: () => queue.status(),
      close: () => queue.close(),
    };
  },
});
