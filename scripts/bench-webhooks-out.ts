// npm run bench:webhooks-out: outbound webhooks under load. Lifecycle events written at a fixed rate into
// the outbox (recordWebhookEvents, as the workers write them), relayed, fanned out by the webhook worker to
// three local endpoints and delivered; beside that the click path under a closed-loop load, measured alone
// and then with the fan-out running, in the same run. Then checks that every event reached every endpoint and
// that each webhook-id was acknowledged once.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { cli } from './lib/cli.ts';
import { prepareServices, runBench } from './lib/bench/run.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import { LoadCounters, latencySummary, runLoad } from './lib/bench/bench.ts';
import { seedBenchProgram } from './lib/bench/seed.ts';
import { createSql } from '../shared/db/sql.ts';
import { recordWebhookEvents } from '../shared/db/webhook-events.ts';
import type { WebhookEventInput } from '../shared/db/webhook-events.ts';
import { newSigningSecret } from '../shared/webhooks/signature.ts';
import { commissionView } from '../shared/views/commission.ts';

const USAGE = `Usage: npm run bench:webhooks-out [-- options]

Measures, in one run on this machine with everything co-located (web, click worker, outbox relay, webhook
worker, Postgres, Kafka and three local HTTP receivers):
  (a) the click path alone: POST /api/v1/track/click, closed loop (autocannon), accepted clicks/s;
  (b) the same load while lifecycle events are written at --rate events/s into the outbox (as the workers
      write them) and fanned out to 3 endpoints: accepted clicks/s, and the ratio b/a;
  (c) delivery lag: from an event's time to its acknowledged delivery at each endpoint, p50/p99/max, over
      every delivery of (b) (the events sent after (b) ended are waited for and counted too).
Then checks that every event reached each endpoint, each webhook-id acknowledged exactly once.

Options:
  --rate <n>         events/s written during (b) (default 1000), each delivered to 3 endpoints
  --seconds <n>      duration of (a) and of (b) (default 20)
  --connections <n>  click connections (default 32)
  --endpoints <n>    receiving endpoints (default 3)
  --fast             fsync off in Postgres (default: durable settings, as in production)
  -h, --help

Environment: the services' tuning variables pass through (WEBHOOK_CONCURRENCY,
WEBHOOK_ENDPOINT_CONCURRENCY, KAFKA_COMMAND_PARTITIONS, ...; see shared/config.ts).`;

const { values, int: intArg } = cli(USAGE, {
  rate: { type: 'string' },
  seconds: { type: 'string' },
  connections: { type: 'string' },
  endpoints: { type: 'string' },
  fast: { type: 'boolean' },
});
const RATE = intArg('rate', 1000, 100_000);
const SECONDS = intArg('seconds', 20, 3600);
const CONNECTIONS = intArg('connections', 32, 10_000);
const ENDPOINTS = intArg('endpoints', 3, 50);

interface Receiver {
  url: string;
  /** Acknowledgements per webhook-id. */
  acks: Map<string, number>;
  /** ms from the event's time to its acknowledgement, one per delivery. */
  lags: number[];
  close(): Promise<void>;
}

