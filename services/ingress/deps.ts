// What the ingress routes receive from the process that hosts them.
import type { BatchingProducer } from '../../shared/pipeline/kafka.ts';
import type { Snowflake } from '../../shared/domain/ids.ts';
import type { Sql } from '../../shared/db/sql.ts';
import type { OutcomeWaiter } from '../../shared/pipeline/outcomes.ts';
import type { ConsumerLiveness } from '../../shared/pipeline/liveness.ts';
import type { TrackingCache } from './tracking-cache.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface IngressDeps {
  sql: Sql;
  cache: TrackingCache;
  producer: BatchingProducer;
  snowflake: Snowflake;
  waiter: OutcomeWaiter;
  /** Which command partitions a live worker owns: a command nobody owns is answered 503 early. */
  liveness: ConsumerLiveness;
  topics: { clicks: string; sales: string; refunds: string; processorEvents: string };
  commandDeadlineMs: number;
  /** Tell bots and prefetches apart (default true; CLICK_CLASSIFIER=false only for bench:clicks). */
  classifyClicks?: boolean;
  /** Per-IP limits on the browser-facing routes (click, lead). */
  rateLimiter: RateLimiter;
}
