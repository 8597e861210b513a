// Configuration, read from the environment once at boot and validated as a whole.
// Modules receive the slice they need (Pick<Config, ...>) and never read process.env themselves.
export interface Config {
  /** postgres://... of the system of record. */
  databaseUrl: string;
  databasePoolSize: number;
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
   * Kafka group session timeout. A worker killed with -9 holds its partitions until this passes (kafkajs
   * has no static membership), so it bounds fail-over time; the consumer heartbeats after every chunk.
   */
  kafkaSessionTimeoutMs: number;
  /** Lifetime of a dashboard session. */
  sessionTtlHours: number;
  /** Per-IP limit on click and lead, requests per minute (0 = off), its burst, and exempt IPs. */
  rateLimitPerMinute: number;
  rateLimitBurst: number;
  rateLimitExempt: string[];
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

  const geoIpv4 = optionalPath('GEOIP_IPV4_PATH');
  const geoIpv6 = optionalPath('GEOIP_IPV6_PATH');

  const config: Config = {
    databaseUrl,
    databasePoolSize: int('DATABASE_POOL_SIZE', 10, 1, 200),
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
    rateLimitExempt: (env.RATE_LIMIT_EXEMPT ?? '127.0.0.1,::1,::ffff:127.0.0.1')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  };
  if (
    config.kafkaReplicationFactor !== null &&
    config.kafkaMinInsyncReplicas !== null &&
    config.kafkaMinInsyncReplicas > config.kafkaReplicationFactor
  )
    problems.push('KAFKA_MIN_INSYNC_REPLICAS must not exceed KAFKA_REPLICATION_FACTOR');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
