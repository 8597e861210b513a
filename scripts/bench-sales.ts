// npm run bench:sales: sales through the full path (HTTP → ingress → Kafka → attribution worker →
// Postgres → NOTIFY → answer), beside a baseline measured in the same run: the same sale written by one
// direct SQL transaction (the worker's own apply step and outcome row, no HTTP, no Kafka).
import { cpus } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cli } from './lib/cli.ts';
import { LOAD_OPTIONS, prepareServices, runBench } from './lib/bench/run.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import { STACK_DIR } from './lib/stack/stack.ts';
import { cpuLine, cpuMsPerEvent, cpuSnapshot, cpuUsage, postmasterPid } from './lib/bench/bench.ts';
import { createSql } from '../shared/db/sql.ts';
import { seedBenchProgram } from './lib/bench/seed.ts';
import { percentile } from '../shared/stats.ts';
import { recordOutcome } from '../shared/pipeline/outcomes.ts';
import { RollupBuffer } from '../shared/rollups/dal.ts';
import { saleCommand } from './lib/bench/sale-command.ts';
import { createSaleApplier } from '../services/workers/attribution/apply-sale.ts';

const USAGE = `Usage: npm run bench:sales [-- options]

Measures, in one run on this machine with everything co-located:
  (a) baseline: the same sale applied by one direct SQL transaction (the attribution worker's own step),
      sales/s at --concurrency;
  (b) the full path, POST /api/v1/track/sale answered with the worker's recorded outcome: sales/s at
      --concurrency (closed loop, autocannon), and the ratio b/a; the CPU time each process (web,
      attribution worker, ledger worker, Kafka, Postgres) spent per sale meanwhile;
  (c) latency p50/p99 at a fixed offered rate (--rate, default 500/s) for --seconds (autocannon
      overallRate, latencies in whole milliseconds).
Then checks that every 200 is one sale row with its commission. Targets: b >= 1,000 sales/s; p99 < 100 ms
at 500 sales/s.

Options:
  --sales <n>        sales in (a) and (b) each (default 6000)
  --concurrency <n>  concurrent requests in (a) and (b) (default 48)
  --rate <n>         offered rate in (c), sales/s (default 500)
  --seconds <n>      duration of (c) (default 20)
  --fast             fsync off in Postgres (default: durable settings, as in production)
  --webhooks         the workspace has an enabled webhook endpoint, so every sale also writes its
                     sale.created and commission.created events to the outbox (compare with a run without:
                     docs/webhooks.md); nothing delivers them here
  --tiers            the program has a second group, a tier rule from its default group to it (a threshold
                     no sale reaches) and a running bonus: every sale takes the partner's figures' locks
                     before deciding and adds to the bonus's progress (docs/rewards.md; compare with a run
                     without)
  -h, --help`;

const { values, int: intArg } = cli(USAGE, {
  sales: { type: 'string' },
  concurrency: { type: 'string' },
  webhooks: { type: 'boolean' },
  tiers: { type: 'boolean' },
  ...LOAD_OPTIONS,
});
const SALES = intArg('sales', 6000, 1_000_000);
const CONCURRENCY = intArg('concurrency', 48, 1000);
const RATE = intArg('rate', 500, 100_000);
const SECONDS = intArg('seconds', 20, 3600);