/** A receiver answering 204 at once; it notes when each webhook-id arrived. */
async function startReceiver(): Promise<Receiver> {
  const acks = new Map<string, number>();
  const lags: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
      res.writeHead(204).end(() => {
        acks.set(id, (acks.get(id) ?? 0) + 1);
        if (acks.get(id) === 1) lags.push(Date.now() - Date.parse(body.timestamp));
      });
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    acks,
    lags,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

await runBench('webhooks-out', values.fast, async (run) => {
  const { status, stack, procs, cleanups } = run;
  const { port, env } = await prepareServices(run, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const sql = createSql(stack.databaseUrl, 8, 'bench-webhooks-out');
  const { programId, workspaceId } = await seedBenchProgram(sql, { customers: 10, customerKeys: false });

  const receivers = await Promise.all(Array.from({ length: ENDPOINTS }, startReceiver));
  cleanups.push(() => Promise.all(receivers.map((r) => r.close())).then(() => {}));
  for (const r of receivers) {
    await sql`
      insert into webhook_endpoints (workspace_id, url, secret) values (${workspaceId}, ${r.url}, ${newSigningSecret()})`;
  }

  status('starting web, the click worker, the outbox relay and the webhook worker');
  const web = spawnService('web', { env });
  procs.push(
    web,
    spawnService('click-worker', { env }),
    spawnService('outbox-relay', { env }),
    spawnService('webhook-worker', { env }),
  );
  await waitForWeb(web, port);

  const clickBody = JSON.stringify({ affiliate_url: 'https://shop.example/?aff=bench' });
  const clicks = (seconds: number) => {
    const counters = new LoadCounters();
    return runLoad({
      url: `http://127.0.0.1:${port}/api/v1/track/click`,
      requests: [{ link: 'bench', body: clickBody }],
      connections: CONNECTIONS,
      amount: 100_000_000,
      maxMs: seconds * 1000,
      counters,
    });
  };
  status('warming up the click path (5 s)');
  await clicks(5);

  status(`(a) clicks alone for ${SECONDS} s`);
  const a = await clicks(SECONDS);

  // (b) Events written at RATE/s in small transactions (every 20 ms), beside the same click load.
  const written: string[] = [];
  let writing = true;
  const writer = (async () => {
    const started = Date.now();
    let n = 0;
    while (writing) {
      const due = Math.floor(((Date.now() - started) / 1000) * RATE) - n;
      if (due > 0) {
        const now = new Date();
        const events: WebhookEventInput[] = Array.from({ length: due }, (_, i) => ({
          type: 'commission.updated',
          workspace_id: workspaceId,
          program_id: programId,
          data: commissionView({
            id: n + i + 1,
            status: 'approved',
            amount_cents: 3000,
            currency: 'USD',
            sale_id: n + i + 1,
            program_id: programId,
            partner_id: 1,
            customer_id: null,
            refund_reason: null,
            deducted_cents: 0,
            review_reason: null,
            payable_at: now,
            payout_id: null,
            paid_at: null,
            group_id: null,
            rule: null,
            bonus_id: null,
            created_at: now,
            updated_at: now,
          }),
        }));
        written.push(...(await sql.begin((tx) => recordWebhookEvents(tx, 'bench.', events))));
        n += due;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  status(`(b) clicks for ${SECONDS} s with ${RATE} events/s fanned out to ${ENDPOINTS} endpoints`);
  const b = await clicks(SECONDS);
  writing = false;
  await writer;
  const eventsPerSecond = written.length / SECONDS;

  status(`(c) waiting for ${written.length * ENDPOINTS} deliveries`);
  const expected = written.length;
  const deadline = Date.now() + 600_000;
  while (receivers.some((r) => r.acks.size < expected) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
  }
  const lag = latencySummary(receivers.flatMap((r) => r.lags));
  const missing = receivers.reduce((s, r) => s + Math.max(0, expected - r.acks.size), 0);
  const twice = receivers.reduce((s, r) => s + [...r.acks.values()].filter((n) => n > 1).length, 0);
  const [attempts] = await sql<{ n: number; retried: number }[]>`
    select count(*)::int as n, count(*) filter (where attempts > 1)::int as retried from webhook_deliveries
    where workspace_id = ${workspaceId}`;

  const aRate = a.accepted / a.seconds;
  const bRate = b.accepted / b.seconds;
  const line = (cells: string[]) =>
    '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(50) : c.padStart(14))).join('');
  process.stdout.write(
    [
      '',
      `bench:webhooks-out: ${RATE} events/s to ${ENDPOINTS} endpoints for ${SECONDS} s; Postgres ${values.fast ? 'fsync off' : 'durable'}; all on one ${cpus().length}-core machine`,
      '',
      line(['', 'clicks/s', 'p50 ms', 'p99 ms']),
      line([
        '(a) click path alone',
        aRate.toFixed(0),
        a.latencyMs.p50.toFixed(1),
        a.latencyMs.p99.toFixed(1),
      ]),
      line([
        `(b) click path, fan-out running`,
        bRate.toFixed(0),
        b.latencyMs.p50.toFixed(1),
        b.latencyMs.p99.toFixed(1),
      ]),
      '',
      `  ratio b/a (accepted clicks/s): ${(bRate / Math.max(1, aRate)).toFixed(2)}`,
      `  events written: ${written.length} (${eventsPerSecond.toFixed(0)}/s); deliveries ${attempts!.n} (${attempts!.retried} needed a retry)`,
      `  (c) delivery lag, event -> acknowledged: p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`,
      `  every event at every endpoint: ${missing === 0 ? 'PASS' : `FAIL (${missing} missing)`}; acknowledged twice: ${twice}`,
      '',
    ].join('\n'),
  );
  await sql.end();
  return missing === 0;
});
