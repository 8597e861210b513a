// Configuration, read from the environment once at boot and validated as a whole.
// Modules receive the slice they need (Pick<Config, ...>) and never read process.env themselves.
import { isIP } from 'node:net';
import { loadMailConfig } from './config-mail.ts';
import type { MailConfig } from './config-mail.ts';
import { loadSignInConfig } from './config-sign-in.ts';
import type { SignInConfig } from './config-sign-in.ts';
import { loadImportConfig } from './config-import.ts';
import type { ImportConfig } from './config-import.ts';

export interface Config extends MailConfig, SignInConfig, ImportConfig {
  /** postgres://... of the system of record. */
  databaseUrl: string;
  databasePoolSize: number;
  /**
   * How long a new Postgres connection may take to be ready (TCP, start-up, authentication). A Postgres
   * that accepts the connection but does not answer (restarting after a crash, still recovering) is then
   * unreachable, answered 503 at once, not a request hung for seconds.
   */
  databaseConnectTimeoutMs: number;
  /** host:port list of Kafka bootstrap brokers. */
  kafkaBrokers: string[];
  kafkaClientId: string;
  /** Prepended to every topic and consumer-group name, so several stacks can share one cluster. */
  kafkaPrefix: string;
  /** Partitions of the clicks topic when the project creates it; bounds click-worker parallelism. */
  clickPartitions: number;
  /** Partitions of the sales, refunds, ledger and notifications topics. */
  commandPartitions: number;
  /**
   * Replication factor of the topics the project creates; null: the broker's default.replication.factor.
   * A three-broker cluster: 3 (docs/scaling.md).
   */
  kafkaReplicationFactor: number | null;
  /** min.insync.replicas of the topics the project creates; null: the broker's default. A cluster: 2. */
  kafkaMinInsyncReplicas: number | null;
  /** How long the ingress waits for a worker's answer to a lead, sale or refund before a 503. */
  commandDeadlineMs: number;
  /** When the ingress falls back to reading an outcome row (a NOTIFY lost to a reconnect). */
  outcomePollMs: number;
  httpHost: string;
  httpPort: number;
  /**
   * Listen with SO_REUSEPORT (REUSE_PORT=true): several web processes on one host share the port and the
   * kernel spreads connections between them (`npm start -- --replicas N`; docs/scaling.md).
   */
  httpReusePort: boolean;
  /** Port of the operations server (/healthz, /readyz, /metrics); null: none. Never the public port. */
  opsPort: number | null;
  /** Fastify trustProxy: which proxies may set X-Forwarded-For. Default: loopback only. */
  trustProxy: boolean | string | string[];
  /** Largest accepted request body, bytes. */
  bodyLimit: number;
  logLevel: string;
  /** How long the ingress gathers messages before one Kafka send (0 = the current event-loop turn). */
  producerLingerMs: number;
  producerMaxBatch: number;
  /**
   * Longest wait for Kafka's acknowledgement of a produce before the caller gets 503 + Retry-After (the
   * tracking routes and webhooks); also how long a send may wait while the broker is unreachable.
   */
  produceTimeoutMs: number;
  /** A tracking or webhook request with no answer after this is answered 503 (installAnswerBound). */
  answerTimeoutMs: number;
  /** How often the ingress polls the cache-invalidation log for link/program changes. */
  cachePollMs: number;
  /** Upper bound on the age of a cached link even without an invalidation. */
  cacheTtlMs: number;
  geoIpv4Path: string | null;
  geoIpv6Path: string | null;
  /** Rows per Postgres transaction in the click worker. */
  workerChunkSize: number;
  workerPartitionsConcurrency: number;
  /**
   * Kafka group session timeout. A worker killed with -9 holds its partitions until this passes, unless the
   * evictor (shared/pipeline/liveness.ts) removes it sooner, so it bounds fail-over time. The client
   * heartbeats on its own timer (a tenth of this, at most 3 s), so a slow chunk keeps its partitions.
   */
  kafkaSessionTimeoutMs: number;
  /** Lifetime of a dashboard session. */
  sessionTtlHours: number;
  /** Per-IP limit on click and lead, requests per minute (0 = off), its burst, and exempt IPs. */
  rateLimitPerMinute: number;
  rateLimitBurst: number;
  /** CLICK_CLASSIFIER (default true): tell bots and prefetches apart at the ingress. */
  classifyClicks: boolean;
  rateLimitExempt: string[];
  /** How often the outbox relay looks for rows besides its NOTIFY wake-ups. */
  outboxPollMs: number;
  /**
   * How often the approval sweep looks for commissions past payable_at (docs/payouts.md); 0 (`off`): this
   * process does not sweep (another replica does, or the test suite's files leave each other alone).
   */
  approvalSweepMs: number;
  /**
   * The base URL users reach the service at (PUBLIC_URL, no trailing slash): links in mail and in answers
   * (invite_url, magic links) are built from it. Default http://127.0.0.1:<PORT>.
   */
  publicUrl: string;
  /**
   * PUBLIC_URL's origin when PUBLIC_URL is set: the only origin a browser's session write may come from
   * (services/api/cross-site.ts). null when it is not set: the origin each request was sent to (its Host).
   */
  publicOrigin: string | null;
  /** Outbound webhooks (docs/webhooks.md): the retry schedule, the failure window, SSRF rules. */
  webhooks: WebhookConfig;
  /**
   * The click worker writes program_daily_breakdown (default on). `off` is for bench:clicks only, to
   * measure what those writes cost: the breakdown then misses the clicks stored meanwhile.
   */
  rollupBreakdown: boolean;
  /**
   * Applications from a program's public page, per IP and minute (also the burst; 0 = off); IPs of
   * RATE_LIMIT_EXEMPT skip it. The sign-in limits are SignInConfig's (shared/config-sign-in.ts).
   */
  applyRateLimitPerMinute: number;
}

