// Process entry: the attribution and commission worker (sales topic).
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { commandStatus, createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { createSaleApplier } from './apply-sale.ts';

await runWorker({
  name: 'attribution-worker',
  topic: 'sales',
  build: async ({ cfg, sql, log, producer, topics }) => {
    // The wait for a recent click runs before the chunk's transaction but still between two heartbeats:
    // bounded by half the session timeout, so it never costs the partition (a rebalance, a second apply).
    const recentClickWaitMs = Math.min(10_000, Math.floor(cfg.kafkaSessionTimeoutMs / 2));
    const handler = createCommandHandler(
      { sql, log, producer, topics },
      createSaleApplier({ recentClickWaitMs, kafkaPrefix: cfg.kafkaPrefix }),
    );
    return { handle: handler.handle, status: () => commandStatus(handler.stats) };
  },
});
