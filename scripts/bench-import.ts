// npm run bench:import: an import of a Rewardful program of --affiliates affiliates and --commissions
// commissions from the double of Rewardful's API (scripts/lib/seed/source-doubles.ts) on loopback, through the
// real path (API → outbox → Kafka → import worker → Postgres), on a fresh stack: how long it takes and how
// many rows a second; with --clicks, the click path's rate beside it against its rate alone, measured in the
// same run. Prints numbers; asserts nothing about time (docs/benchmarks.md "Imports").
import { setPriority } from 'node:os';
import autocannon from 'autocannon';
import { cli } from './lib/cli.ts';
import { prepareServices, runBench } from './lib/bench/run.ts';
import { spawnService, waitForWeb } from './lib/stack/services.ts';
import type { ServiceName } from './lib/stack/services.ts';
import { clickRequests, seedBench } from './lib/bench/click-traffic.ts';
import { rewardfulFixture, startRewardful } from './lib/seed/source-doubles.ts';
import { createSql } from '../shared/db/sql.ts';
import { newSecretKey } from '../shared/importing/secrets.ts';

const USAGE = `Usage: npm run bench:import [-- options]

Imports a Rewardful program from a double of its API on loopback (two campaigns, every affiliate with a link,
a coupon and a customer, commissions in every state), on a fresh stack with web, the outbox relay and the
import worker. Prints the import's time, its rows (groups, partners, links, codes, customers, commissions)
per second, its pages and requests. With --clicks, first the click path alone for --click-seconds (closed
loop, --connections connections: POST /api/v1/track/click, stored by the click worker), then the same load
during the import: the two rates and their ratio.

Options:
  --affiliates <n>     affiliates (default 10000)
  --commissions <n>    commissions (default 50000)
  --clicks             run the click load beside the import, after a baseline alone
  --click-seconds <n>  the baseline's length (default 20)
  --connections <n>    click load connections (default 16)
  --source-limit       keep Rewardful's documented rate limit (45 requests per 30 s) instead of none: the
                       time a real account's import takes (minutes); default: no limit, the importer's own
                       speed
  --nice               run the import worker at a lower CPU priority (nice 10), as a deployment may
  --fast               fsync off in Postgres (default: durable settings, as in production)
  -h, --help`;

const { values, int } = cli(USAGE, {
  affiliates: { type: 'string' },
  commissions: { type: 'string' },
  clicks: { type: 'boolean' },
  'click-seconds': { type: 'string' },
  connections: { type: 'string' },
  'source-limit': { type: 'boolean' },
  nice: { type: 'boolean' },
  fast: { type: 'boolean' },
});
const AFFILIATES = int('affiliates', 10_000, 1_000_000);
const COMMISSIONS = int('commissions', 50_000, 5_000_000, 0);
const CLICK_SECONDS = int('click-seconds', 20, 3600);
const CONNECTIONS = int('connections', 16, 1000);

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

