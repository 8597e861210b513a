// Process entry: the attribution and commission worker (sales topic).
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { commandStatus, createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { createSaleApplier } from './apply-sale.ts';

await runWorker({
  name: 'attribution-worker',
  topic: 'sales',
  build: async ({ sql, log, producer, topics }) => {
    const handler = createCommandHandler({ sql, log, producer, topics }, createSaleApplier());
    return { handle: handler.handle, status: () => commandStatus(handler.stats) };
  },
});
