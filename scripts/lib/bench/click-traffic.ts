// The traffic of bench:clicks: the seeded program (partners and links named after the run), the click
// requests of each phase, the Kafka broker's warm-up, and the closed loop of phases (a) and (b).
import type { KafkaAdmin as Admin, KafkaClient as Kafka } from '../../../shared/pipeline/kafka.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { connectProducer } from '../../../shared/pipeline/kafka.ts';
import { int, latencySummary, runLoad } from './bench.ts';
import type { BenchRequest, LoadCounters } from './bench.ts';
import type { BenchControl } from './control.ts';

export const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
];

// ---------------------------------------------------------------------------------------------------
// Seed: one live program, `partners` partners, `links` links, all named after this run.

export interface Seed {
  programId: number;
  partnerProgramIds: number[];
  links: { id: number; shortLink: string }[];
}

export async function seedBench(
  sql: Sql,
  runId: string,
  counts: { partners: number; links: number },
): Promise<Seed> {
  return sql.begin(async (tx) => {
    const [ws] = await tx<{ id: string }[]>`
      insert into workspaces (name) values (${`Bench ${runId}`}) returning id`;
    const [program] = await tx<{ id: string }[]>`
      insert into programs (workspace_id, name, slug, status, cookie_window_days)
      values (${ws!.id}, 'Bench program', ${`bench-${runId}`}, 'live', 60) returning id`;
    const partnerRows = Array.from({ length: counts.partners }, (_, i) => ({
      workspace_id: ws!.id,
      name: `Bench partner ${i + 1}`,
      email: `partner${i + 1}.${runId}@bench.example`,
    }));
    const partners = await tx<{ id: string }[]>`
      insert into partners ${tx(partnerRows)} returning id`;
    const ppRows = partners.map((p) => ({ partner_id: p.id, program_id: program!.id, status: 'approved' }));
    const pps = await tx<{ id: string; partner_id: string }[]>`
      insert into partner_programs ${tx(ppRows)}
      returning id, partner_id`;
    const linkRows = Array.from({ length: counts.links }, (_, i) => {
      const pp = pps[i % pps.length]!;
      return {
        short_link: `bench_${runId}_${i + 1}`,
        program_id: program!.id,
        partner_id: pp.partner_id,
        partner_program_id: pp.id,
      };
    });
    const links = await tx<{ id: string; short_link: string }[]>`
      insert into referral_links ${tx(linkRows)}
      returning id, short_link`;
    return {
      programId: Number(program!.id),
      partnerProgramIds: pps.map((p) => Number(p.id)),
      links: links.map((l) => ({ id: Number(l.id), shortLink: l.short_link })),
    };
  });
}

export function clickRequests(seed: Seed, tag: 'b' | 'c' | 'd'): BenchRequest[] {
  return seed.links.map((l, i) => ({
    link: l.shortLink,
    body: JSON.stringify({
      affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
      page_url: `https://shop.example/bench/${tag}/products/${i + 1}`,
      user_agent: USER_AGENTS[i % USER_AGENTS.length],
    }),
  }));
}

/**
 * The clicks of an (e) round: every link with 50 landing pages, 10 referrer hosts and none, 5 user agents,
 * so that a chunk writes breakdown rows for several keys of each dimension, as real traffic does.
 */
export function costRequests(seed: Seed, tag: string): BenchRequest[] {
  const out: BenchRequest[] = [];
  for (const [i, l] of seed.links.entries()) {
    for (let v = 0; v < 11; v++) {
      const n = i * 11 + v;
      out.push({
        link: l.shortLink,
        body: JSON.stringify({
          affiliate_url: `https://shop.example/?aff=${l.shortLink}`,
          page_url: `https://shop.example/bench/${tag}/products/${n % 50}?utm_source=bench`,
          ...(v < 10 ? { referrer_url: `https://site${v}.example/post/${n}` } : {}),
          user_agent: USER_AGENTS[n % USER_AGENTS.length],
        }),
      });
    }
  }
  return out;
}

/**
 * A freshly started broker spends its first seconds of load compiling (JIT): in a first run it used more
 * CPU than the ingress. Idempotent sends of 25 messages, as the ingress makes them, to a topic of its own
 * for `seconds` bring it to the steady state a long-running broker is in.
 */
