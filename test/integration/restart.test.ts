// Invariant 1 beyond process kills: a kill -9 of the Kafka broker (restarted on the same data) and a
// Postgres crash as the clients see it (every backend terminated), both during a click load. Afterwards
// every click answered 200 is stored exactly once and every counter equals its rows. The test has a
// database of its own, so terminating "every backend" cannot touch the test files running beside it.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import type { KafkaServer } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { clickLoad } from '../helpers/load.ts';
import { createLink, createProgram, ownDatabase, startServices, waitFor } from '../helpers/stack.ts';

const db = await ownDatabase(t);
const sql = db.sql;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = createLogger('restart-test', 'warn');

t.test('kill -9 of the broker and a Postgres crash mid-load lose and double nothing', async (t) => {
  const dir = join(STACK_DIR, `restart-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker: KafkaServer = await startKafka({ dir, ...ports, log });
  t.teardown(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const svc = await startServices(t, ['web', 'click-worker'], {
    KAFKA_BROKERS: broker.brokers,
    ...db.env,
  });
  const program = await createProgram(sql);
  const links = await Promise.all([0, 1, 2].map(() => createLink(sql, program.id)));

  // Each phase waits for clicks accepted, never for a fixed time: on a slow machine the broker alone can
  // take 14 s to come back, and the test then simply runs longer.
  const load = clickLoad({ baseUrl: svc.baseUrl, links, concurrency: 12 });
  await load.acceptMore(200, 'before the broker kill');
  broker.kill();
  const killed = broker.process;
  if (killed.exitCode === null && killed.signalCode === null)
    await new Promise((r) => killed.once('exit', r));
  const duringOutage = load.result.accepted.length;
  await sleep(1500);
  broker = await startKafka({ dir, ...ports, log });
  await load.acceptMore(200, 'after the broker restart');
  // A Postgres crash as every client sees it: all connections of the database dropped at once.
  const [{ n: dropped }] = (await sql`
    select count(*)::int as n from (
      select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
    ) k`) as unknown as [{ n: number }];
  const beforeDbCrash = load.result.accepted.length;
  await load.acceptMore(200, 'after the Postgres crash');
  const result = await load.stop();

  t.ok(dropped > 0, `Postgres connections terminated (${dropped})`);
  for (const [name, p] of svc.procs) {
    const crash = svc.output.filter(
      (l) => l.startsWith(`[${name}]`) && /^\[\S+\] (\w*Error:|Node\.js v\d)/.test(l),
    );
    t.ok(
      p.child.exitCode === null && p.child.signalCode === null,
      `${name} survived both faults${crash.length ? `: ${crash.slice(-3).join(' | ')}` : ''}`,
    );
  }
  t.ok(
    result.accepted.length >= beforeDbCrash + 200 && beforeDbCrash >= duringOutage + 200,
    `a load across both faults (${result.accepted.length} accepted, ${result.failed} failed while the broker was down)`,
  );
  const ids = result.accepted.map((a) => a.clickId);
  t.equal(new Set(ids).size, ids.length, 'every accepted click has its own click_id');
  // When a click is missing, the test prints which and the services' last lines: the one loss this test
  // found (stop 14) was a kafkajs idempotent-producer drop, reproduced on its own in producer-lost-ack.test.ts.
  let missing: typeof result.accepted = [];
  const rows = await waitFor(
    `all ${ids.length} accepted clicks persisted`,
    async () => {
      const r = await sql<{ n: number }[]>`
        select count(*)::int as n from click_events where program_id = ${program.id} and click_id = any(${ids}) group by click_id`;
      return r.length === ids.length ? r : null;
    },
    120_000,
    500,
  ).catch(async () => {
    const found = await sql<{ click_id: string }[]>`
      select click_id from click_events where program_id = ${program.id} and click_id = any(${ids})`;
    const have = new Set(found.map((r) => r.click_id));
    missing = result.accepted.filter((a) => !have.has(a.clickId));
    t.comment(`missing ${missing.length}: ${JSON.stringify(missing.slice(0, 10))}`);
    t.comment(svc.output.slice(-80).join('\n'));
    return sql<{ n: number }[]>`
      select count(*)::int as n from click_events where program_id = ${program.id} and click_id = any(${ids}) group by click_id`;
  });
  t.equal(missing.length, 0, 'every accepted click stored');
  t.equal(rows.filter((r) => r.n !== 1).length, 0, 'every accepted click stored exactly once');
  await sleep(1000);
  for (const l of links) {
    const [c] = await sql`
      select l.clicks::int as counter, (select count(*)::int from click_events e where e.link_id = l.id) as stored
      from referral_links l where l.id = ${l.id}`;
    t.equal(c!.counter, c!.stored, `link ${l.shortLink}: clicks equals its stored events`);
  }
  const [daily] =
    await sql`select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
  const [all] = await sql`select count(*)::int as n from click_events where program_id = ${program.id}`;
  t.equal(daily!.n, all!.n, 'daily rollup equals stored clicks');
});