export interface WebhookConfig {
  /** Delays before each retry, ms (WEBHOOK_RETRY_SCHEDULE, default 5s,5m,30m,2h,5h,10h,10h); then failed. */
  retryScheduleMs: number[];
  /** An endpoint whose every attempt failed for this long is disabled (WEBHOOK_DISABLE_AFTER, default 5d). */
  disableAfterMs: number;
  /** One attempt's bound: connect, TLS, request, answer (WEBHOOK_TIMEOUT_MS, default 10 s). */
  timeoutMs: number;
  /**
   * How long a claim outlives its attempt's bound (WEBHOOK_LEASE_MARGIN_MS, default 30 s): room for a slow
   * flush, so a live worker's claim never expires under it; a dead worker's claims are retried this long
   * after their attempts' bound.
   */
  leaseMarginMs: number;
  /** WEBHOOK_ALLOW_PRIVATE=true: http:// and private, loopback, link-local addresses allowed (local use). */
  allowPrivate: boolean;
  /** WEBHOOK_RESOLVE=host=address,…: names answered before DNS, as curl's --resolve (tests, local use). */
  resolve: Record<string, string>;
  /** How often the worker looks for due deliveries besides its own wake-ups (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** Attempts in flight per worker (WEBHOOK_CONCURRENCY) and per endpoint (WEBHOOK_ENDPOINT_CONCURRENCY). */
  concurrency: number;
  endpointConcurrency: number;
  /** How long ended deliveries stay in the delivery log (WEBHOOK_RETENTION_DAYS, default 30). */
  retentionDays: number;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

export const DEFAULTS = {
  databaseUrl: 'postgres://postgres:postgres@127.0.0.1:55432/svc',
  kafkaBrokers: '127.0.0.1:59092',
  httpPort: 8080,
} as const;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];

  const int = (name: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return dflt;
    }
    return n;
  };
  const optionalInt = (name: string, min: number, max: number): number | null =>
    env[name] === undefined || env[name] === '' ? null : int(name, min, min, max);
  const bool = (name: string, dflt: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return dflt;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return dflt;
  };
  const str = (name: string, dflt: string): string => {
    const raw = env[name];
    return raw === undefined || raw === '' ? dflt : raw;
  };
  const optionalPath = (name: string): string | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return null;
    return raw === 'none' ? '' : raw;
  };

  const databaseUrl = str('DATABASE_URL', DEFAULTS.databaseUrl);
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must start with postgres://');

  const kafkaBrokers = str('KAFKA_BROKERS', DEFAULTS.kafkaBrokers)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const b of kafkaBrokers) {
    if (!/^[^:\s]+:\d+$/.test(b)) problems.push(`KAFKA_BROKERS entry "${b}" must be host:port`);
  }
  if (kafkaBrokers.length === 0) problems.push('KAFKA_BROKERS must list at least one broker');

  const kafkaPrefix = str('KAFKA_PREFIX', 'svc.');
  if (!/^[A-Za-z0-9._-]*$/.test(kafkaPrefix)) problems.push('KAFKA_PREFIX may only contain [A-Za-z0-9._-]');

  let trustProxy: Config['trustProxy'] = ['127.0.0.1', '::1'];
  const tp = env.TRUST_PROXY;
  if (tp !== undefined && tp !== '') {
    if (tp === 'true') trustProxy = true;
    else if (tp === 'false') trustProxy = false;
    else trustProxy = tp.split(',').map((s) => s.trim());
  }

  const logLevel = str('LOG_LEVEL', 'info');
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(`LOG_LEVEL "${logLevel}" is not a pino level`);
  }

  const rollupBreakdown = str('ROLLUP_BREAKDOWN', 'on');
  if (rollupBreakdown !== 'on' && rollupBreakdown !== 'off')
    problems.push('ROLLUP_BREAKDOWN must be on or off');

  const geoIpv4 = optionalPath('GEOIP_IPV4_PATH');
  const geoIpv6 = optionalPath('GEOIP_IPV6_PATH');

  const config: Config = {
    databaseUrl,
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 200),
    databaseConnectTimeoutMs: int('DATABASE_CONNECT_TIMEOUT_MS', 2_000, 100, 60_000),
    kafkaBrokers,
    kafkaClientId: str('KAFKA_CLIENT_ID', 'svc'),
    kafkaPrefix,
    clickPartitions: int('KAFKA_CLICK_PARTITIONS', 6, 1, 1000),
    commandPartitions: int('KAFKA_COMMAND_PARTITIONS', 6, 1, 1000),
    kafkaReplicationFactor: optionalInt('KAFKA_REPLICATION_FACTOR', 1, 32),
    kafkaMinInsyncReplicas: optionalInt('KAFKA_MIN_INSYNC_REPLICAS', 1, 32),
    commandDeadlineMs: int('COMMAND_DEADLINE_MS', 5_000, 100, 120_000),
    outcomePollMs: int('OUTCOME_POLL_MS', 500, 50, 60_000),
    httpHost: str('HOST', '127.0.0.1'),
    httpPort: int('PORT', DEFAULTS.httpPort, 0, 65535),
    httpReusePort: bool('REUSE_PORT', false),
    opsPort: env.OPS_PORT === undefined || env.OPS_PORT === '' ? null : int('OPS_PORT', 0, 0, 65535),
    trustProxy,
    bodyLimit: int('BODY_LIMIT_BYTES', 64 * 1024, 1024, 10 * 1024 * 1024),
    logLevel,
    producerLingerMs: int('PRODUCER_LINGER_MS', 0, 0, 1000),
    producerMaxBatch: int('PRODUCER_MAX_BATCH', 2000, 1, 100_000),
    produceTimeoutMs: int('PRODUCE_TIMEOUT_MS', 2_000, 100, 60_000),
    // Above the two waits a command request bounds itself (the produce, then the worker's outcome).
    answerTimeoutMs: int(
      'ANSWER_TIMEOUT_MS',
      int('PRODUCE_TIMEOUT_MS', 2_000, 100, 60_000) + int('COMMAND_DEADLINE_MS', 5_000, 100, 120_000) + 1_000,
      100,
      300_000,
    ),
    cachePollMs: int('CACHE_POLL_MS', 500, 50, 60_000),
    cacheTtlMs: int('CACHE_TTL_MS', 60_000, 100, 3_600_000),
    // null = the bundled DB-IP Lite files; '' (GEOIP_*_PATH=none) = disabled.
    geoIpv4Path: geoIpv4,
    geoIpv6Path: geoIpv6,
    workerChunkSize: int('WORKER_CHUNK_SIZE', 1000, 1, 20_000),
    workerPartitionsConcurrency: int('WORKER_PARTITIONS_CONCURRENCY', 2, 1, 64),
    kafkaSessionTimeoutMs: int('KAFKA_SESSION_TIMEOUT_MS', 10_000, 6_000, 300_000),
    sessionTtlHours: int('SESSION_TTL_HOURS', 24 * 14, 1, 24 * 365),
    rateLimitPerMinute: int('RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000),
    rateLimitBurst: int('RATE_LIMIT_BURST', 100, 1, 1_000_000),
    // Off only to measure what telling bots and prefetches apart costs (bench:clicks): every click is then
    // counted as a person's, as before issue 31.
    classifyClicks: bool('CLICK_CLASSIFIER', true),
    rateLimitExempt: (env.RATE_LIMIT_EXEMPT ?? '127.0.0.1,::1,::ffff:127.0.0.1')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
    outboxPollMs: int('OUTBOX_POLL_MS', 1_000, 10, 60_000),
    approvalSweepMs: env.APPROVAL_SWEEP_MS === 'off' ? 0 : int('APPROVAL_SWEEP_MS', 15_000, 10, 60_000),
    publicUrl: '',
    publicOrigin: null,
    webhooks: null as unknown as WebhookConfig,
    ...loadMailConfig(env, problems),
    rollupBreakdown: rollupBreakdown === 'on',
    ...loadSignInConfig(env, problems),
    ...loadImportConfig(env, problems),
    applyRateLimitPerMinute: int('APPLY_RATE_LIMIT_PER_MINUTE', 10, 0, 1_000_000),
  };
  const publicUrl = str('PUBLIC_URL', `http://127.0.0.1:${config.httpPort}`).replace(/\/+$/, '');
  const origin = /^https?:\/\/[^\s/]+/.test(publicUrl) ? URL.parse(publicUrl)?.origin : undefined;
  if (origin === undefined) problems.push('PUBLIC_URL must be an http:// or https:// URL');
  config.publicUrl = publicUrl;
  if (env.PUBLIC_URL !== undefined && env.PUBLIC_URL !== '') config.publicOrigin = origin ?? null;
  config.webhooks = webhookConfig(env, int, problems);
  if (
    config.kafkaReplicationFactor !== null &&
    config.kafkaMinInsyncReplicas !== null &&
    config.kafkaMinInsyncReplicas > config.kafkaReplicationFactor
  )
    problems.push('KAFKA_MIN_INSYNC_REPLICAS must not exceed KAFKA_REPLICATION_FACTOR');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `5s`, `5m`, `2h`, `5d` (or bare milliseconds) in ms; null when not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) return null;
  const ms = Math.round(Number(m[1]) * DURATION_UNITS[m[2] ?? 'ms']!);
  return Number.isSafeInteger(ms) ? ms : null;
}

