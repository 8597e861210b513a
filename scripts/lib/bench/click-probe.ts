// What bench:clicks measures between its phases: the CPU each process spent per phase (from /proc), the
// clicks persisted (the seeded links' counters), and the click worker's backlog in Kafka (committed offsets
// against the topic's end), polled for the progress line and waited on until a phase's clicks are rows.
import type { KafkaAdmin as Admin } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { cpuSnapshot, cpuUsage } from './bench.ts';
import type { CpuSnapshot, CpuUsage } from './bench.ts';
import type { BenchControl } from './control.ts';
import type { ClickBenchOutput } from './click-output.ts';

export class ClickBenchProbe {
  /** The processes whose CPU is measured, by kind (several pids: replicas, cluster nodes). */
  readonly pids: Record<string, number | number[] | undefined>;
  readonly cpuPhases: { phase: string; usage: CpuUsage }[] = [];
  /** The Kafka the click worker reads now: the stack's, or (d)'s cluster. */
  admin: Admin;
  private readonly o: {
    sql: Sql;
    linkIds: number[];
    topic: string;
    groupId: string;
    cores: number;
    control: BenchControl;
    output: ClickBenchOutput;
  };

  constructor(
    o: ClickBenchProbe['o'] & { admin: Admin; pids: Record<string, number | number[] | undefined> },
  ) {
    this.o = o;
    this.admin = o.admin;
    this.pids = o.pids;
  }

  snap(): CpuSnapshot {
    const { pids } = this;
    return cpuSnapshot({ self: pids.bench, ...Object.fromEntries(Object.entries(pids).slice(1)) });
  }

  /** Records the CPU since `from` as the phase's. */
  cpuPhase(phase: string, from: CpuSnapshot): void {
    const usage = cpuUsage(from, this.snap(), this.o.cores);
    // Shorter than a second is too few clock ticks to say anything.
    if (usage.seconds >= 1) this.cpuPhases.push({ phase, usage });
  }

  async persistedCount(): Promise<number> {
    const { sql, linkIds } = this.o;
    const [r] = await sql<{ n: string }[]>`
      select coalesce(sum(clicks), 0)::text as n from referral_links where id = any(${linkIds}::bigint[])`;
    return Number(r!.n);
  }

  async kafkaBacklog(): Promise<number> {
    const { topic, groupId } = this.o;
    const [high, committed] = await Promise.all([
      this.admin.fetchTopicOffsets(topic),
      this.admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const done = new Map<number, number>();
    for (const p of committed[0]?.partitions ?? []) done.set(p.partition, Number(p.offset));
    let backlog = 0;
    for (const p of high) backlog += Number(p.high) - Math.max(done.get(p.partition) ?? -1, Number(p.low));
    return backlog;
  }

  /** Polls the persisted count and the backlog every second for the progress line, until the teardown. */
  startPolling(): void {
    const { control, output } = this.o;
    let polling = false;
    const poller = setInterval(() => {
      if (polling || control.tearingDown) return;
      polling = true;
      Promise.all([this.persistedCount(), this.kafkaBacklog()])
        .then(([p, b]) => {
          output.progress.persisted = p;
          output.progress.kafkaLag = b;
        })
        .catch(() => {})
        .finally(() => (polling = false));
    }, 1000);
    poller.unref();
    control.onCleanup('progress poller', async () => clearInterval(poller));
  }

  /**
   * Waits until the worker's committed offsets reach the end of the clicks topic: it commits a chunk's
   * offsets only after its Postgres transaction committed, so then every produced click is a row.
   */
  async waitDrained(timeoutMs: number): Promise<{ at: number; timedOut: boolean }> {
    const { control, output } = this.o;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      control.signal.throwIfAborted();
      const backlog = await this.kafkaBacklog();
      output.progress.kafkaLag = backlog;
      if (backlog === 0) {
        const at = Date.now();
        output.progress.persisted = await this.persistedCount();
        return { at, timedOut: false };
      }
      if (Date.now() > deadline) return { at: Date.now(), timedOut: true };
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits for the backlog there is now to drain: a minute, plus 2 ms per message up to `maxExtraMs`. */
  async drainBacklog(maxExtraMs: number): Promise<{ at: number; timedOut: boolean }> {
    const backlog = await this.kafkaBacklog();
    return this.waitDrained(60_000 + Math.min(maxExtraMs, backlog * 2));
  }
}
