// npm run bench:webhooks: signed Stripe events through the intake (verify, produce with acks=all, answer)
// at a fixed offered rate, beside a bare Fastify route driven the same way in the same run, then the events
// applied end to end by the processor worker, and a check that every event answered 200 was applied.
import { cli } from './lib/cli.ts';
import { freePort } from './lib/stack.ts';
import { LOAD_OPTIONS, prepareServices, runBench } from './lib/bench-run.ts';
import { spawnService, waitForWeb } from './lib/services.ts';
import { startBaseline } from './lib/bench.ts';
import { openLoop } from './lib/open-loop.ts';
import type { OpenLoopResult } from './lib/open-loop.ts';
import { createSql } from '../shared/db/sql.ts';
import { seedBenchProgram } from './lib/bench-seed.ts';
import Stripe from 'stripe';

const USAGE = `Usage: npm run bench:webhooks [-- options]

Measures, in one run on this machine with everything co-located:
  (a) baseline: a bare Fastify route answering a fixed body, driven at --rate for --seconds;
  (b) POST /api/v1/webhooks/processor/:programId with a freshly signed checkout.session.completed per
      request, at the same rate and duration: achieved rate, p50/p99 (an open loop: request i is due
      at i / rate, its latency counts from then; scripts/lib/open-loop.ts);
  (c) end to end: events applied per second by the processor worker (first accepted to last applied).
Then checks that every event answered 200 has exactly one outcome (zero lost, zero doubled).
Target: (b) p99 < 50 ms at 1,000 events/s offered, zero lost.

Options:
  --rate <n>      offered events/s in (a) and (b) (default 1000)
  --seconds <n>   duration of (a) and (b) (default 15)
  --warmup <n>    seconds sent at the same rate before each of (a) and (b), not counted in their
                  latencies (a fresh process's first requests pay for its JIT and connections; default 3)
  --connections <n>  most requests in flight, on keep-alive connections (default 32)
  --fast          fsync off in Postgres (default: durable settings, as in production)
  -h, --help`;

const { values, int: intArg } = cli(USAGE, {
  ...LOAD_OPTIONS,
  connections: { type: 'string' },
  warmup: { type: 'string' },
});
const RATE = intArg('rate', 1000, 100_000);
const SECONDS = intArg('seconds', 15, 3600);
const WARMUP = intArg('warmup', 3, 600, 0);
const CONNECTIONS = intArg('connections', 32, 10_000);
const SECRET = 'whsec_bench_webhooks';

const stripe = new Stripe('sk_unused');
let seq = 0;
const customers = 2000;
function signedCheckout(): { id: string; payload: string; header: string } {
  const n = ++seq;
  const event = {
    id: `evt_bench_${n}`,
    object: 'event',
    type: 'checkout.session.completed',
    livemode: true,
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `cs_bench_${n}`,
        object: 'checkout.session',
        mode: 'payment',
        payment_status: 'paid',
        payment_intent: `pi_bench_${n}`,
        amount_total: 1000 + (n % 50) * 100,
        currency: 'usd',
        metadata: { svc_customer_key: `bench-${n % customers}` },
      },
    },
  };
  const payload = JSON.stringify(event);
  return {
    id: event.id,
    payload,
    header: stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }),
  };
}

/** The open loop at --rate for --seconds; each request a new signed event. */
function drive(origin: string, path: string): Promise<OpenLoopResult> {
  return openLoop({
    origin,
    rate: RATE,
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    connections: CONNECTIONS,
    next: () => {
      const e = signedCheckout();
      const headers = { 'content-type': 'application/json', 'stripe-signature': e.header };
      return { id: e.id, path, headers, body: e.payload };
    },
  });
}

