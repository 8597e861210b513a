// Issue 11 item 3 (and item 1's Postgres half) against this file's own Postgres, stopped and started:
// web and the click worker started while it is down stay up, log that they wait, and become ready once it
// is back; a stop/start during a click load ends no process, loses and doubles nothing, and a lead sent
// while it is down is answered 503 + Retry-After (not a 500, not a hang). Waits are for conditions only.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort, startPostgres } from '../../scripts/lib/stack/stack.ts';
import type { PostgresServer } from '../../scripts/lib/stack/stack.ts';
import { createLogger } from '../../shared/logger.ts';
import { createSql } from '../../shared/db/sql.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { clickLoad } from '../helpers/load.ts';
import {
  createLink,
  createProgram,
  postJson,
  startServices,
  waitFor,
  waitForRecovery,
} from '../helpers/stack.ts';
import type { Services } from '../helpers/stack.ts';

const log = createLogger('faults-postgres-test', 'warn');

/** A Postgres of this file's own (stopping it touches no other test), migrated, and a client for it. */
async function ownPostgres(t: Test, name: string) {
  const dir = join(STACK_DIR, `${name}-${process.pid}`);
  const port = await freePort();
  const opts = { dir, port, database: 'svc', fast: true, log };
  let server: PostgresServer | null = await startPostgres(opts);
  await migrate(server.url, log);
  const sql = createSql(server.url, 4, 'svc-test');
  t.teardown(async () => {
    await sql.end({ timeout: 1 }).catch(() => {});
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    url: server.url,
    sql,
    async stop() {
      await server?.stop();
      server = null;
    },
    async start() {
      server = await startPostgres(opts);
    },
  };
}

function alive(svc: Services, t: Test, when: string) {
  for (const [name, p] of svc.procs) {
    const crash = svc.output.filter(
      (l) => l.startsWith(`[${name}]`) && /^\[\S+\] (\w*Error:|Node\.js v\d)/.test(l),
    );
    t.ok(
      p.child.exitCode === null && p.child.signalCode === null,
      `${name} is up ${when}${crash.length ? `: ${crash.slice(-3).join(' | ')}` : ''}`,
    );
  }
}

t.test('web and the click worker started while Postgres is down wait, then become ready', async (t) => {
  const pg = await ownPostgres(t, 'faults-pg-boot');
  await pg.stop();
  const svc = await startServices(t, [], { DATABASE_URL: pg.url, OPS_PORT: '0' });
  // Their own start-up bounds (60 s) may pass on a slow machine: the test waits for readiness itself.
  void svc.start('web').catch(() => {});
  void svc.start('click-worker').catch(() => {});
  await waitFor(
    'both processes to log that they wait for Postgres',
    async () =>
      svc.output.some((l) => l.startsWith('[web]') && /waiting for postgres/.test(l)) &&
      svc.output.some((l) => l.startsWith('[click-worker]') && /waiting for postgres/.test(l)),
    60_000,
  );
  alive(svc, t, 'while Postgres is down');
  t.same(
    svc.output.filter((l) => /^\[\S+\]\s+at /.test(l) || /"stack":/.test(l)),
    [],
    'no stack traces while waiting',
  );

  await pg.start();
  await waitForRecovery(svc);
  const program = await createProgram(pg.sql);
  const link = await createLink(pg.sql, program.id);
  const r = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://s.example/?aff=${link.shortLink}`,
  });
  t.equal(r.status, 200, 'a click is accepted');
  const clickId = r.body.click_id as string;
  await waitFor(
    'the click stored by the worker that waited',
    async () => (await pg.sql`select 1 from click_events where click_id = ${clickId}`).length === 1,
    60_000,
    200,
  );
  t.pass('stored');
});

t.test('Postgres stopped and started during a click load: no exit, nothing lost or doubled', async (t) => {
  const pg = await ownPostgres(t, 'faults-pg-load');
  const svc = await startServices(t, ['web', 'click-worker'], { DATABASE_URL: pg.url });
  const program = await createProgram(pg.sql);
  const links = await Promise.all([0, 1, 2].map(() => createLink(pg.sql, program.id)));
  const customer = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://s.example/?aff=${links[0]!.shortLink}`,
  });
  const load = clickLoad({ baseUrl: svc.baseUrl, links, concurrency: 8 });
  await load.acceptMore(200, 'before the Postgres stop');
  await pg.stop();
  // The ingress does not need Postgres for a cached link: clicks are still accepted (Kafka holds them).
  await load.acceptMore(50, 'while Postgres is down');
  // An outage longer than a few retries (the old code gave up after 6 attempts and the process died):
  // wait until a chunk of the click worker has been retried at least 8 times.
  const attempts = () =>
    svc.output
      .filter((l) => l.startsWith('[click-worker]') && l.includes('chunk waiting for a dependency'))
      .map((l) => Number(/"attempt":(\d+)/.exec(l)?.[1] ?? 0));
  await waitFor(
    'the click worker waiting out the outage',
    async () => Math.max(0, ...attempts()) >= 8,
    120_000,
    200,
  );
  const lead = await fetch(`${svc.baseUrl}/api/v1/track/lead`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${program.token}` },
    body: JSON.stringify({ click_id: customer.body.click_id, customer_key: 'pg-down' }),
    signal: AbortSignal.timeout(60_000),
  });
  t.equal(lead.status, 503, `a lead while Postgres is down: 503 (${await lead.text()})`);
  t.ok(lead.headers.get('retry-after'), 'with Retry-After');
  alive(svc, t, 'while Postgres is down');

  await pg.start();
  await load.acceptMore(200, 'after Postgres is back');
  const result = await load.stop();
  alive(svc, t, 'after the outage');

  const ids = result.accepted.map((a) => a.clickId);
  const rows = await waitFor(
    `all ${ids.length} accepted clicks persisted`,
    async () => {
      const r = await pg.sql<{ n: number }[]>`
        select count(*)::int as n from click_events where click_id = any(${ids}) group by click_id`;
      return r.length === ids.length ? r : null;
    },
    120_000,
    500,
  );
  t.equal(rows.filter((r) => r.n !== 1).length, 0, 'every accepted click stored exactly once');
  // Stragglers (produced, never answered) may land: counters must still equal rows.
  await waitFor(
    'counters equal stored clicks',
    async () => {
      const [c] = await pg.sql<{ bad: number }[]>`
        select count(*)::int as bad from referral_links l
        where l.program_id = ${program.id}
          and l.clicks <> (select count(*) from click_events e where e.link_id = l.id and not e.is_test)`;
      return c!.bad === 0;
    },
    60_000,
    500,
  );
  const [daily] = await pg.sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
  const [all] = await pg.sql<{ n: number }[]>`
    select count(*)::int as n from click_events where program_id = ${program.id} and not is_test`;
  t.equal(daily!.n, all!.n, 'daily rollup equals stored clicks');
});
