// Process entry for the ledger worker: consumes the `ledger` topic (balance movements published by the
// sale and refund paths, keyed by partner; mark-paid applies its entry in its own transaction) and applies each entry_key once. A message that is not
// a ledger effect, or that Postgres rejects as data (a missing partner, a partner-program of another
// partner), is dead-lettered; anything else throws, and the redelivered chunk is harmless (entry_key).
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { effectConsumer } from '../../../shared/pipeline/effect-consumer.ts';
import { createApplyLedgerStep } from './apply.ts';

await runWorker({
  name: 'ledger-worker',
  topic: 'ledger',
  build: effectConsumer('ledger', createApplyLedgerStep),
});
