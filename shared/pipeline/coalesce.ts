// Merges the chunks of several partitions submitted while a call runs into one call (one transaction),
// up to maxMessages; each submitter settles with the call that carried it. Why: docs/pipeline.md.
import type { ConsumedMessage } from './kafka.ts';

interface Submission {
  messages: ConsumedMessage[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * `concurrency` calls may run at once (1 by default: every waiting chunk joins the next call). With more, a
 * call takes one submission while another call could still start, and merges the waiting ones only into
 * the last call that can run.
 */
export function coalesce(
  handle: (messages: ConsumedMessage[]) => Promise<void>,
  maxMessages: number,
  concurrency = 1,
): (messages: ConsumedMessage[]) => Promise<void> {
  const queue: Submission[] = [];
  let running = 0;
  let scheduled = false;

  async function call(take: Submission[]): Promise<void> {
    try {
      await handle(take.length === 1 ? take[0]!.messages : take.flatMap((s) => s.messages));
      for (const s of take) s.resolve();
    } catch (err) {
      for (const s of take) s.reject(err);
    }
  }

  function start(): void {
    while (queue.length > 0 && running < concurrency) {
      const take: Submission[] = [queue.shift()!];
      let n = take[0]!.messages.length;
      const lastSlot = running + 1 === concurrency;
      while (lastSlot && queue.length > 0 && n + queue[0]!.messages.length <= maxMessages) {
        const next = queue.shift()!;
        take.push(next);
        n += next.messages.length;
      }
      running++;
      void call(take).then(() => {
        running--;
        start();
      });
    }
  }

  return (messages) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ messages, resolve, reject });
      if (scheduled || running >= concurrency) return;
      scheduled = true;
      // Let the other partitions of the same fetch, dispatched in this turn, join the first call.
      setImmediate(() => {
        scheduled = false;
        start();
      });
    });
}
