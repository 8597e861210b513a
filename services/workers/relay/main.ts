// Process entry for the outbox relay: publishes the outbox's rows (webhook events, mail) to Kafka after
// their transactions committed (relay.ts). It wakes on the outbox's NOTIFY (sent on commit) and polls every
// OUTBOX_POLL_MS besides, for a notification lost to a reconnect. Several relays may run: each takes rows the
// others do not hold.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { createRelayStep } from './relay.ts';

await runWorker({
  name: 'outbox-relay',
  async build({ cfg, log, sql, producer, topics, periodic }) {
    const relay = createRelayStep({ sql, producer, topics, batchSize: 500 });
    let relayed = 0;
    const task = periodic({
      name: 'outbox relay',
      intervalMs: cfg.outboxPollMs,
      async run() {
        const r = await relay();
        relayed += r.relayed;
        return r.more;
      },
    });
    // postgres.js re-listens after a reconnect; the poll covers the gap.
    await sql
      .listen('svc_outbox', () => task.wake())
      .catch((err: unknown) => log.warn({ err }, 'outbox LISTEN failed; relaying on the poll only'));
    return {
      status() {
        if (relayed === 0) return null;
        const s = { relayed };
        relayed = 0;
        return s;
      },
    };
  },
});