await runBench('webhooks', values.fast, async (run) => {
  const { status, stack, procs, cleanups } = run;
  const { port, env } = await prepareServices(run);
  const sql = createSql(stack.databaseUrl, 4, 'bench-webhooks');

  status(`seeding a connected program and ${customers} customers with customer keys`);
  const { programId, workspaceId } = await seedBenchProgram(sql, { customers, customerKeys: true });
  await sql`insert into processor_connections (workspace_id, status, webhook_secret) values (${workspaceId}, 'connected', ${SECRET})`;

  // (a) Baseline.
  status(`(a) bare Fastify route at ${RATE}/s for ${WARMUP} s (warm-up) + ${SECONDS} s`);
  const basePort = await freePort();
  const baseline = startBaseline(basePort);
  cleanups.push(() => baseline.stop());
  await baseline.ready;
  const a = await drive(`http://127.0.0.1:${basePort}`, '/api/v1/track/click');
  await baseline.stop();

  status('starting web and the processor worker');
  const web = spawnService('web', { env });
  procs.push(web, spawnService('processor-worker', { env }), spawnService('ledger-worker', { env }));
  await waitForWeb(web, port);

  // (b) The intake.
  status(`(b) signed events at ${RATE}/s for ${WARMUP} s (warm-up) + ${SECONDS} s`);
  const b0 = Date.now();
  const b = await drive(`http://127.0.0.1:${port}`, `/api/v1/webhooks/processor/${programId}`);
  const answers = b.codes;
  const accepted = [...answers.entries()].filter(([, code]) => code === 200).map(([id]) => id);

  // (c) Applied end to end.
  status(`(c) waiting for ${accepted.length} accepted events to be applied`);
  const deadline = Date.now() + 300_000;
  let applied = 0;
  let lastApplied = Date.now();
  for (;;) {
    const [r] = await sql<{ n: number; last: Date | null }[]>`
      select count(*)::int as n, max(applied_at) as last from processor_events where program_id = ${programId}`;
    applied = r!.n;
    if (r!.last) lastApplied = r!.last.getTime();
    if (applied >= accepted.length || Date.now() > deadline) break;
    await new Promise((res) => setTimeout(res, 500));
  }
  const [check] = await sql<{ rows: number; distinct_ids: number; sales: number }[]>`
    select count(*)::int as rows, count(distinct event_id)::int as distinct_ids,
           (select count(*)::int from sales where program_id = ${programId}) as sales
    from processor_events where program_id = ${programId} and event_id = any(${accepted})`;
  const appliedRate = applied / Math.max(0.001, (lastApplied - b0) / 1000);
  const codes = new Map<number, number>();
  for (const c of answers.values()) codes.set(c, (codes.get(c) ?? 0) + 1);
  const lost = accepted.length - check!.distinct_ids;
  const line = (cells: string[]) =>
    '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(44) : c.padStart(12))).join('');
  process.stdout.write(
    [
      '',
      `bench:webhooks: ${RATE}/s offered for ${SECONDS} s after a ${WARMUP} s warm-up; Postgres ${values.fast ? 'fsync off' : 'durable'}; all on one ${(await import('node:os')).cpus().length}-core machine`,
      '',
      line(['', 'achieved/s', 'p50 ms', 'p99 ms']),
      line(['(a) bare Fastify route', a.achieved.toFixed(0), a.p50.toFixed(1), a.p99.toFixed(1)]),
      line([
        '(b) webhook intake (verify + produce + 200)',
        b.achieved.toFixed(0),
        b.p50.toFixed(1),
        b.p99.toFixed(1),
      ]),
      line(['(c) applied end to end', appliedRate.toFixed(0), '', '']),
      '',
      `  p99 ratio b/a: ${(b.p99 / a.p99).toFixed(2)}; max (a) ${a.max.toFixed(1)} ms, (b) ${b.max.toFixed(1)} ms`,
      `  answers: ${answers.size} (${[...codes].map(([c, n]) => `${c}: ${n}`).join(', ')}); outcomes ${check!.rows}, sales ${check!.sales}`,
      `  targets: p99 < 50 ms at ${RATE}/s ${b.p99 < 50 ? 'PASS' : 'MISS'}; zero lost ${lost === 0 && check!.rows === check!.distinct_ids ? 'PASS' : `FAIL (${lost} lost)`}`,
      '',
    ].join('\n'),
  );
  await sql.end();
  return lost === 0 && check!.rows === check!.distinct_ids;
});
