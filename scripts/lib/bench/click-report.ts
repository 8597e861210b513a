// The report of bench:clicks: the table of every phase against its target, CPU per process and per
// persisted click, the settings, and what was lost.
import type { Config } from '../../../shared/config.ts';
import { cpuLine, cpuMsPerEvent, int, ms, table } from './bench.ts';
import type { CpuUsage, LoadCounters, LoadRun } from './bench.ts';
import type { WorkerStatus } from './click-output.ts';
import type { Closed } from './click-traffic.ts';
import type { ClickVerification } from './click-verify.ts';
import type { CostRound } from './click-cost.ts';

export const TARGETS = { ratio: 0.4, e2e: 5000, lagP99Ms: 2000 };

export interface ClickBenchResults {
  cores: number;
  connections: number;
  links: number;
  /** How Postgres ran: external, --fast or durable. */
  postgres: string;
  /** The tuning variables in effect. */
  cfg: Config;
  kafkaWarm: string;
  rate: number;
  seconds: number;
  replicas: number;
  costClicks: number;
  a: Closed;
  aCounters: LoadCounters;
  b: Closed;
  bWarm: LoadCounters;
  bCounters: LoadCounters;
  /** The drain of (b)'s backlog. */
  drain: { rows: number; seconds: number; timedOut: boolean; bootSeconds: number };
  c: {
    run: LoadRun;
    counters: LoadCounters;
    rows: number;
    persistSeconds: number;
    persistedRate: number;
    inWindowRate: number;
    backlogAtEnd: number;
    timedOut: boolean;
    lagP50: number;
    lagP99: number;
    lagMax: number;
    /** The worker's own status lines during (c). */
    status: WorkerStatus[];
  };
  workerRetries: { total: number; deadlocks: number };
  d: {
    run: LoadRun;
    counters: LoadCounters;
    rows: number;
    rate: number;
    lagP50: number;
    lagP99: number;
    drain: { timedOut: boolean };
    kafka: string;
  } | null;
  verification: ClickVerification;
  cost: CostRound[];
  cpuPhases: { phase: string; usage: CpuUsage }[];
}

function verdict(ok: boolean): string {
  return ok ? 'PASS' : 'MISS';
}

