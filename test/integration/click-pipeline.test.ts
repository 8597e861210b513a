// The click pipeline's exactly-once properties on the real broker and database: counters equal accepted
// clicks; a message delivered twice counts once; a redelivered chunk changes nothing; poison goes to the
// dead-letter topic and table with its original bytes while the partition moves on.
import t from 'tap';
import { readdir } from 'node:fs/promises';
import { createKafka, readTopic } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import { Snowflake, formatClickId } from '../../shared/domain/ids.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import { createPersistClicksStep } from '../../services/workers/clicks/steps/persist-clicks.ts';
import type { EnrichedClick } from '../../services/workers/clicks/steps/enrich-click.ts';
import {
  createLink,
  createProgram,
  postJson,
  startServices,
  stackEnv,
  testSql,
  waitFor,
} from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const log = createLogger('test', 'warn');
const kafka = createKafka({ kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' }, log);
const producer = kafka.producer();
await producer.connect();
t.teardown(() => producer.disconnect());
const clicksTopic = topicName(svc.prefix, 'clicks');

const count = async (q: Promise<{ n: number }[]>) => (await q)[0]!.n;

t.test(
  'counters equal accepted clicks: events, links, partner-programs, daily rollup, customers',
  async (t) => {
    const program = await createProgram(sql);
    const links = await Promise.all([0, 1, 2].map(() => createLink(sql, program.id)));
    const testLink = await createLink(sql, program.id);
    const accepted = new Map<number, string[]>(links.map((l) => [l.id, []]));
    const sends: Promise<void>[] = [];
    for (let i = 0; i < 300; i++) {
      const l = links[i % 3]!;
      sends.push(
        postJson(`${svc.baseUrl}/api/v1/track/click`, {
          affiliate_url: `https://s.example/?aff=${l.shortLink}`,
        }).then((r) => {
          if (r.status === 200 && r.body.success === true)
            accepted.get(l.id)!.push(r.body.click_id as string);
        }),
      );
      if (i % 30 === 0) {
        sends.push(
          postJson(`${svc.baseUrl}/api/v1/track/click`, {
            affiliate_url: `https://s.example/?aff=${testLink.shortLink}`,
            additional_data: { test_mode: true },
          }).then(() => {}),
        );
      }
    }
    await Promise.all(sends);
    const total = [...accepted.values()].reduce((a, v) => a + v.length, 0);
    t.equal(total, 300, 'every click accepted');

    await waitFor('all clicks persisted', async () => {
      const n = await count(
        sql`select count(*)::int as n from click_events where program_id = ${program.id} and not is_test`,
      );
      return n === total;
    });
    await new Promise((r) => setTimeout(r, 300));
    for (const l of links) {
      const [row] = await sql`select clicks::int, last_clicked from referral_links where id = ${l.id}`;
      t.equal(row!.clicks, accepted.get(l.id)!.length, `link ${l.shortLink} clicks`);
      t.ok(row!.last_clicked, 'last_clicked set');
      const [pp] = await sql`select clicks::int from partner_programs where id = ${l.partnerProgramId}`;
      t.equal(pp!.clicks, accepted.get(l.id)!.length, 'partner-program clicks');
    }
    const [daily] =
      await sql`select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
    t.equal(daily!.n, total, 'daily rollup counts every non-test click once');
    t.equal(
      await count(sql`select count(*)::int as n from customers where program_id = ${program.id}`),
      total,
    );
    const [dup] =
      await sql`select count(*)::int as n from (select click_id from click_events where program_id = ${program.id} and not is_test group by click_id having count(*) > 1) d`;
    t.equal(dup!.n, 0, 'no click event twice');
    const tests = await count(
      sql`select count(*)::int as n from click_events where link_id = ${testLink.id} and is_test`,
    );
    t.equal(tests, 10, 'test clicks stored');
    const [tl] = await sql`select clicks::int from referral_links where id = ${testLink.id}`;
    t.equal(tl!.clicks, 0, 'test clicks touch no counter');
  },
);

function message(
  link: { id: number; partnerId: number; partnerProgramId: number; programId: number },
  sf: Snowflake,
): ClickMessage {
  const { id, ms } = sf.next();
  return {
    v: 1,
    type: 'click',
    event_id: id.toString(),
    ts: ms,
    program_id: link.programId,
    link_id: link.id,
    partner_id: link.partnerId,
    partner_program_id: link.partnerProgramId,
    click_id: formatClickId(link.partnerProgramId, id),
    is_test: false,
    ip: '8.8.4.4',
    user_agent: null,
    page_url: null,
    page_title: null,
    referrer_url: null,
    session_id: null,
    screen_resolution: null,
    viewport_size: null,
    language: null,
    timezone: null,
  };
}

t.test('the same message delivered twice is one click', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const sf = new Snowflake(4001);
  const msgs = [message(link, sf), message(link, sf)];
  for (const m of msgs) {
    const value = JSON.stringify(m);
    // Twice, as a producer retry or a replay would: separate sends, possibly different batches.
    await producer.send({ topic: clicksTopic, messages: [{ key: m.click_id, value }] });
    await producer.send({ topic: clicksTopic, messages: [{ key: m.click_id, value }] });
  }
  // A later sentinel on the same key proves the duplicates have been consumed.
  const sentinel = message(link, sf);
  sentinel.click_id = msgs[1]!.click_id;
  await producer.send({
    topic: clicksTopic,
    messages: [{ key: sentinel.click_id, value: JSON.stringify(sentinel) }],
  });
  await waitFor(
    'sentinel persisted',
    async () => (await sql`select 1 from click_events where event_id = ${sentinel.event_id}`).length === 1,
  );
  t.equal(await count(sql`select count(*)::int as n from click_events where link_id = ${link.id}`), 3);
  const [l] = await sql`select clicks::int from referral_links where id = ${link.id}`;
  t.equal(l!.clicks, 3, 'link counted 3, not 5');
  const [d] = await sql`select clicks::int from program_daily_stats where program_id = ${program.id}`;
  t.equal(d!.clicks, 3);
});

t.test('a redelivered chunk changes nothing (persist step run twice on the same chunk)', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const sf = new Snowflake(4002);
  const persist = createPersistClicksStep({ sql });
  const chunk: EnrichedClick[] = Array.from({ length: 50 }, () => ({
    ...message(link, sf),
    device_type: 'desktop',
    device_os: null,
    browser_name: null,
    geo_country: null,
    geo_region: null,
    geo_city: null,
  }));
  const first = await persist(chunk);
  t.same(first, { inserted: 50, duplicates: 0, counted: 50, filtered: 0 });
  const second = await persist(chunk);
  t.same(second, { inserted: 0, duplicates: 50, counted: 0, filtered: 0 });
  const [l] = await sql`select clicks::int from referral_links where id = ${link.id}`;
  t.equal(l!.clicks, 50);
  const [pp] = await sql`select clicks::int from partner_programs where id = ${link.partnerProgramId}`;
  t.equal(pp!.clicks, 50);
  t.equal(await count(sql`select count(*)::int as n from customers where link_id = ${link.id}`), 50);
});

t.test(
  'poison goes to the dead-letter topic and table with its bytes and reason; the partition moves on',
  async (t) => {
    const program = await createProgram(sql);
    const link = await createLink(sql, program.id);
    const sf = new Snowflake(4003);
    const poison = [
      { key: 'p1', value: '{this is not json' },
      { key: 'p2', value: JSON.stringify({ v: 1, type: 'click', event_id: 'x' }) },
      {
        key: 'p3',
        value: JSON.stringify({ ...message(link, sf), page_url: 'nul\u0000byte', ts: 'yesterday' }),
      },
    ];
    // Everything on one partition, poison first: the good click after it must still be processed.
    const good = message(link, sf);
    await producer.send({
      topic: clicksTopic,
      messages: [...poison, { key: 'g', value: JSON.stringify(good) }].map((m) => ({ ...m, partition: 0 })),
    });
    await waitFor(
      'good click after the poison',
      async () => (await sql`select 1 from click_events where event_id = ${good.event_id}`).length === 1,
    );
    const rows = await waitFor('dead letters recorded', async () => {
      const r = await sql<{ step: string; reason: string; payload: Buffer; message_key: Buffer }[]>`
      select step, reason, payload, message_key from dead_letters where source_topic = ${clicksTopic} order by source_offset`;
      return r.length === 3 ? r : null;
    });
    t.same(
      rows.map((r) => r.message_key.toString()),
      ['p1', 'p2', 'p3'],
    );
    t.same(
      rows.map((r) => r.payload.toString()),
      poison.map((p) => p.value),
      'original bytes kept',
    );
    t.same(
      rows.map((r) => r.reason),
      ['not JSON', 'bad event_id', 'bad ts'],
    );
    t.ok(rows.every((r) => r.step === 'parse'));

    const seen: { key: string; reason: string; offset: string }[] = [];
    const reader = await readTopic(
      kafka,
      { topic: topicName(svc.prefix, 'deadLetter'), groupId: `${svc.prefix}dlq-reader` },
      (m) => {
        seen.push({
          key: m.key!.toString(),
          reason: m.headers!['dlq-reason']!.toString(),
          offset: m.headers!['dlq-source-offset']!.toString(),
        });
      },
    );
    await waitFor('3 messages on the dead-letter topic', async () => seen.length >= 3, 30_000);
    await reader.close();
    t.same(
      seen.map((s) => s.key),
      ['p1', 'p2', 'p3'],
    );
    t.same(
      seen.map((s) => s.reason),
      ['not JSON', 'bad event_id', 'bad ts'],
    );
  },
);

t.test('a NUL byte in a text field is stripped at the ingress, not dead-lettered', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const res = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://s.example/?aff=${link.shortLink}`,
    page_title: 'a\u0000b',
  });
  t.equal(res.status, 200);
  const row = await waitFor('persisted', async () => {
    const [r] =
      await sql`select page_title from click_events where click_id = ${res.body.click_id as string}`;
    return r;
  });
  t.equal(row.page_title, 'ab');
});

