// Process entry for the ledger worker: applies the balance movements of the `ledger` topic, each
// entry_key once; an effect that is not a ledger entry or names rows that do not exist is dead-lettered.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { effectConsumer } from '../../../shared/pipeline/effect-consumer.ts';
import { createApplyLedgerStep } from './apply.ts';

await runWorker({
  name: 'ledger-worker',
  topic: 'ledger',
  // Balance movements: every caller had its answer before they were produced.
  batchFetches: true,
  build: effectConsumer('ledger', createApplyLedgerStep),
});