export function clickBenchReport(r: ClickBenchResults): string {
  const { a, aCounters, b, bWarm, bCounters, d, cost, cpuPhases, cores } = r;
  const { problems, lost, acceptedTotal, dbRows, unknown, missing, perLink, agg } = r.verification;
  const { rate: RATE, seconds: SECONDS, replicas: REPLICAS, costClicks: COST_CLICKS } = r;
  const c = r.c.run;
  const cCounters = r.c.counters;
  const { rows: rowsC, persistSeconds, persistedRate: persistedRateC, inWindowRate, backlogAtEnd } = r.c;
  const { lagP50, lagP99, status: statusInC } = r.c;
  const rowsB = r.drain.rows;
  const drainSeconds = r.drain.seconds;
  const workerRetries = r.workerRetries;
  const meanRate = (mode: 'off' | 'on') => {
    const runs = cost.filter((c) => c.mode === mode);
    return (
      runs.reduce((s, c) => s + c.rows, 0) /
      Math.max(
        0.001,
        runs.reduce((s, c) => s + c.seconds, 0),
      )
    );
  };
  const costRatio = cost.length ? meanRate('on') / meanRate('off') : 0;
  const ratio = a.rate > 0 ? b.rate / a.rate : 0;
  const drainRate = rowsB / drainSeconds;
  const lagPass = lagP99 < TARGETS.lagP99Ms && rowsC > 0;
  const errs = (k: LoadCounters) =>
    `${int(k.non2xx)} non-2xx, ${int(k.errors)} errors (${int(k.timeouts)} timeouts)` +
    (k.otherTwoxx ? `, ${int(k.otherTwoxx)} 2xx without success` : '');
  const lat = (run: { latencyMs: LoadRun['latencyMs'] }) =>
    `latency p50 ${ms(run.latencyMs.p50)}, p99 ${ms(run.latencyMs.p99)}`;
  const maxStatusP99 = statusInC.reduce((m, s) => Math.max(m, s.lagP99Ms), 0);
  const statusP50s = statusInC.map((s) => s.lagP50Ms);
  const note = (text: string) => ['', `  ${text}`];

  const rows: string[][] = [
    ['Measurement', 'Result', 'Target', ''],
    ['-'],
    ['(a) bare Fastify, closed loop', `${int(a.rate)} req/s`],
    note(`${int(a.answered)} in ${a.seconds.toFixed(1)} s (${a.slices} runs); ${errs(aCounters)}; ${lat(a)}`),
    ['(b) ingress, worker stopped', `${int(b.rate)} accepted clicks/s`],
    note(`${int(b.accepted)} in ${b.seconds.toFixed(1)} s (${b.slices} runs); ${errs(bCounters)}; ${lat(b)}`),
    ['    b/a', ratio.toFixed(2), `>= ${TARGETS.ratio}`, verdict(ratio >= TARGETS.ratio)],
    ["drain of (b)'s backlog", `${int(drainRate)} rows/s`, '', r.drain.timedOut ? 'TIMED OUT' : ''],
    note(
      `${int(rowsB)} rows in ${drainSeconds.toFixed(1)} s, from the first chunk's transaction start to the ` +
        `last offsets committed; worker boot ${r.drain.bootSeconds.toFixed(1)} s before that`,
    ),
    [
      '(c) offered, fixed rate',
      `${int(RATE)} clicks/s for ${SECONDS} s`,
      '',
      c.stoppedEarly ? 'STOPPED EARLY' : '',
    ],
    note(
      `sent ${int(cCounters.sent)} in ${c.seconds.toFixed(1)} s (5 staggered autocannon overallRate instances)`,
    ),
    ['    accepted', `${int(c.accepted / Math.max(0.001, c.seconds))} clicks/s`],
    note(`${errs(cCounters)}; ${lat(c)}`),
    [
      '    persisted, sustained',
      `${int(persistedRateC)} clicks/s`,
      `>= ${int(TARGETS.e2e)}`,
      verdict(persistedRateC >= TARGETS.e2e && !r.c.timedOut),
    ],
    note(
      `${int(rowsC)} rows of (c) / ${persistSeconds.toFixed(1)} s from its first request to the last committed; ` +
        `${int(inWindowRate)}/s committed within the offering window, Kafka backlog at its end ${int(backlogAtEnd)}`,
    ),
    [
      '    pipeline lag p50 / p99',
      `${ms(lagP50)} / ${ms(lagP99)}`,
      `p99 < ${TARGETS.lagP99Ms / 1000} s`,
      verdict(lagPass),
    ],
    note(
      `SQL over the (c) rows: created_at (the worker's transaction start) - click_timestamp (ingress accept); max ${ms(r.c.lagMax)}`,
    ),
    note(
      statusInC.length
        ? `worker's own status lines during (c): p50 ${ms(Math.min(...statusP50s))}..${ms(Math.max(...statusP50s))}, ` +
            `p99 up to ${ms(maxStatusP99)} (${statusInC.length} lines)`
        : "worker's own status lines during (c): none",
    ),
    note(`worker chunk retries: ${workerRetries.total} (deadlocks: ${workerRetries.deadlocks})`),
    ...(d
      ? [
          [
            `(d) ${REPLICAS} web + ${REPLICAS} click workers`,
            `${int(RATE)} clicks/s for ${SECONDS} s`,
            '',
            d.run.stoppedEarly ? 'STOPPED EARLY' : '',
          ],
          note(`Kafka: ${d.kafka}`),
          ['    accepted', `${int(d.run.accepted / Math.max(0.001, d.run.seconds))} clicks/s`],
          note(`${errs(d.counters)}; ${lat(d.run)}`),
          ['    persisted, sustained', `${int(d.rate)} clicks/s`, '', d.drain.timedOut ? 'TIMED OUT' : ''],
          ['    pipeline lag p50 / p99', `${ms(d.lagP50)} / ${ms(d.lagP99)}`],
          [
            '    d/c persisted',
            (d.rate / Math.max(0.001, persistedRateC)).toFixed(2),
            '',
            `(${cores} cores: the cost of the replicas, not a speed-up)`,
          ],
        ]
      : []),
    ['zero lost', `lost: ${int(lost)}`, 'lost = 0', problems.length === 0 ? 'PASS' : 'FAIL'],
    note(
      `accepted ${int(acceptedTotal)} (b warm-up ${int(bWarm.accepted)}, b ${int(bCounters.accepted)}, ` +
        `c ${int(cCounters.accepted)}${d ? `, d ${int(d.counters.accepted)}` : ''}); rows ${int(dbRows)}; ` +
        `requests of unknown outcome ${int(unknown)}`,
    ),
    note(
      `every accepted click_id found: ${missing === 0 ? 'yes' : `no, ${int(missing)} missing`}; link counters = rows ` +
        `for ${perLink.filter((l) => l.counter === l.rows).length}/${perLink.length} links; partner-program clicks ` +
        `${int(Number(agg!.pp))}, daily stats ${int(Number(agg!.daily))}, customers ${int(Number(agg!.customers))}, ` +
        `dead letters ${agg!.dead}`,
    ),
    ...(cost.length
      ? [
          ['(e) breakdown rollup: on/off', costRatio.toFixed(3), '>= 0.9', verdict(costRatio >= 0.9)],
          note(
            `drained rows/s, ROLLUP_BREAKDOWN=off ${int(meanRate('off'))}, on ${int(meanRate('on'))}; rounds: ` +
              cost.map((c) => `${c.mode} ${int(c.rate)}`).join(', ') +
              ` (${int(COST_CLICKS)} clicks each)`,
          ),
        ]
      : []),
  ];

  const cpuNames = ['bench', 'baseline', 'web', 'worker', 'postgres', 'kafka', 'other'];
  // CPU per persisted click: what each process spent on (c) (offering and catching up) per row, and (d)'s.
  const usagesOf = (prefix: string) =>
    cpuPhases
      .filter((p) => p.phase.startsWith(prefix) && !p.phase.includes('not measured'))
      .map((p) => p.usage);
  const perClickNames = ['web', 'worker', 'kafka', 'postgres'];
  const perClickC = cpuMsPerEvent(usagesOf('(c)'), rowsC, perClickNames);
  const perClickD = d ? cpuMsPerEvent(usagesOf('(d)'), d.rows, perClickNames) : null;
  const cpuRows: string[][] = [['Phase', 's', ...cpuNames, 'machine'], ['-']];
  for (const p of cpuPhases) {
    cpuRows.push([
      p.phase,
      p.usage.seconds.toFixed(1),
      ...cpuNames.map((n) => {
        const v = p.usage.percent.get(n === 'bench' ? 'self' : n);
        return v === undefined ? '-' : `${Math.round(v)}%`;
      }),
      `${Math.round(p.usage.machineBusyPercent)}%`,
    ]);
  }

  const { cfg } = r;
  const settings = [
    `KAFKA_CLICK_PARTITIONS=${cfg.clickPartitions}`,
    `PRODUCER_LINGER_MS=${cfg.producerLingerMs}`,
    `PRODUCER_MAX_BATCH=${cfg.producerMaxBatch}`,
    `WORKER_CHUNK_SIZE=${cfg.workerChunkSize}`,
    `WORKER_PARTITIONS_CONCURRENCY=${cfg.workerPartitionsConcurrency}`,
    `DATABASE_POOL_SIZE=${cfg.databasePoolSize}`,
  ].join(' ');

  const busyOther = cpuPhases.filter(
    (p) => !p.phase.includes('not measured') && (p.usage.percent.get('other') ?? 0) > 25,
  );
  const out = [
    '',
    `Click path benchmark: ${cores} CPUs, Node ${process.version}, ${r.connections} connections, pipelining 1,` +
      ` ${r.links} links; Postgres ${r.postgres}`,
    `Settings: ${settings}`,
    `Kafka broker warmed up first (JIT): ${r.kafkaWarm}`,
    '',
    table(rows),
    '',
    'CPU per process, % of one core (machine = all cores; "other" = busy time outside these processes):',
    table(cpuRows),
    '',
    `CPU per persisted click in (c), ms: ${cpuLine(perClickC)}`,
    ...(perClickD
      ? [`CPU per persisted click in (d), ms: ${cpuLine(perClickD)} (sums over the replicas and nodes)`]
      : []),
    ...(busyOther.length
      ? [
          `Note: processes outside this benchmark used over 25% of a core during ${busyOther.map((p) => p.phase.split(',')[0]).join('; ')}: ` +
            'the figures are skewed by them.',
        ]
      : []),
    '',
    problems.length === 0 ? 'lost: 0' : `lost: ${int(lost)}\nDiscrepancies:\n  - ${problems.join('\n  - ')}`,
    '',
  ];
  return out.join('\n');
}
