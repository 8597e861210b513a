// Process entry for the import worker (docs/importing.md): applies the `imports` topic's commands, one
// source page each (shared/importing/run.ts), in message order per import (the key is the import's id).
// A process of its own, not a consumer in another worker: a page may wait out a source's rate limit or a
// 429 for seconds to minutes, which would hold up the sales, ledger or mail of any worker it shared a
// loop with, and imports scale (and stop) independently of the tracking path.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { deadLetter, ok } from '../../../shared/pipeline/step-outcome.ts';
import { parseImportCommand } from '../../../shared/importing/commands.ts';
import type { ImportCommand } from '../../../shared/importing/commands.ts';
import { runCommand } from '../../../shared/importing/run.ts';
import type { RunResult } from '../../../shared/importing/run.ts';

// A test's crash by construction (test/integration/imports-crash.test.ts): the process kills itself with
// SIGKILL right after the page of this seq committed, before its Kafka offset is committed. Unset in use.
const crashAfterSeq = process.env.IMPORT_CRASH_AFTER_SEQ ? Number(process.env.IMPORT_CRASH_AFTER_SEQ) : null;

await runWorker({
  name: 'import-worker',
  topic: 'imports',
  async build(ctx) {
    const { cfg, log, sql } = ctx;
    // A page waiting for a source (its rate limit, a 429) stops waiting at SIGTERM: its command is left
    // uncommitted and delivered again after the restart, to whichever import worker then owns it.
    const stopping = new AbortController();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => stopping.abort());
    const deps = {
      sql,
      log,
      kafkaPrefix: cfg.kafkaPrefix,
      secretKey: cfg.importSecretKey,
      policy: cfg.webhooks,
      timeoutMs: cfg.importTimeoutMs,
      rateLimit: cfg.importRateLimit,
      stopping: stopping.signal,
    };
    const figures: Record<RunResult, number> = { applied: 0, completed: 0, stale: 0, failed: 0 };
    return {
      steps: {
        parse: (m) => {
          const cmd = parseImportCommand(m.value);
          return typeof cmd === 'string' ? deadLetter(cmd) : ok(cmd);
        },
        async apply(cmds: ImportCommand[]) {
          for (const cmd of cmds) {
            const result = await runCommand(deps, cmd);
            figures[result] += 1;
            if (crashAfterSeq !== null && cmd.seq === crashAfterSeq && result === 'applied')
              process.kill(process.pid, 'SIGKILL');
          }
          return {};
        },
      },
      status() {
        if (Object.values(figures).every((n) => n === 0)) return null;
        const s = { pages: { ...figures } };
        for (const k of Object.keys(figures) as RunResult[]) figures[k] = 0;
        return s;
      },
    };
  },
});
