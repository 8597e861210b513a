// npm run bench:dashboard: how fast the dashboard reads are on a large dataset, and that they stay exact
// (each read beside the plain SQL that computes the same answer). USAGE says what it seeds and times.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { freePort, STACK_DIR } from './lib/stack/stack.ts';
import { startStack } from './lib/stack/start.ts';
import type { Stack } from './lib/stack/start.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import type { ServiceProcess } from './lib/stack/services.ts';
import { int, table } from './lib/bench/bench.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { percentile } from '../shared/stats.ts';
import { DIMENSIONS } from '../shared/rollups/rules.ts';
import type { Dimension } from '../shared/rollups/rules.ts';
import { rawBreakdown } from '../shared/rollups/raw.ts';
import { BenchControl } from './lib/bench/control.ts';
import { seed } from './lib/bench/dashboard-seed.ts';
import { baselineEvents, baselinePerformance } from './lib/bench/dashboard-baselines.ts';
import type { DayRow } from './lib/bench/dashboard-baselines.ts';

const USAGE = `Usage: npm run bench:dashboard [-- options]

Benchmarks the dashboard reads at scale, everything on 127.0.0.1:
  1. starts a fresh embedded PostgreSQL and Kafka broker in .stack/bench-dashboard/ (deleted afterwards
     unless --keep) and migrates;
  2. seeds --events click events spread evenly over --days days (today included) and --programs programs,
     with customers (1 per 5 clicks), lead events (5% of clicks), paid sales (1%), their commissions,
     20 partners per program (one link each), a few test events, program_daily_stats computed from those
     rows, and the breakdown by partner, link, country, device, browser, OS, referrer and landing page
     rebuilt from them per program and day (shared/rollups/operations.ts, as npm run rollups -- --rebuild); then
     VACUUM ANALYZE;
  3. starts the web service, signs a user up and makes it a member of the programs' workspace;
  4. for the first program, after a warm-up, times --requests sequential requests of each read
     (performance 7d, 90d, all; performance 90d of one partner, the partner portal's read; events page 1,
     page 1000 of 10 and of 100, eventType=conversion, a date range with partial days; status; the
     breakdown of each of the eight dimensions over the --days days) and --baseline-requests runs of the
     plain SQL computing the same answer (performance: one aggregate over click_events, customers, sales,
     commissions and partner_programs, for the partner only those rows of it; events: the UNION ALL of the
     three tables sorted and offset whole, plus count(*); breakdown: every dimension aggregated from the raw
     events, at most 3 runs), and checks the answers match.

Prints p50/p95 per read, the baseline's, their ratio, and whether each read meets its target: p95 < 50 ms,
and < 10 ms for the breakdowns (issue 20). Exit status 0, or 1 when an answer differs from the baseline
(or the run failed); slow reads do not fail it.
Seeding 10,000,000 events takes several minutes; try --events 1000000 first.

Options:
  --events <n>              click events to seed (default 10000000)
  --programs <n>            programs sharing them (default 50)
  --days <n>                days they span, ending today (default 90)
  --requests <n>            timed requests per read (default 200)
  --baseline-requests <n>   timed runs of each baseline query (default 30)
  --keep                    keep .stack/bench-dashboard/ afterwards
  -h, --help                this text

Environment: DATABASE_URL / KAFKA_BROKERS use external servers instead (the bench data is written there).`;

const { values, int: intArg } = cli(USAGE, {
  events: { type: 'string' },
  programs: { type: 'string' },
  days: { type: 'string' },
  requests: { type: 'string' },
  'baseline-requests': { type: 'string' },
  keep: { type: 'boolean' },
});

const EVENTS = intArg('events', 10_000_000, 1_000_000_000);
const PROGRAMS = intArg('programs', 50, 10_000);
const DAYS = intArg('days', 90, 3000);
const REQUESTS = intArg('requests', 200, 100_000);
const BASELINE_REQUESTS = intArg('baseline-requests', 30, 100_000);
const PARTNERS_PER_PROGRAM = 20;
const WARMUP = 20;
const SEED_CONNECTIONS = 2;
const TARGET_P95_MS = 50;
const BREAKDOWN_TARGET_P95_MS = 10;
const DAY_MS = 86_400_000;

const control = new BenchControl();

// ---------------------------------------------------------------------------------------------------
// Progress