await runBench('import', values.fast as boolean | undefined, async (run) => {
  const { status, stack, procs, cleanups } = run;
  const { port, env } = await prepareServices(run, {
    IMPORT_SECRET_KEY: newSecretKey(),
    WEBHOOK_ALLOW_PRIVATE: 'true',
    OUTBOX_POLL_MS: '50',
    ...(values['source-limit'] ? {} : { IMPORT_RATE_LIMIT: '1000000/1s' }),
  });
  const base = `http://127.0.0.1:${port}`;
  const sql = createSql(stack.databaseUrl, 4, 'bench-import');
  cleanups.push(() => sql.end({ timeout: 5 }));

  status(`building the Rewardful account: ${fmt(AFFILIATES)} affiliates, ${fmt(COMMISSIONS)} commissions`);
  const tag = Date.now().toString(36);
  const data = rewardfulFixture({ affiliates: AFFILIATES, commissions: COMMISSIONS, tag });
  const secret = `rw_bench_${tag}`;
  const double = await startRewardful(data, secret, values['source-limit'] ? {} : { limit: null });
  cleanups.push(() => double.close());

  const names: ServiceName[] = [
    'web',
    'outbox-relay',
    'import-worker',
    ...(values.clicks ? (['click-worker'] as const) : []),
  ];
  status(`starting ${names.join(', ')}`);
  for (const name of names) procs.push(spawnService(name, { env }));
  await waitForWeb(procs[0]!, port);
  const worker = procs[2]!;
  if (values.nice && worker.child.pid) setPriority(worker.child.pid, 10);

  // An owner, and the program the import brings everything into.
  const signup = await post('/api/auth/signup', {
    email: `bench-${tag}@bench.example`,
    password: 'bench password 1',
    workspace_name: 'Bench',
  });
  const session = (signup.data as { session_token: string; workspace: { id: number } }).session_token;
  const workspaceId = (signup.data as { workspace: { id: number } }).workspace.id;
  const auth = { authorization: `Bearer ${session}` };
  const program = await post(
    `/api/advertiser/affiliate-programs?workspace_id=${workspaceId}`,
    { name: 'Bench import' },
    auth,
  );
  const programId = (program.data as { id: number }).id;

  async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data?: unknown; error?: string };
    if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error ?? ''}`);
    return json;
  }

  // The click load: a program of its own with 200 links (bench:clicks' traffic), closed loop.
  let clickUrl = '';
  let requests: ReturnType<typeof clickRequests> = [];
  if (values.clicks) {
    const seed = await seedBench(sql, tag, { partners: 50, links: 200 });
    requests = clickRequests(seed, 'b');
    clickUrl = `${base}/api/v1/track/click`;
  }
  const clickLoad = (opts: { duration?: number }) => {
    let accepted = 0;
    const inst = autocannon(
      {
        url: clickUrl,
        connections: CONNECTIONS,
        pipelining: 1,
        ...(opts.duration ? { duration: opts.duration } : { duration: 24 * 3600 }),
        requests: requests.map((r) => ({
          method: 'POST' as const,
          headers: { 'content-type': 'application/json' },
          body: r.body,
          onResponse: (code: number) => {
            if (code === 200) accepted++;
          },
        })),
      },
      () => {},
    );
    const t0 = performance.now();
    const done = new Promise<{ accepted: number; seconds: number }>((resolve) =>
      inst.on('done', () => resolve({ accepted, seconds: (performance.now() - t0) / 1000 })),
    );
    return { stop: () => inst.stop(), done };
  };

  let baseline: { rate: number } | null = null;
  if (values.clicks) {
    status('warming the click path (5 s)');
    await clickLoad({ duration: 5 }).done;
    status(`(a) the click path alone for ${CLICK_SECONDS} s`);
    const a = await clickLoad({ duration: CLICK_SECONDS }).done;
    baseline = { rate: a.accepted / a.seconds };
    status(`    ${fmt(baseline.rate)} clicks/s`);
  }

  status(`(b) the import${values.clicks ? ', with the click load beside it' : ''}`);
  const beside = values.clicks ? clickLoad({}) : null;
  const t0 = performance.now();
  const started = await post(
    `/api/advertiser/affiliate-programs/${programId}/imports`,
    { source: 'rewardful', credentials: { api_secret: secret }, options: { api_base_url: double.url } },
    auth,
  );
  const importId = (started.data as { id: number }).id;
  type Imp = {
    status: string;
    step: string;
    error: string | null;
    counts: Record<string, Record<string, number>>;
  };
  let imp: Imp;
  let lastLine = 0;
  for (;;) {
    const res = await fetch(`${base}/api/advertiser/affiliate-programs/${programId}/imports/${importId}`, {
      headers: auth,
    });
    imp = ((await res.json()) as { data: Imp }).data;
    if (!['queued', 'running'].includes(imp.status)) break;
    if (performance.now() - lastLine > 5000) {
      lastLine = performance.now();
      status(
        `    ${imp.step}: ${fmt(imp.counts.commissions!.created!)} commissions, ${fmt(imp.counts.partners!.created!)} partners`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  beside?.stop();
  const during = beside ? await beside.done : null;

  const rows = Object.values(imp.counts).reduce((n, c) => n + c.created! + c.updated!, 0);
  const [stored] = await sql<{ commissions: number; partners: number }[]>`
    select (select count(*)::int from commissions where program_id = ${programId}) as commissions,
           (select count(*)::int from partner_programs where program_id = ${programId}) as partners`;
  const requestsMade = double.requests.length;
  const out = [
    `bench:import: Rewardful double on loopback, ${fmt(AFFILIATES)} affiliates, ${fmt(COMMISSIONS)} commissions` +
      `${values['source-limit'] ? ", at Rewardful's limit (45 requests / 30 s)" : ', no rate limit'}` +
      `${values.nice ? ', import worker at nice 10' : ''}`,
    `  import ${imp.status}${imp.error ? ` (${imp.error})` : ''} in ${seconds.toFixed(1)} s`,
    `  rows: ${fmt(rows)} (${Object.entries(imp.counts)
      .map(([k, c]) => `${k} ${fmt(c.created! + c.updated!)}`)
      .join(
        ', ',
      )}), ${fmt(rows / seconds)} rows/s, ${fmt(imp.counts.commissions!.created! / seconds)} commissions/s`,
    `  source: ${fmt(requestsMade)} requests (pages of 100); at Rewardful's 45 requests per 30 s they alone take ` +
      `${fmt((requestsMade * 30) / 45)} s`,
    `  stored: ${fmt(stored!.partners)} partners, ${fmt(stored!.commissions)} commissions`,
  ];
  if (baseline && during) {
    const rate = during.accepted / during.seconds;
    out.push(
      `  clicks: alone ${fmt(baseline.rate)}/s; during the import ${fmt(rate)}/s over ${during.seconds.toFixed(1)} s; ` +
        `ratio ${(rate / baseline.rate).toFixed(2)} (target >= 0.90)`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
  return imp.status === 'completed' && stored!.commissions === imp.counts.commissions!.created;
});