await runBench('sales', values.fast, async (run) => {
  const { status, stack, procs } = run;
  const { port, env } = await prepareServices(run, {
    WORKER_PARTITIONS_CONCURRENCY: process.env.WORKER_PARTITIONS_CONCURRENCY ?? '6',
  });
  const sql = createSql(stack.databaseUrl, CONCURRENCY + 4, 'bench-sales');

  // One program (30%, lifetime recurring), 2,000 click-stage customers to attribute sales to.
  status('seeding a program and 2,000 customers');
  const { programId, workspaceId, token, clickIds } = await seedBenchProgram(sql, {
    customers: 2000,
    customerKeys: false,
  });
  if (values.webhooks) {
    await sql`
      insert into webhook_endpoints (workspace_id, url, secret)
      values (${workspaceId}, 'https://hooks.example/bench', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;
  }
  if (values.tiers) {
    const [gold] = await sql<{ id: string }[]>`
      insert into program_groups (program_id, name, slug, commission)
      values (${programId}, 'Gold', 'gold', ${sql.json({ type: 'percentage', percent: 40 })}) returning id`;
    await sql`
      insert into tier_rules (program_id, position, from_group_id, to_group_id, metric, time_window, threshold)
      select ${programId}, 1, id, ${gold!.id}, 'sales_cents', 'lifetime', 1e15
      from program_groups where program_id = ${programId} and is_default`;
    await sql`
      insert into bonuses (program_id, name, metric, threshold, amount_cents, period, starts_at, ends_at)
      values (${programId}, 'Bench', 'sales_cents', 1e15, 100, 'calendar_month', now() - interval '1 day',
              now() + interval '30 days')`;
  }
  let seq = 0;
  const saleBody = (prefix: string) => {
    const n = ++seq;
    return {
      transaction_id: `${prefix}-${n}`,
      amount_cents: 1000 + (n % 50) * 100,
      click_id: clickIds[n % clickIds.length]!,
    };
  };

  // (a) Baseline: the worker's own transaction, called directly.
  status(`(a) baseline: ${SALES} sales by direct SQL transactions, concurrency ${CONCURRENCY}`);
  const applier = createSaleApplier({ recentClickWaitMs: 10_000, kafkaPrefix: env.KAFKA_PREFIX ?? 'svc.' });
  const baselineLat: number[] = [];
  const a0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (seq < SALES) {
        const b = saleBody('direct');
        const cmd = saleCommand({
          request_id: b.transaction_id,
          program_id: programId,
          transaction_id: b.transaction_id,
          amount_cents: b.amount_cents,
          currency: 'USD',
          click_id: b.click_id,
        });
        const t0 = performance.now();
        await sql.begin(async (tx) => {
          const rollups = new RollupBuffer();
          const applied = await applier.apply(tx, cmd, { rollups, careful: false, memo: new Map() });
          await rollups.flush(tx);
          await recordOutcome(tx, {
            requestId: cmd.request_id,
            kind: 'sale',
            programId,
            statusCode: applied.statusCode,
            body: applied.body,
            effects: applied.effects,
          });
        });
        baselineLat.push(performance.now() - t0);
      }
    }),
  );
  const baselineRate = SALES / ((performance.now() - a0) / 1000);

  // The services: web (ingress), attribution worker, ledger worker (the sale's side effect).
  status('starting web, attribution worker, ledger worker');
  const web = spawnService('web', { env });
  procs.push(web, spawnService('attribution-worker', { env }), spawnService('ledger-worker', { env }));
  await waitForWeb(web, port);
  const url = `http://127.0.0.1:${port}/api/v1/track/sale`;
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const answers = new Map<string, { status: number; body: Record<string, unknown> }>();
  /**
   * autocannon (light on CPU, which matters with everything on two cores), each request a new sale: the
   * body is built per request, and the connection's context remembers its transaction_id (pipelining 1,
   * so one request is in flight per connection) to record the answer.
   */
  const drive = (prefix: string, opts: { amount: number; connections: number; overallRate?: number }) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      const inst = autocannon(
        {
          url,
          method: 'POST',
          headers,
          connections: opts.connections,
          pipelining: 1,
          amount: opts.amount,
          ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
          timeout: 15,
          requests: [
            {
              setupRequest: (req, context) => {
                const b = saleBody(prefix);
                (context as { txn?: string }).txn = b.transaction_id;
                return { ...req, body: JSON.stringify(b) };
              },
              onResponse: (status, body, context) => {
                let parsed: Record<string, unknown> = {};
                try {
                  parsed = JSON.parse(body) as Record<string, unknown>;
                } catch {
                  // counted by its status
                }
                answers.set((context as { txn: string }).txn, { status, body: parsed });
              },
            },
          ],
        },
        (err, result) => (err ? reject(err) : resolve(result)),
      );
      let last = Date.now();
      inst.on('response', () => {
        if (Date.now() - last > 3000) {
          last = Date.now();
          status(`  ${answers.size} answered`);
        }
      });
    });

  // Warm-up: the consumer group joins and the first sales flow.
  status('warming up');
  seq = 0;
  await drive('warm', { amount: 500, connections: 8 });

  // (b) Full path, closed loop, and what each process spends per sale meanwhile.
  status(`(b) full path: ${SALES} sales, concurrency ${CONCURRENCY}`);
  seq = 0;
  const [attribution, ledger] = [procs[1]!, procs[2]!];
  const pids = {
    self: process.pid,
    web: web.child.pid,
    attribution: attribution.child.pid,
    ledger: ledger.child.pid,
    kafka: stack.kafkaNodes().map((n) => n.process.pid!),
    postgres: postmasterPid(join(STACK_DIR, 'bench-sales', 'postgres')),
  };
  const cpu0 = cpuSnapshot(pids);
  const b0 = performance.now();
  const full = await drive('full', { amount: SALES, connections: CONCURRENCY });
  const fullRate = SALES / ((performance.now() - b0) / 1000);
  const perSale = cpuMsPerEvent([cpuUsage(cpu0, cpuSnapshot(pids), cpus().length)], SALES, [
    'web',
    'attribution',
    'ledger',
    'kafka',
    'postgres',
  ]);

  // (c) Fixed offered rate: enough connections that the rate, not the latency, sets the pace.
  status(`(c) ${RATE} sales/s for ${SECONDS} s`);
  seq = 0;
  const total = RATE * SECONDS;
  const c0 = performance.now();
  const fixed = await drive('fixed', {
    amount: total,
    connections: Math.max(50, Math.ceil(RATE / 5)),
    overallRate: RATE,
  });
  const achieved = total / ((performance.now() - c0) / 1000);

  // Every 200 is one sale row with its commission; nothing else was stored.
  const ok = [...answers.entries()].filter(([, a]) => a.status === 200);
  const [rows] = await sql<{ sales: number; commissions: number }[]>`
    select count(*)::int as sales, count(c.id)::int as commissions
    from sales s left join commissions c on c.sale_id = s.id
    where s.program_id = ${programId} and s.request_id not like 'direct-%' and s.transaction_id not like 'direct-%'`;
  const failed = answers.size - ok.length;
  const codes = new Map<number, number>();
  for (const a of answers.values()) codes.set(a.status, (codes.get(a.status) ?? 0) + 1);

  const p = (v: number[], q: number) => percentile(v, q).toFixed(1);
  const line = (cells: string[]) =>
    '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(46) : c.padStart(12))).join('');
  process.stdout.write(
    [
      '',
      `bench:sales: ${SALES} sales per phase, concurrency ${CONCURRENCY}; webhook events ${values.webhooks ? 'written' : 'not written (no endpoint)'}; Postgres ${values.fast ? 'fsync off' : 'durable'}; all on one ${cpus().length}-core machine`,
      '',
      line(['', 'sales/s', 'p50 ms', 'p99 ms']),
      line([
        '(a) baseline: direct SQL transaction',
        baselineRate.toFixed(0),
        p(baselineLat, 50),
        p(baselineLat, 99),
      ]),
      line([
        '(b) full path (HTTP+Kafka+worker+answer)',
        fullRate.toFixed(0),
        String(full.latency.p50),
        String(full.latency.p99),
      ]),
      line([
        `(c) full path at ${RATE}/s offered (${achieved.toFixed(0)}/s)`,
        '',
        String(fixed.latency.p50),
        String(fixed.latency.p99),
      ]),
      '',
      `  ratio b/a: ${(fullRate / baselineRate).toFixed(2)}`,
      `  CPU per sale in (b), ms: ${cpuLine(perSale)}`,
      `  answers: ${answers.size} (${[...codes].map(([c, n]) => `${c}: ${n}`).join(', ')}); stored sales ${rows!.sales}, commissions ${rows!.commissions}`,
      `  targets: b >= 1,000 sales/s ${fullRate >= 1000 ? 'PASS' : 'MISS'}; p99 < 100 ms at ${RATE}/s ${fixed.latency.p99 < 100 ? 'PASS' : 'MISS'}; every 200 stored once ${rows!.sales === ok.length && failed === 0 ? 'PASS' : 'FAIL'}`,
      '',
    ].join('\n'),
  );
  await sql.end();
  return rows!.sales === ok.length && rows!.commissions === ok.length;
});
