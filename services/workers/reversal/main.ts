// Process entry: the reversal worker (refunds topic).
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { commandStatus, createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { createRefundApplier } from './apply-refund.ts';

await runWorker({
  name: 'reversal-worker',
  topic: 'refunds',
  build: async ({ cfg, sql, log, producer, topics }) => {
    const handler = createCommandHandler(
      { sql, log, producer, topics },
      createRefundApplier({ kafkaPrefix: cfg.kafkaPrefix }),
    );
    return { handle: handler.handle, status: () => commandStatus(handler.stats) };
  },
});