t.test(
  'migrations: concurrent runners serialise on the advisory lock; a changed applied file is refused',
  async (t) => {
    const { migrate } = await import('../../shared/db/migrate.ts');
    const name = `mig_${Date.now()}`;
    await sql.unsafe(`create database ${name}`);
    t.teardown(() => sql.unsafe(`drop database if exists ${name} with (force)`));
    const url = stackEnv().DATABASE_URL.replace(/\/[^/]+$/, `/${name}`);
    const quiet = { info: () => {} };
    const [a, b] = await Promise.all([migrate(url, quiet), migrate(url, quiet)]);
    const files = (await readdir(new URL('../../shared/db/migrations/', import.meta.url))).filter((f) =>
      f.endsWith('.sql'),
    );
    t.same([...a, ...b].sort(), files.sort(), 'each migration applied exactly once between the two');
    t.same(await migrate(url, quiet), [], 'a third run has nothing to do');
    const other = (await import('../../shared/db/sql.ts')).createSql(url, 1);
    await other`update schema_migrations set checksum = 'tampered'`;
    await other.end();
    await t.rejects(migrate(url, quiet), /changed after it was applied/);
  },
);

t.test('concurrent chunks over the same links do not deadlock (FK KEY SHARE vs row locks)', async (t) => {
  const program = await createProgram(sql);
  const links = await Promise.all([0, 1, 2, 3].map(() => createLink(sql, program.id)));
  const persist = createPersistClicksStep({ sql });
  const chunk = (node: number) => {
    const sf = new Snowflake(node);
    return Array.from({ length: 200 }, (_, i) => ({
      ...message(links[(i * 7 + node) % links.length]!, sf),
      device_type: 'desktop',
      device_os: null,
      browser_name: null,
      geo_country: null,
      geo_region: null,
      geo_city: null,
    }));
  };
  const errors: string[] = [];
  await Promise.all(
    [4010, 4011, 4012, 4013, 4014, 4015].map((node) =>
      persist(chunk(node)).catch((e: Error & { code?: string }) => errors.push(`${e.code} ${e.message}`)),
    ),
  );
  t.same(errors, [], 'no deadlock (40P01) between concurrent chunks');
  const [n] =
    await sql`select coalesce(sum(clicks), 0)::int as n from referral_links where program_id = ${program.id}`;
  t.equal(n!.n, 1200);
});

