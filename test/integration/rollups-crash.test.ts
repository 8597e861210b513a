// Exactly-once holds for the rollups as for the events: the click worker killed with -9 twice while clicks
// and leads arrive, the attribution worker once while sales do (their chunks redelivered, the callers'
// 503s retried with the same event id or Idempotency-Key), and still every dimension of the breakdown and
// program_daily_stats equal a plain SQL aggregate over the raw events, and the clicks sent. Then both
// consumer groups are rewound to the start of their topics: every click, lead and sale is delivered
// again, and nothing changes.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMmdb } from '../helpers/mmdb-writer.ts';
import { createLink, createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';
import type { Services } from '../helpers/stack.ts';
import { geoNetworks, sendMix } from '../helpers/traffic-mix.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';

const sql = testSql(t);
const dir = mkdtempSync(join(tmpdir(), 'rollups-crash-'));
// Removed at exit, not at the root test's teardown: a worker restarted later still opens the file.
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const geoFile = join(dir, 'geo.mmdb');
writeFileSync(geoFile, buildMmdb(geoNetworks));

t.test(
  'kill -9 of the click and attribution workers mid-load: the rollups still equal the raw events',
  async (t) => {
    const svc: Services = await startServices(
      t,
      ['web', 'click-worker', 'attribution-worker', 'reversal-worker'],
      {
        GEOIP_IPV4_PATH: geoFile,
        GEOIP_IPV6_PATH: 'none',
        WORKER_CHUNK_SIZE: '20',
        KAFKA_SESSION_TIMEOUT_MS: '6000',
      },
    );
    const program = await createProgram(sql);
    const links = [
      await createLink(sql, program.id),
      await createLink(sql, program.id),
      await createLink(sql, program.id),
    ];
    const kills: string[] = [];
    // Not awaited: the mix goes on while the worker is down (its callers get 503s and retry). One crash at
    // a time: a second one waits until the worker the first one restarted runs.
    let restarts: Promise<unknown> = Promise.resolve();
    const crash = (name: 'click-worker' | 'attribution-worker') => {
      restarts = restarts.then(async () => {
        kills.push(name);
        await svc.kill(name);
        await new Promise((r) => setTimeout(r, 200));
        await svc.start(name);
      });
    };
    const mix = await sendMix({
      baseUrl: svc.baseUrl,
      program,
      links,
      seed: 7,
      clicks: 400,
      concurrency: 8,
      onProgress: (phase, n) => {
        if (phase === 'clicks' && (n === 120 || n === 280)) crash('click-worker');
        if (phase === 'sales' && n === 10) crash('attribution-worker');
      },
    });
    await restarts;
    t.same(kills, ['click-worker', 'click-worker', 'attribution-worker'], 'three kills');
    t.ok(mix.sales.length > 15, `sales after the kill (${mix.sales.length})`);
    await waitFor(
      'every click counted',
      async () => {
        const [r] = await sql<{ n: number }[]>`
        select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
        return r!.n >= mix.clicks.length;
      },
      180_000,
      250,
    );
    t.same((await checkProgram(sql, program.id, { first: null, last: null })).map(describe), [], 'equal');
    const [clicks] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_daily_breakdown
    where program_id = ${program.id} and dimension = 'country'`;
    t.equal(clicks!.n, mix.clicks.length, 'every click answered 200 counted once, by country');
    const [sales] = await sql<{ n: number; revenue: number }[]>`
    select coalesce(sum(sales), 0)::int as n, coalesce(sum(revenue_cents), 0)::int as revenue
    from program_daily_breakdown where program_id = ${program.id} and dimension = 'landing_page'`;
    t.equal(sales!.n, mix.sales.length, 'every sale counted once, by landing page');
    t.equal(
      sales!.revenue,
      mix.sales.reduce((s, x) => s + x.amount, 0),
      'and its revenue',
    );

    // Every message again: both groups rewound to the start of their topics.
    const snapshot = () => sql`
      select dimension, day::text, key, clicks::int, leads::int, conversions::int, sales::int,
             revenue_cents::int, commission_cents::int
      from program_daily_breakdown where program_id = ${program.id} order by 1, 2, 3`;
    const before = await snapshot();
    const kafka = createKafka(
      { kafkaBrokers: svc.env.KAFKA_BROKERS!.split(','), kafkaClientId: 'rollups-crash-test' },
      createLogger('test-kafka', 'silent'),
    );
    const admin = kafka.admin();
    await admin.connect();
    t.teardown(() => admin.disconnect());
    const groups = [
      { name: 'click-worker' as const, topic: topicName(svc.prefix, 'clicks') },
      { name: 'attribution-worker' as const, topic: topicName(svc.prefix, 'sales') },
    ];
    for (const g of groups) {
      await svc.stop(g.name);
      // The group must be empty; a stopped member's leave may take the broker a moment.
      await waitFor(
        `${g.name}'s group rewound`,
        () =>
          admin
            .resetOffsets({ groupId: `${svc.prefix}${g.name}`, topic: g.topic, earliest: true })
            .then(() => true),
        60_000,
        500,
      );
      await svc.start(g.name);
    }
    for (const g of groups) {
      await waitFor(
        `${g.name} delivered everything again`,
        async () => {
          const [high, committed] = await Promise.all([
            admin.fetchTopicOffsets(g.topic),
            admin.fetchOffsets({ groupId: `${svc.prefix}${g.name}`, topics: [g.topic] }),
          ]);
          const done = new Map(committed[0]!.partitions.map((p) => [p.partition, Number(p.offset)]));
          return high.every((p) => (done.get(p.partition) ?? -1) >= Number(p.high));
        },
        180_000,
        500,
      );
    }
    t.same(await snapshot(), before, 'every message delivered again: the breakdown did not move');
    t.same(
      (await checkProgram(sql, program.id, { first: null, last: null })).map(describe),
      [],
      'still equal',
    );
  },
);
