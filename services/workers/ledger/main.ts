// Process entry for the ledger worker: applies the balance movements of the `ledger` topic, each
// entry_key once; an effect that is not a ledger entry or names rows that do not exist is dead-lettered.
// It also runs the approval sweep (pending commissions past payable_at → approved; approval-sweep.ts): the
// ledger worker is the process that owns commissions' money states, and a sweep needs no process of its own.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { effectConsumer } from '../../../shared/pipeline/effect-consumer.ts';
import { createApplyLedgerStep } from './apply.ts';
import { createApprovalSweep } from './approval-sweep.ts';

const consumeLedger = effectConsumer('ledger', createApplyLedgerStep);

await runWorker({
  name: 'ledger-worker',
  topic: 'ledger',
  // Balance movements: every caller had its answer before they were produced.
  batchFetches: true,
  async build(ctx) {
    const parts = await consumeLedger(ctx);
    const sweep = createApprovalSweep({ sql: ctx.sql, kafkaPrefix: ctx.cfg.kafkaPrefix, batchSize: 500 });
    let approved = 0;
    if (ctx.cfg.approvalSweepMs > 0) {
      ctx.periodic({
        name: 'approval sweep',
        intervalMs: ctx.cfg.approvalSweepMs,
        async run() {
          const round = await sweep();
          approved += round.approved;
          return round.more;
        },
      });
    }
    return {
      ...parts,
      status() {
        const s = parts.status?.() ?? null;
        if (approved === 0) return s;
        const withSweep = { ...s, approved };
        approved = 0;
        return withSweep;
      },
    };
  },
});