const benchStart = Date.now();
const elapsed = () => `[bench ${((Date.now() - benchStart) / 1000).toFixed(0).padStart(4)}s]`;
const say = (msg: string) => process.stderr.write(`${elapsed()} ${msg}\n`);

// ---------------------------------------------------------------------------------------------------
// Timing

interface Timing {
  p50: number;
  p95: number;
}

async function time(n: number, warmup: number, fn: () => Promise<void>): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

const fmt = (msv: number) => (msv >= 100 ? msv.toFixed(0) : msv >= 10 ? msv.toFixed(1) : msv.toFixed(2));

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const log = createLogger('bench', 'warn');
  const external = Boolean(process.env.DATABASE_URL) && Boolean(process.env.KAFKA_BROKERS);
  const stackDir = join(STACK_DIR, 'bench-dashboard');
  if (!values.keep && !external) {
    control.onCleanup(`removing ${stackDir}`, () => rm(stackDir, { recursive: true, force: true }));
  }
  say('starting PostgreSQL and Kafka');
  // fsync off: the data is throwaway, and the reads measured here do not write.
  const stackP = startStack({ name: 'bench-dashboard', fresh: true, fast: true, log });
  control.onCleanup('Postgres + Kafka', async () => (await stackP.catch(() => null))?.stop());
  const stack: Stack = await stackP;
  await migrate(stack.databaseUrl, log);
  const sql = createSql(stack.databaseUrl, 4, 'svc-bench-dashboard');
  control.onCleanup('Postgres pool', () => sql.end({ timeout: 5 }));

  const seedStart = Date.now();
  const seeded = await seed(sql, {
    events: EVENTS,
    programs: PROGRAMS,
    days: DAYS,
    partnersPerProgram: PARTNERS_PER_PROGRAM,
    connections: SEED_CONNECTIONS,
    say,
    stopped: () => control.interrupted,
  });
  const seedSeconds = (Date.now() - seedStart) / 1000;
  const programId = seeded.programIds[0]!;
  const [sizes] = await sql<{ clicks: string; program: string; table_size: string }[]>`
    select (select count(*) from click_events)::text as clicks,
           (select count(*) from click_events where program_id = ${programId} and not is_test)::text as program,
           pg_size_pretty((select sum(pg_total_relation_size(inhrelid)) from pg_inherits
                           where inhparent = 'click_events'::regclass)) as table_size`;
  say(
    `seeded in ${seedSeconds.toFixed(0)} s; click_events ${int(Number(sizes!.clicks))} rows (${sizes!.table_size})`,
  );

  const port = await freePort();
  const web: ServiceProcess = spawnService('web', {
    env: {
      DATABASE_URL: stack.databaseUrl,
      KAFKA_BROKERS: stack.kafkaBrokers,
      PORT: String(port),
      KAFKA_PREFIX: `bench-dash-${Date.now().toString(36)}.`,
      LOG_LEVEL: 'warn',
    },
  });
  control.onCleanup('web', () => web.stop());
  await waitForWeb(web, port);
  const base = `http://127.0.0.1:${port}`;
  const signupRes = await fetch(`${base}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@bench.example', password: 'bench password 123', name: 'Bench' }),
  });
  if (signupRes.status !== 201)
    throw new Error(`signup failed: ${signupRes.status} ${await signupRes.text()}`);
  const signup = (await signupRes.json()) as { data: { user: { id: number }; session_token: string } };
  await sql`insert into memberships (user_id, workspace_id, role)
            values (${signup.data.user.id}, ${seeded.workspaceId}, 'member')`;
  const headers = { authorization: `Bearer ${signup.data.session_token}` };
  const getJson = async (path: string): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };

  const today = Math.floor(Date.now() / DAY_MS);
  const dayIso = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);
  const firstDay = today - DAYS + 1;
  const fromDay = today - Math.floor(DAYS / 3);
  const toDay = Math.min(today, fromDay + 10);
  const dateFrom = `${dayIso(fromDay)}T06:00:00.000Z`;
  const dateTo = `${dayIso(toDay)}T18:00:00.000Z`;
  const problems: string[] = [];

  interface Read {
    name: string;
    path: string;
    baseline: () => Promise<unknown>;
    check: (answer: Record<string, unknown>, baseline: unknown) => string | null;
    /** p95 target in ms (default TARGET_P95_MS). */
    target?: number;
    /** Timed runs of the baseline (default BASELINE_REQUESTS). */
    baselineRuns?: number;
  }
  const perf = (period: string, first: number, partnerId: number | null = null): Read => ({
    name: partnerId === null ? `performance ${period}` : `performance ${period} of a partner`,
    path:
      `/api/tracking/performance/${programId}?period=${period}` +
      (partnerId === null ? '' : `&partnerId=${partnerId}`),
    baseline: () => baselinePerformance(sql, programId, first, today, partnerId),
    check: (answer, expected) => {
      const got = (answer.data as (DayRow & { period: string; sales: number })[]).map(
        ({ date, clicks, leads, conversions, revenue, partners, commission }) => ({
          date,
          clicks,
          leads,
          conversions,
          revenue,
          partners,
          commission,
        }),
      );
      return JSON.stringify(got) === JSON.stringify(expected) ? null : 'rows differ from the raw aggregate';
    },
  });
  const ev = (
    name: string,
    q: { page: number; pageSize: number; eventType?: string; lo?: string; hi?: string },
  ): Read => {
    const qs = new URLSearchParams({ page: String(q.page), pageSize: String(q.pageSize) });
    if (q.eventType) qs.set('eventType', q.eventType);
    if (q.lo) qs.set('dateFrom', q.lo);
    if (q.hi) qs.set('dateTo', q.hi);
    return {
      name,
      path: `/api/tracking/events/${programId}?${qs.toString()}`,
      baseline: () => baselineEvents(sql, programId, q),
      check: (answer, expected) => {
        const e = expected as { ids: string[]; total: number };
        const ids = (answer.data as { id: string; event_type: string }[]).map(
          (x) => `${x.event_type}:${x.id}`,
        );
        const total = (answer.meta as { pagination: { total: number } }).pagination.total;
        if (total !== e.total) return `total ${total} != plain count ${e.total}`;
        return JSON.stringify(ids) === JSON.stringify(e.ids) ? null : 'page differs from the plain query';
      },
    };
  };
  // The breakdowns over the seeded days, against every dimension aggregated from the raw events (computed
  // once per run of the baseline: one query gives all eight).
  const [partnerRow] = await sql<
    { partner_id: string }[]
  >`select partner_id from bench_pps where idx = 0 and k = 0`;
  const partnerId = Number(partnerRow!.partner_id);
  const range = { first: dayIso(firstDay), last: dayIso(today) };
  let rawMemo: Promise<Awaited<ReturnType<typeof rawBreakdown>>> | null = null;
  const rawAll = () => (rawMemo ??= rawBreakdown(sql, programId, range, 'clicks'));
  const topOf = (raw: Awaited<ReturnType<typeof rawBreakdown>>, d: Dimension) => {
    const byKey = new Map<
      string,
      { clicks: number; leads: number; conversions: number; revenue: number; commission: number }
    >();
    for (const r of raw) {
      if (r.dimension !== d) continue;
      const k = byKey.get(r.key) ?? { clicks: 0, leads: 0, conversions: 0, revenue: 0, commission: 0 };
      k.clicks += r.clicks;
      k.leads += r.leads;
      k.conversions += r.conversions;
      k.revenue += r.revenue_cents;
      k.commission += r.commission_cents;
      byKey.set(r.key, k);
    }
    const top = [...byKey.entries()]
      .sort(([ka, a], [kb, b]) => b.clicks - a.clicks || (ka < kb ? -1 : ka > kb ? 1 : 0))
      .slice(0, 10)
      .map(([key, k]) => ({ key, ...k, revenue: k.revenue / 100, commission: k.commission / 100 }));
    return { top, keys: byKey.size };
  };
  const breakdown = (d: Dimension): Read => ({
    name: `breakdown ${d}`,
    path: `/api/tracking/breakdown/${programId}?dimension=${d}&dateFrom=${range.first}&dateTo=${range.last}`,
    target: BREAKDOWN_TARGET_P95_MS,
    baselineRuns: Math.min(3, BASELINE_REQUESTS),
    baseline: async () => {
      rawMemo = null;
      return topOf(await rawAll(), d);
    },
    check: (answer, expected) => {
      const e = expected as ReturnType<typeof topOf>;
      const got = (answer.data as Record<string, unknown>[]).map(({ label: _, ...rest }) => rest);
      const keys = (answer.meta as { keys: number }).keys;
      if (keys !== e.keys) return `meta.keys ${keys} != ${e.keys} keys in the raw events`;
      return JSON.stringify(got) === JSON.stringify(e.top) ? null : 'top keys differ from the raw aggregate';
    },
  });
  const reads: Read[] = [
    perf('7d', today - 6),
    perf('90d', today - 89),
    perf('all', firstDay),
    perf('90d', today - 89, partnerId),
    ev('events page 1', { page: 1, pageSize: 10 }),
    ev('events page 1000', { page: 1000, pageSize: 10 }),
    ev('events page 1000 x100', { page: 1000, pageSize: 100 }),
    ev('events conversion', { page: 1, pageSize: 10, eventType: 'conversion' }),
    ev('events date range', { page: 3, pageSize: 10, lo: dateFrom, hi: dateTo }),
    {
      name: 'status',
      path: `/api/tracking/status/${programId}`,
      baseline: async () => null,
      check: (answer) => {
        const d = answer.data as { statistics: { pageview: { testEventCount: number } } };
        return d.statistics.pageview.testEventCount === 10 ? null : 'testEventCount is not 10';
      },
    },
    ...DIMENSIONS.map(breakdown),
  ];

  const rows: string[][] = [
    ['read', 'p50 ms', 'p95 ms', 'p95 target', 'baseline p50', 'baseline p95', 'p50 ratio', 'same answer'],
    ['-'],
  ];
  for (const r of reads) {
    say(`timing ${r.name}: ${r.path}`);
    const answer = await getJson(r.path);
    const t = await time(REQUESTS, WARMUP, async () => {
      await getJson(r.path);
    });
    let b: Timing | null = null;
    let expected: unknown = null;
    if (r.name !== 'status') {
      expected = await r.baseline();
      b = await time(r.baselineRuns ?? BASELINE_REQUESTS, r.baselineRuns === undefined ? 3 : 0, async () => {
        await r.baseline();
      });
    }
    const problem = r.check(answer, expected);
    if (problem) problems.push(`${r.name}: ${problem}`);
    rows.push([
      r.name,
      fmt(t.p50),
      fmt(t.p95),
      `<${r.target ?? TARGET_P95_MS} ${t.p95 < (r.target ?? TARGET_P95_MS) ? 'PASS' : 'MISS'}`,
      b ? fmt(b.p50) : '-',
      b ? fmt(b.p95) : '-',
      b ? `${(b.p50 / t.p50).toFixed(1)}x` : '-',
      problem ? `NO: ${problem}` : 'yes',
    ]);
  }

  const [bd] = await sql<{ n: string; other: string }[]>`
    select count(*)::text as n, count(*) filter (where key = 'other')::text as other from program_daily_breakdown`;
  const breakdownRows = Number(bd!.n);
  const otherRows = Number(bd!.other);
  const c = seeded.counts;
  process.stdout.write(
    [
      '',
      `Dashboard reads: ${int(c.clicks)} click events, ${int(c.customers)} customers, ${int(c.leads)} leads, ` +
        `${int(c.sales)} sales over ${DAYS} days and ${PROGRAMS} programs (seeded in ${seedSeconds.toFixed(0)} s; ` +
        `click_events ${sizes!.table_size} with indexes).`,
      `Program ${programId}: ${int(Number(sizes!.program))} click events. ${REQUESTS} sequential requests per read ` +
        `after ${WARMUP} warm-up, client-side over HTTP (session auth included); baseline: ${BASELINE_REQUESTS} runs ` +
        'of the plain SQL from a direct connection (no HTTP).',
      `events date range: ${dateFrom} .. ${dateTo}, page 3 of 10. Partner: ${partnerId}. Breakdowns: ` +
        `${range.first} .. ${range.last}, limit 10; program_daily_breakdown ${int(breakdownRows)} rows, ` +
        `${int(otherRows)} of them \`other\` (keys past the daily cap).`,
      '',
      table(rows),
      '',
      problems.length
        ? `DIFFERENCES:\n  ${problems.join('\n  ')}`
        : 'Every answer matches the plain computation.',
      '',
    ].join('\n'),
  );
  return problems.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  if (!control.interrupted) process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
} finally {
  await control.cleanup();
}
process.exit(control.interrupted ? 130 : code);
