// Work a worker does on its own schedule rather than per Kafka message: the outbox relay, sweeps of rows
// whose time has come (commissions past their hold, webhook deliveries and mail due for a retry). A task
// runs one round at a time: again at once while it reports more work waiting, otherwise after its interval
// or as soon as `wake()` is called (a NOTIFY, a message that created work). A failed round is logged (an
// outage once every few seconds, without a stack) and retried with backoff up to the interval; the task
// never ends the process. `stop()` waits for the round in hand, so shutdown never cuts one in half.
import type { Logger } from '../logger.ts';
import { outageWarning } from './dependencies.ts';

/** A failed round is retried sooner than a task's interval, but at most this far apart. */
const MAX_BACKOFF_MS = 5_000;

export interface PeriodicTask {
  /** For the log lines: `<name> failed`. */
  name: string;
  /** The longest pause between two rounds when there is nothing to do. */
  intervalMs: number;
  /** One round of work; true when more is waiting (the next round starts at once). */
  run(): Promise<boolean>;
  /** The first round after one interval (or a `wake()`) rather than at once: a poll whose start did a first read. */
  delayFirst?: boolean;
}

export interface RunningTask {
  /** Starts the next round now (or right after the one in hand). */
  wake(): void;
  /** Resolves once the round in hand (if any) has ended; no round starts afterwards. */
  stop(): Promise<void>;
}

export function startPeriodic(task: PeriodicTask, log: Logger): RunningTask {
  const warn = outageWarning();
  let stopped = false;
  let woken = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  let sleeping: (() => void) | null = null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      sleeping = resolve;
      timer = setTimeout(resolve, ms);
    });

  async function loop(): Promise<void> {
    if (task.delayFirst) {
      await sleep(task.intervalMs);
      sleeping = null;
    }
    while (!stopped) {
      let more = false;
      woken = false;
      try {
        more = await task.run();
        failures = 0;
      } catch (err) {
        failures++;
        warn(log, err, `${task.name} failed; retrying`);
      }
      if (stopped) break;
      if (more && failures === 0) continue;
      // A wake() during the round means work arrived that the round may not have seen.
      if (woken && failures === 0) continue;
      const backoff =
        failures === 0 ? task.intervalMs : Math.min(task.intervalMs, MAX_BACKOFF_MS, 100 * 2 ** failures);
      await sleep(backoff);
      sleeping = null;
    }
  }
  const done = loop();

  return {
    wake() {
      woken = true;
      if (sleeping) {
        if (timer) clearTimeout(timer);
        sleeping();
      }
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      sleeping?.();
      await done;
    },
  };
}
