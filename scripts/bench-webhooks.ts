// npm run bench:webhooks: signed Stripe, Paddle and Polar events through the intake (verify, produce with
// acks=all, answer) at a fixed offered rate, beside a bare Fastify route driven the same way in the same run,
// then the events applied end to end by the processor worker, and a check that every event answered 200 was
// applied. The processors run one after the other in the same run: their figures are ratios to each other
// and to the bare route, never asserted.
import { cli } from './lib/cli.ts';
import { freePort } from './lib/stack/stack.ts';
import { LOAD_OPTIONS, prepareServices, runBench } from './lib/bench/run.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import { startBaseline } from './lib/bench/bench.ts';
import { openLoop } from './lib/bench/open-loop.ts';
import type { OpenLoopResult } from './lib/bench/open-loop.ts';
import { createSql } from '../shared/db/sql.ts';
import { seedBenchProgram } from './lib/bench/seed.ts';
import Stripe from 'stripe';
import { createHmac } from 'node:crypto';

const USAGE = `Usage: npm run bench:webhooks [-- options]

Measures, in one run on this machine with everything co-located:
  (a) baseline: a bare Fastify route answering a fixed body, driven at --rate for --seconds;
  (b) POST /api/v1/webhooks/processor/:programId with a freshly signed checkout.session.completed per
      request, at the same rate and duration: achieved rate, p50/p99 (an open loop: request i is due
      at i / rate, its latency counts from then; scripts/lib/bench/open-loop.ts);
  (c) end to end: events applied per second by the processor worker (first accepted to last applied);
  then (b) and (c) again for Paddle (transaction.completed, Paddle-Signature) and Polar (order.paid,
  Standard Webhooks) at the same rate, one after the other, beside Stripe's.
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
const PADDLE_SECRET = 'pdl_ntfset_bench_webhooks';
const POLAR_SECRET = `whsec_${Buffer.from('bench-webhooks-polar-secret-32b!').toString('base64')}`;

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

type Signed = { id: string; headers: Record<string, string>; body: string };

const stripeNext = (): Signed => {
  const e = signedCheckout();
  return { id: e.id, headers: { 'stripe-signature': e.header }, body: e.payload };
};

/** A Paddle transaction.completed of a one-time purchase, signed ts/h1. */
function paddleNext(): Signed {
  const n = ++seq;
  const id = `evt_bench_pd_${n}`;
  const body = JSON.stringify({
    event_id: id,
    event_type: 'transaction.completed',
    occurred_at: new Date().toISOString(),
    data: {
      id: `txn_bench_${n}`,
      status: 'completed',
      origin: 'web',
      currency_code: 'USD',
      custom_data: { svc_customer_key: `bench-${n % customers}` },
      details: { totals: { grand_total: String(1000 + (n % 50) * 100) } },
    },
  });
  const ts = Math.floor(Date.now() / 1000);
  const h1 = createHmac('sha256', PADDLE_SECRET).update(`${ts}:${body}`).digest('hex');
  return { id, headers: { 'paddle-signature': `ts=${ts};h1=${h1}` }, body };
}

/** A Polar order.paid, signed as Standard Webhooks (the spec's key: the base64 after whsec_). */
function polarNext(): Signed {
  const n = ++seq;
  const id = `msg_bench_${n}`;
  const body = JSON.stringify({
    type: 'order.paid',
    timestamp: new Date().toISOString(),
    data: {
      id: `order_bench_${n}`,
      status: 'paid',
      billing_reason: 'purchase',
      currency: 'usd',
      total_amount: 1000 + (n % 50) * 100,
      subscription_id: null,
      metadata: { svc_customer_key: `bench-${n % customers}` },
    },
  });
  const ts = Math.floor(Date.now() / 1000);
  const key = Buffer.from(POLAR_SECRET.slice('whsec_'.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(ts), 'webhook-signature': `v1,${sig}` };
  return { id, headers, body };
}

/** The open loop at --rate for --seconds; each request a new signed event. */
function drive(origin: string, path: string, next: () => Signed = stripeNext): Promise<OpenLoopResult> {
  return openLoop({
    origin,
    rate: RATE,
    seconds: SECONDS,
    warmupSeconds: WARMUP,
    connections: CONNECTIONS,
    next: () => {
      const e = next();
      return { id: e.id, path, headers: { 'content-type': 'application/json', ...e.headers }, body: e.body };
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
  await sql`insert into processor_secrets (workspace_id, processor, webhook_secret)
            values (${workspaceId}, 'paddle', ${PADDLE_SECRET}), (${workspaceId}, 'polar', ${POLAR_SECRET})`;

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

  /** (b) one processor's intake at the offered rate, then (c) its accepted events applied. */
  async function intakeAndApply(processor: 'stripe' | 'paddle' | 'polar', path: string, next: () => Signed) {
    status(`(b) ${processor}: signed events at ${RATE}/s for ${WARMUP} s (warm-up) + ${SECONDS} s`);
    const b0 = Date.now();
    const b = await drive(`http://127.0.0.1:${port}`, path, next);
    const accepted = [...b.codes.entries()].filter(([, code]) => code === 200).map(([id]) => id);
    status(`(c) ${processor}: waiting for ${accepted.length} accepted events to be applied`);
    const deadline = Date.now() + 300_000;
    let applied = 0;
    let lastApplied = Date.now();
    for (;;) {
      const [r] = await sql<{ n: number; last: Date | null }[]>`
        select count(*)::int as n, max(applied_at) as last from processor_events
        where program_id = ${programId} and processor = ${processor}`;
      applied = r!.n;
      if (r!.last) lastApplied = r!.last.getTime();
      if (applied >= accepted.length || Date.now() > deadline) break;
      await new Promise((res) => setTimeout(res, 500));
    }
    const [check] = await sql<{ rows: number; distinct_ids: number }[]>`
      select count(*)::int as rows, count(distinct event_id)::int as distinct_ids
      from processor_events
      where program_id = ${programId} and processor = ${processor} and event_id = any(${accepted})`;
    const appliedRate = applied / Math.max(0.001, (lastApplied - b0) / 1000);
    return { processor, b, accepted, appliedRate, check: check! };
  }

  const runs = [
    await intakeAndApply('stripe', `/api/v1/webhooks/processor/${programId}`, stripeNext),
    await intakeAndApply('paddle', `/api/v1/webhooks/paddle/${programId}`, paddleNext),
    await intakeAndApply('polar', `/api/v1/webhooks/polar/${programId}`, polarNext),
  ];
  const [sales] = await sql<
    { n: number }[]
  >`select count(*)::int as n from sales where program_id = ${programId}`;
  const answers = new Map(runs.flatMap((r) => [...r.b.codes.entries()]));
  const accepted = runs.flatMap((r) => r.accepted);
  const check = {
    rows: runs.reduce((n, r) => n + r.check.rows, 0),
    distinct_ids: runs.reduce((n, r) => n + r.check.distinct_ids, 0),
    sales: sales!.n,
  };
  const b = runs[0]!.b;
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
      ...runs.flatMap((r) => [
        line([
          `(b) ${r.processor} intake (verify + produce + 200)`,
          r.b.achieved.toFixed(0),
          r.b.p50.toFixed(1),
          r.b.p99.toFixed(1),
        ]),
        line([`(c) ${r.processor} applied end to end`, r.appliedRate.toFixed(0), '', '']),
      ]),
      '',
      `  p99 ratio b/a: ${runs.map((r) => `${r.processor} ${(r.b.p99 / a.p99).toFixed(2)}`).join(', ')}; ` +
        `p99 and applied/s beside Stripe's: ${runs
          .slice(1)
          .map(
            (r) =>
              `${r.processor} ${(r.b.p99 / b.p99).toFixed(2)}× p99, ${(r.appliedRate / runs[0]!.appliedRate).toFixed(2)}× applied/s`,
          )
          .join('; ')}`,
      `  max (a) ${a.max.toFixed(1)} ms, ${runs.map((r) => `${r.processor} ${r.b.max.toFixed(1)} ms`).join(', ')}`,
      `  answers: ${answers.size} (${[...codes].map(([c, n]) => `${c}: ${n}`).join(', ')}); outcomes ${check!.rows}, sales ${check!.sales}`,
      `  targets (Stripe's): p99 < 50 ms at ${RATE}/s ${b.p99 < 50 ? 'PASS' : 'MISS'}; zero lost ${lost === 0 && check!.rows === check!.distinct_ids ? 'PASS' : `FAIL (${lost} lost)`}`,
      '',
    ].join('\n'),
  );
  await sql.end();
  return lost === 0 && check!.rows === check!.distinct_ids;
});
