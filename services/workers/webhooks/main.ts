// Process entry for the webhook worker (docs/webhooks.md): consumes the `webhook-events` topic in its own
// consumer group (more workers share its partitions), stores each event once and fans it out to the
// matching endpoints as delivery rows (fan-out.ts), and delivers them with retries held in Postgres
// (deliver.ts): a periodic task claims due rows, woken at once by new deliveries and freed slots, and polls
// every WEBHOOK_POLL_MS for retries whose time has come. Every delivery waiting for a retry survives any
// restart of any process: only Postgres holds it.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { applyIsolatingPoison, writeDeadLetters } from '../../../shared/pipeline/dead-letters.ts';
import type { DeadLetter } from '../../../shared/pipeline/dead-letters.ts';
import type { ConsumedMessage } from '../../../shared/pipeline/kafka.ts';
import type { WebhookEvent } from '../../../shared/contracts/webhook-events.ts';
import { createFanOutStep, parseWebhookEvent } from './fan-out.ts';
import { createDeliverer } from './deliver.ts';
import { createSender } from './send.ts';
import { pruneDeliveryLog } from './prune.ts';

await runWorker({
  name: 'webhook-worker',
  topic: 'webhookEvents',
  // Nothing waits on the worker's answer: fetches gather up to 200 ms of events into larger chunks.
  batchFetches: true,
  async build({ cfg, log, sql, producer, topics, periodic }) {
    const w = cfg.webhooks;
    if (w.allowPrivate)
      log.info('WEBHOOK_ALLOW_PRIVATE=true: webhooks may go to http:// and private or loopback addresses');
    const fanOut = createFanOutStep({ sql });
    const sender = createSender({
      policy: { allowPrivate: w.allowPrivate, resolve: w.resolve },
      timeoutMs: w.timeoutMs,
      maxSockets: w.endpointConcurrency,
    });
    const deliverer = createDeliverer({ sql, log, cfg, sender });
    const task = periodic({ name: 'webhook delivery', intervalMs: w.pollMs, run: deliverer.claim });
    deliverer.onSlotFree(() => task.wake());
    // A retry asked for through the API, an endpoint enabled: due at once rather than at the next poll.
    await sql
      .listen('svc_webhook_due', () => task.wake())
      .catch((err: unknown) => log.warn({ err }, 'webhook LISTEN failed; polling only'));
    periodic({
      name: 'webhook log pruning',
      intervalMs: 3_600_000,
      run: () => pruneDeliveryLog(sql, w.retentionDays),
    });
    let fanned = { events: 0, duplicates: 0, deliveries: 0, deadLetters: 0 };

    async function handle(messages: ConsumedMessage[]): Promise<void> {
      const dead: DeadLetter[] = [];
      const valid: { value: WebhookEvent; message: ConsumedMessage }[] = [];
      for (const message of messages) {
        const event = parseWebhookEvent(message.value);
        if (typeof event === 'string') dead.push({ message, step: 'parse', reason: event });
        else valid.push({ value: event, message });
      }
      const r = await applyIsolatingPoison(valid, fanOut, dead, log, 'fan-out');
      await writeDeadLetters({ sql, producer, deadLetterTopic: topics.deadLetter, log }, dead);
      fanned = {
        events: fanned.events + r.events,
        duplicates: fanned.duplicates + r.duplicates,
        deliveries: fanned.deliveries + r.deliveries,
        deadLetters: fanned.deadLetters + dead.length,
      };
      if (r.deliveries > 0) task.wake();
    }

    return {
      handle,
      metrics: deliverer.metrics,
      status() {
        const d = deliverer.status();
        if (d === null && fanned.events === 0 && fanned.deadLetters === 0) return null;
        const s = { ...fanned, ...(d ?? {}) };
        fanned = { events: 0, duplicates: 0, deliveries: 0, deadLetters: 0 };
        return s;
      },
      // After the consumer and the claiming task stopped: attempts in flight get a few seconds, the rest
      // are released for the next worker (the shutdown watchdog is at 9 s).
      close: () => deliverer.close(Math.min(5_000, w.timeoutMs)),
    };
  },
});