export async function warmKafka(
  control: BenchControl,
  kafka: Kafka,
  admin: Admin,
  topic: string,
  partitions: number,
  seconds: number,
): Promise<string> {
  try {
    // Then waited for: a busy broker may answer a new topic's metadata "This server does not host this
    // topic-partition" for a while.
    await control.retrying('creating the warm-up topic', 5, () =>
      admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: -1 }] }),
    );
    await waitForTopic(admin, topic, 30_000);
    const producer = await control.retrying('connecting the warm-up producer', 3, () =>
      connectProducer(kafka),
    );
    let sends = 0;
    let failures = 0;
    try {
      const value = 'x'.repeat(500);
      const deadline = Date.now() + seconds * 1000;
      while (Date.now() < deadline && !control.signal.aborted) {
        const messages = Array.from({ length: 25 }, (_, j) => ({ key: `w${sends}.${j}`, value }));
        try {
          await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
          sends++;
        } catch (err) {
          if (++failures > 10) throw err;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    } finally {
      await producer.disconnect();
    }
    await admin.deleteTopics({ topics: [topic] }).catch(() => {});
    return `${int(sends)} idempotent sends of 25 messages in ${seconds} s`;
  } catch (err) {
    if (control.signal.aborted) throw err;
    process.stderr.write(`Kafka warm-up failed: ${(err as Error).stack ?? String(err)}\n`);
    return `skipped (${(err as Error).message}); (b) may include the broker's JIT warm-up`;
  }
}

/** Until every partition of the topic has a leader (errors such as an unknown topic count as not yet). */
async function waitForTopic(admin: Admin, topic: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await admin
      .fetchTopicMetadata({ topics: [topic] })
      .then(
        (m) =>
          (m.topics[0]?.partitions ?? []).length > 0 && m.topics[0]!.partitions.every((p) => p.leader >= 0),
      )
      .catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`topic ${topic} has no leaders after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface Closed {
  /** The measured part: its slices' active time, answers and response times together. */
  seconds: number;
  answered: number;
  accepted: number;
  slices: number;
  latencyMs: { p50: number; p99: number; max: number };
  /** 200 + success per second in the measured part. */
  rate: number;
}

export interface ClosedLoopOptions {
  connections: number;
  signal: AbortSignal;
  warmupSeconds: number;
  /** The measured part's length. */
  loadSeconds: number;
}

/**
 * Closed loop: a short probe, a warm-up of about WARMUP_SECONDS, then about LOAD_SECONDS measured. Each
 * run is a fixed number of requests sized from the previous run's rate, so no request is ever abandoned;
 * the measured part is made of up to five such runs (slices), until their active time reaches about
 * LOAD_SECONDS, because a warm-up's rate can underestimate a warmer process by half.
 */
export async function closedLoop(
  o: ClosedLoopOptions,
  url: string,
  requests: BenchRequest[],
  warmCounters: LoadCounters,
  counters: LoadCounters,
  clickIds: string[] | undefined,
  beforeMeasured: () => void,
): Promise<Closed> {
  const { connections, signal, warmupSeconds: WARMUP_SECONDS, loadSeconds: LOAD_SECONDS } = o;
  const common = { url, requests, connections, signal, clickIds };
  const floor = connections * 20;
  const size = (rate: number, seconds: number) =>
    Math.max(floor, Math.min(20_000_000, Math.round(rate * seconds)));
  const probe = await runLoad({ ...common, amount: floor, maxMs: 30_000, counters: warmCounters });
  signal.throwIfAborted();
  const warm = await runLoad({
    ...common,
    amount: size(probe.tailRate, WARMUP_SECONDS),
    maxMs: WARMUP_SECONDS * 4_000 + 20_000,
    counters: warmCounters,
  });
  signal.throwIfAborted();
  beforeMeasured();
  const latencies: number[] = [];
  let rate = warm.tailRate;
  const total = { seconds: 0, answered: 0, accepted: 0, slices: 0 };
  while (total.seconds < LOAD_SECONDS * 0.9 && total.slices < 5) {
    const remaining = LOAD_SECONDS - total.seconds;
    const run = await runLoad({
      ...common,
      amount: size(rate, remaining),
      maxMs: remaining * 3_000 + 20_000,
      counters,
      latencies,
    });
    signal.throwIfAborted();
    total.seconds += run.seconds;
    total.answered += run.answered;
    total.accepted += run.accepted;
    total.slices++;
    rate = run.answered / Math.max(run.seconds, 0.001);
  }
  return {
    ...total,
    latencyMs: latencySummary(latencies),
    rate: total.accepted / Math.max(total.seconds, 0.001),
  };
}
