// The pipeline's Prometheus metrics, defined once per process and registered into the process's registry
// (shared/http/ops.ts createRegistry) by registerPipelineMetrics. The modules that measure (the producer,
// the consumer, the dead letters, the command handler, the worker runtime) import them from here, so no
// registry has to be passed through their signatures. Label values are bounded: topics and steps are the
// project's own, partitions are bounded by the topic, and free-text reasons go through boundedReason.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metric, Registry } from 'prom-client';

export const produceSeconds = new Histogram({
  name: 'svc_produce_seconds',
  help: 'Time from a send to the broker acknowledgement (acks=all), per message; result ok or error',
  labelNames: ['topic', 'result'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [],
});

/** One partition's lag: its end offset less the offset after the consumer's last committed chunk. */
export interface PartitionLag {
  topic: string;
  partition: number;
  messages: number;
}

/** Each running consumer's reading of its partitions' lag (shared/pipeline/kafka-consumer.ts). */
const lagSources = new Set<() => Promise<PartitionLag[]>>();

/**
 * Adds a consumer's lag to svc_consumer_lag_messages until the returned function is called. `read` is
 * asked at each scrape and answers promptly (its last reading when the end offsets are not to be had).
 */
export function addLagSource(read: () => Promise<PartitionLag[]>): () => void {
  lagSources.add(read);
  return () => void lagSources.delete(read);
}

// Read when scraped: the end offsets are asked of the partitions' leaders then, so the gauge is never older
// than the scrape, and only the partitions a consumer owns now have a series.
export const consumerLag = new Gauge({
  name: 'svc_consumer_lag_messages',
  help: "Messages behind the partition's end offset after the last committed chunk, read when scraped",
  labelNames: ['topic', 'partition'] as const,
  registers: [],
  async collect() {
    const readings = await Promise.all([...lagSources].map((read) => read()));
    this.reset();
    for (const { topic, partition, messages } of readings.flat())
      this.set({ topic, partition: String(partition) }, messages);
  },
});

export const chunkRetries = new Counter({
  name: 'svc_chunk_retries_total',
  help: 'Chunks that failed with an infrastructure error and were retried',
  labelNames: ['topic'] as const,
  registers: [],
});

export const pipelineLag = new Histogram({
  name: 'svc_pipeline_lag_seconds',
  help: "From the message's timestamp (the ingress accepted it) to the worker's commit of its chunk",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [],
});

export const deadLetters = new Counter({
  name: 'svc_dead_letters_total',
  help: 'Messages dead-lettered, by source topic, step and (bounded) reason',
  labelNames: ['topic', 'step', 'reason'] as const,
  registers: [],
});

export const commandOutcomes = new Counter({
  name: 'svc_command_outcomes_total',
  help: 'Command outcomes committed (lead, sale, refund, processor event), by status code and reason',
  labelNames: ['kind', 'status', 'reason'] as const,
  registers: [],
});

const ALL: [string, Metric][] = [
  ['svc_produce_seconds', produceSeconds],
  ['svc_consumer_lag_messages', consumerLag],
  ['svc_chunk_retries_total', chunkRetries],
  ['svc_pipeline_lag_seconds', pipelineLag],
  ['svc_dead_letters_total', deadLetters],
  ['svc_command_outcomes_total', commandOutcomes],
];

/** Adds the pipeline metrics to a process's registry (once; a second call is a no-op). */
export function registerPipelineMetrics(registry: Registry): void {
  for (const [name, m] of ALL) if (!registry.getSingleMetric(name)) registry.registerMetric(m);
}

const MAX_REASONS = 50;
const seenReasons = new Set<string>();

/**
 * A reason as a label value: numbers and quoted values removed (`Key (link_id)=(123)` → `Key (link_id)=(#)`),
 * at most 80 characters, and at most 50 distinct values per process (later ones are `other`).
 */
export function boundedReason(reason: string): string {
  const r = reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80);
  if (seenReasons.has(r)) return r;
  if (seenReasons.size >= MAX_REASONS) return 'other';
  seenReasons.add(r);
  return r;
}

/**
 * The ingress link cache's lookups (`result` hit or miss; the hit ratio is hit / (hit + miss)), read from
 * the cache's own counters at each scrape.
 */
export function registerLinkCacheMetrics(
  registry: Registry,
  stats: () => { hits: number; misses: number },
): void {
  const reported = { hit: 0, miss: 0 };
  new Counter({
    name: 'svc_link_cache_lookups_total',
    help: 'Tracking cache lookups at the ingress (links, programs, tokens), by result (hit, miss)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const s = stats();
      this.inc({ result: 'hit' }, s.hits - reported.hit);
      this.inc({ result: 'miss' }, s.misses - reported.miss);
      reported.hit = s.hits;
      reported.miss = s.misses;
    },
  });
}

/** The labels of a committed command outcome: its kind, status code and `status` field or error string. */
export function outcomeLabels(
  kind: string,
  answer: { statusCode: number; body: Record<string, unknown> },
): { kind: string; status: string; reason: string } {
  const b = answer.body;
  const reason =
    typeof b.status === 'string'
      ? b.status
      : typeof b.error === 'string'
        ? b.error
        : String(answer.statusCode);
  return { kind, status: String(answer.statusCode), reason: boundedReason(reason) };
}
