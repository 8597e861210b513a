// One transaction for the chunks of several partitions. kafkajs hands each partition's batch to its own
// eachBatch call (partitionsConsumedConcurrently of them at once); a command worker that applied each in
// its own transaction would commit several small transactions per fetch, and those serialise anyway on the
// rows every command touches (the program's daily rollup, a partner's balance). `coalesce` merges the
// chunks submitted while one call is running (or within the same turn of the event loop) into the next
// call, up to `maxMessages`.
//
// Each submitter settles with the call that carried its messages: it resolves only once they are applied,
// and rejects with that call's error (its consumer retries, and the retry merges again). A partition
// submits its next chunk only after the previous one settled, so per-partition order holds, and offsets
// are still committed only for applied messages.
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
