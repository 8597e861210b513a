// Process entry for the click worker: clicks are enriched and persisted, leads (on the same topic, behind
// their click) applied as commands. It also owns click_event partition upkeep and the pruning of
// cache_invalidations and click_client_events.
import { runWorker } from '../../../shared/pipeline/worker-runtime.ts';
import { createCommandHandler } from '../../../shared/pipeline/command-handler.ts';
import { createUserAgentParser } from './enrich/user-agent.ts';
import { defaultGeoPaths, openGeo } from './enrich/geo.ts';
import { createEnrichClickStep } from './steps/enrich-click.ts';
import { createPersistClicksStep } from './steps/persist-clicks.ts';
import { createLeadApplier } from './steps/apply-lead.ts';
import { createClickSteps } from './pipeline.ts';
import { waitForDependency } from '../../../shared/pipeline/dependencies.ts';
import { isConnectionError } from '../../../shared/db/sql.ts';
import { loadIpHasher } from '../../../shared/db/instance-keys.ts';

await runWorker({
  name: 'click-worker',
  label: 'click worker',
  topic: 'clicks',
  // A transaction per partition at a time, as many as it consumes at once: one merged transaction left a
  // core idle while a backlog drained (bench:clicks drained 13,000 rows/s that way, 18,000 before).
  concurrentChunks: (cfg) => cfg.workerPartitionsConcurrency,
  build: async ({ cfg, sql, log, producer, topics, periodic }) => {
    // Partitions for this month and the next two; re-checked every 6 hours.
    const ensurePartitions = () =>
      sql`select ensure_click_event_partitions(now() - interval '1 day', now() + interval '2 months')`;
    // Postgres may go away between the runtime's check and here: wait for it rather than exit.
    await waitForDependency(log, 'postgres (click_event partitions)', ensurePartitions, {
      retryable: isConnectionError,
    });
    // The first round after 6 hours: the partitions were ensured just now, and nothing is due yet.
    periodic({
      name: 'click housekeeping',
      intervalMs: 6 * 3600 * 1000,
      delayFirst: true,
      run: async () => {
        await Promise.all([
          ensurePartitions().catch((err) => log.error({ err }, 'partition upkeep failed')),
          sql`delete from cache_invalidations where created_at < now() - interval '1 hour'`.catch((err) =>
            log.error({ err }, 'cache_invalidations pruning failed'),
          ),
          // Client event ids dedupe retries, which come within seconds: 30 days is plenty.
          sql`delete from click_client_events where created_at < now() - interval '30 days'`.catch((err) =>
            log.error({ err }, 'click_client_events pruning failed'),
          ),
        ]);
        return false;
      },
    });

    // The GeoIP files are watched: a replaced database is picked up without a restart.
    const defaults = defaultGeoPaths();
    const geo = await openGeo({
      ipv4Path: cfg.geoIpv4Path === null ? defaults.ipv4Path : cfg.geoIpv4Path || null,
      ipv6Path: cfg.geoIpv6Path === null ? defaults.ipv6Path : cfg.geoIpv6Path || null,
      watch: true,
    });

    return {
      steps: createClickSteps({
        leads: createCommandHandler(
          { sql, log, producer, topics },
          createLeadApplier({ kafkaPrefix: cfg.kafkaPrefix }),
        ),
        enrich: createEnrichClickStep({
          parseUserAgent: createUserAgentParser(),
          geo,
          hashIp: await loadIpHasher(sql),
        }),
        persist: createPersistClicksStep({ sql, breakdown: cfg.rollupBreakdown }),
      }),
      close: () => geo.close(),
    };
  },
});
