// Process entry: the processor worker (processor-events topic): Stripe events applied with the sale and
// refund appliers of the attribution and reversal workers, once per (program, event id).
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { commandStatus, createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { createSaleApplier } from '../attribution/apply-sale.ts';
import { createRefundApplier } from '../reversal/apply-refund.ts';
import { createProcessorEventApplier } from './apply-event.ts';

await runWorker({
  name: 'processor-worker',
  topic: 'processorEvents',
  // Stripe has its 200 once the event is in Kafka: nothing waits for the worker.
  batchFetches: true,
  build: async ({ cfg, sql, log, producer, topics }) => {
    const handler = createCommandHandler(
      { sql, log, producer, topics },
      createProcessorEventApplier(
        createSaleApplier({ recentClickWaitMs: 10_000, kafkaPrefix: cfg.kafkaPrefix }),
        createRefundApplier({ kafkaPrefix: cfg.kafkaPrefix }),
      ),
    );
    return { handle: handler.handle, status: () => commandStatus(handler.stats) };
  },
});