t.test(
  "records without the type header (the previous version's, during an upgrade) are told apart by their JSON type",
  async (t) => {
    const program = await createProgram(sql);
    const link = await createLink(sql, program.id);
    const sf = new Snowflake(4009);
    // A click that carries the text of the old lead prefix, and a lead whose fields are in another order
    // than the ingress's builder: a byte prefix would have got both wrong.
    const click = { ...message(link, sf), page_title: '{"v":1,"type":"lead"' };
    const requestId = `legacy-lead-${click.event_id}`;
    const lead = {
      type: 'lead',
      v: 1,
      request_id: requestId,
      ts: Date.now(),
      token_program_id: program.id,
      program_id_hint: null,
      click_id: click.click_id,
      customer_key: `legacy-${click.event_id}`,
      email: null,
      event_name: null,
      session_id: null,
      page_url: null,
      is_test: false,
    };
    await producer.send({
      topic: clicksTopic,
      messages: [click, lead].map((m) => ({ key: click.click_id, value: JSON.stringify(m) })),
    });
    const outcome = await waitFor('the legacy lead applied', async () => {
      const [o] = await sql<{ status_code: number; body: { success?: boolean } }[]>`
        select status_code, body from command_outcomes where request_id = ${requestId}`;
      return o ?? null;
    });
    t.same([outcome.status_code, outcome.body.success], [200, true], 'applied as a lead');
    const [c] = await sql<{ customer_status: string; page_title: string }[]>`
      select c.customer_status, e.page_title from customers c
      join click_events e on e.click_id = c.click_id where c.click_id = ${click.click_id}`;
    t.same(c, { customer_status: 'lead', page_title: click.page_title }, 'the click stored as a click');
    t.equal(
      await count(
        sql`select count(*)::int as n from dead_letters where message_key = convert_to(${click.click_id}, 'UTF8')`,
      ),
      0,
      'nothing dead-lettered',
    );
  },
);
