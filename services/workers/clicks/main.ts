// Process entry for the click worker (enrichment + persistence). Scale out by starting more processes:
// they share the consumer group, and partitions bound the parallelism.
import { loadConfig } from '../../../shared/config.ts';
import { createLogger } from '../../../shared/logger.ts';
import { createSql } from '../../../shared/db/sql.ts';
import {
  BatchingProducer,
  connectProducer,
  createKafka,
  ensureTopics,
  runBatchConsumer,
} from '../../../shared/pipeline/kafka.ts';
import { topicName } from '../../../shared/contracts/topics.ts';
import { createUserAgentParser } from './enrich/user-agent.ts';
import { defaultGeoPaths, openGeo } from './enrich/geo.ts';
import { createEnrichClickStep } from './steps/enrich-click.ts';
import { createPersistClicksStep } from './steps/persist-clicks.ts';
import { createClickPipeline } from './pipeline.ts';
import { createLeadApplier } from './steps/apply-lead.ts';
import { createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { percentile } from '../../../shared/stats.ts';

const cfg = loadConfig();
const log = createLogger('click-worker', cfg.logLevel);
const sql = createSql(cfg.databaseUrl, Math.max(cfg.workerPartitionsConcurrency + 2, 4), 'svc-click-worker');

// Partitions for this month and the next two; re-checked daily.
const ensurePartitions = () =>
  sql`select ensure_click_event_partitions(now() - interval '1 day', now() + interval '2 months')`;
await ensurePartitions();
const housekeeping = setInterval(
  () => {
    ensurePartitions().catch((err) => log.error({ err }, 'partition upkeep failed'));
    sql`delete from cache_invalidations where created_at < now() - interval '1 hour'`.catch((err) =>
      log.error({ err }, 'cache_invalidations pruning failed'),
    );
  },
  6 * 3600 * 1000,
);

const defaults = defaultGeoPaths();
const geo = await openGeo({
  ipv4Path: cfg.geoIpv4Path === null ? defaults.ipv4Path : cfg.geoIpv4Path || null,
  ipv6Path: cfg.geoIpv6Path === null ? defaults.ipv6Path : cfg.geoIpv6Path || null,
  watch: true,
});

const kafka = createKafka(cfg, log);
await ensureTopics(kafka, cfg, log);
const producer = new BatchingProducer(await connectProducer(kafka), { lingerMs: 0, maxBatch: 1000 });
const leads = createCommandHandler(
  {
    sql,
    log,
    producer,
    topics: {
      deadLetter: topicName(cfg.kafkaPrefix, 'deadLetter'),
      ledger: topicName(cfg.kafkaPrefix, 'ledger'),
      notifications: topicName(cfg.kafkaPrefix, 'notifications'),
    },
  },
  createLeadApplier(),
);
const pipeline = createClickPipeline({
  leads,
  sql,
  log,
  producer,
  deadLetterTopic: topicName(cfg.kafkaPrefix, 'deadLetter'),
  enrich: createEnrichClickStep({ parseUserAgent: createUserAgentParser(), geo }),
  persist: createPersistClicksStep({ sql }),
});

const consumer = await runBatchConsumer({
  kafka,
  groupId: `${cfg.kafkaPrefix}click-worker`,
  topics: [topicName(cfg.kafkaPrefix, 'clicks')],
  chunkSize: cfg.workerChunkSize,
  partitionsConcurrency: cfg.workerPartitionsConcurrency,
  sessionTimeoutMs: cfg.kafkaSessionTimeoutMs,
  log,
  handle: pipeline.handle,
  onFatal: () => process.exit(1),
});
log.info({ group: `${cfg.kafkaPrefix}click-worker` }, 'click worker running');

// Status line every 10 s: throughput and pipeline lag (ingress accept → row committed).
let lastMessages = 0;
const status = setInterval(() => {
  const s = pipeline.stats;
  const lags = s.lagSamples.splice(0);
  if (s.messages === lastMessages) return;
  log.info(
    {
      messages: s.messages,
      perSecond: Math.round((s.messages - lastMessages) / 10),
      inserted: s.inserted,
      duplicates: s.duplicates,
      deadLetters: s.deadLetters,
      lagP50Ms: percentile(lags, 50),
      lagP99Ms: percentile(lags, 99),
    },
    'click worker status',
  );
  lastMessages = s.messages;
}, 10_000);

async function shutdown(signal: string): Promise<void> {
  log.info({ signal }, 'shutting down');
  clearInterval(status);
  clearInterval(housekeeping);
  await consumer.disconnect();
  await producer.close();
  geo.close();
  await sql.end({ timeout: 5 });
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