function webhookConfig(
  env: Env,
  int: (name: string, dflt: number, min: number, max?: number) => number,
  problems: string[],
): WebhookConfig {
  const duration = (name: string, dflt: string, min: number): number => {
    const raw = env[name] === undefined || env[name] === '' ? dflt : env[name]!;
    const ms = parseDuration(raw);
    if (ms === null || ms < min) {
      problems.push(
        `${name} must be a duration such as 30s, 5m, 2h or 5d, at least ${min} ms (got "${raw}")`,
      );
      return parseDuration(dflt)!;
    }
    return ms;
  };
  const scheduleRaw = env.WEBHOOK_RETRY_SCHEDULE || '5s,5m,30m,2h,5h,10h,10h';
  const schedule = scheduleRaw.split(',').map((s) => parseDuration(s));
  if (schedule.some((s) => s === null || s < 1) || schedule.length > 20) {
    problems.push(
      `WEBHOOK_RETRY_SCHEDULE must list 1 to 20 durations such as 5s,5m,30m,2h (got "${scheduleRaw}")`,
    );
  }
  const allow = env.WEBHOOK_ALLOW_PRIVATE ?? '';
  if (!['', 'true', 'false', '1', '0'].includes(allow))
    problems.push(`WEBHOOK_ALLOW_PRIVATE must be true or false (got "${allow}")`);
  const resolve: Record<string, string> = {};
  for (const pair of (env.WEBHOOK_RESOLVE ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = pair.indexOf('=');
    const host = pair.slice(0, i).trim().toLowerCase();
    const address = pair.slice(i + 1).trim();
    if (i <= 0 || address === '' || isIP(address) === 0)
      problems.push(`WEBHOOK_RESOLVE entries must be host=address (got "${pair}")`);
    else resolve[host] = address;
  }
  return {
    retryScheduleMs: schedule.every((s) => s !== null && s >= 1)
      ? (schedule as number[])
      : [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    disableAfterMs: duration('WEBHOOK_DISABLE_AFTER', '5d', 1),
    timeoutMs: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    leaseMarginMs: int('WEBHOOK_LEASE_MARGIN_MS', 30_000, 1_000, 600_000),
    allowPrivate: allow === 'true' || allow === '1',
    resolve,
    pollMs: int('WEBHOOK_POLL_MS', 1_000, 10, 60_000),
    concurrency: int('WEBHOOK_CONCURRENCY', 200, 1, 10_000),
    endpointConcurrency: int('WEBHOOK_ENDPOINT_CONCURRENCY', 20, 1, 1_000),
    retentionDays: int('WEBHOOK_RETENTION_DAYS', 30, 1, 3_650),
  };
}
