// Merges the chunks of several partitions submitted while a call runs into one call (one transaction),
// up to maxMessages; each submitter settles with the call that carried it. Why: docs/pipeline.md.
import type { ConsumedMessage } from './kafka.ts';

interface Submission {
  messages: ConsumedMessage[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

export function coalesce(
  handle: (messages: ConsumedMessage[]) => Promise<void>,
  maxMessages: number,
): (messages: ConsumedMessage[]) => Promise<void> {
  const queue: Submission[] = [];
  let running = false;

  async function drain(): Promise<void> {
    while (queue.length > 0) {
      const take: Submission[] = [queue.shift()!];
      let n = take[0]!.messages.length;
      while (queue.length > 0 && n + queue[0]!.messages.length <= maxMessages) {
        const next = queue.shift()!;
        take.push(next);
        n += next.messages.length;
      }
      try {
        await handle(take.length === 1 ? take[0]!.messages : take.flatMap((s) => s.messages));
        for (const s of take) s.resolve();
      } catch (err) {
        for (const s of take) s.reject(err);
      }
    }
    running = false;
  }

  return (messages) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ messages, resolve, reject });
      if (running) return;
      running = true;
      // Let the other partitions of the same fetch, dispatched in this turn, join the first call.
      setImmediate(() => void drain());
    });
}
