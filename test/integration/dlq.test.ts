// Dead letters an operator can act on: a click whose link does not exist yet is dead-lettered by the click
// worker (its customer row's foreign key), `npm run dlq -- list/show` show it with its original key,
// bytes and headers, the operator creates the missing link, `replay` re-produces it and the click counts
// once; a second replay (by id) records a second replay but still counts once; a replay of "what was
// never replayed" then finds nothing. The CLI runs as a child process, as an operator would run it.
import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import { Snowflake, formatClickId } from '../../shared/domain/ids.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { createLink, createProgram, stackEnv, startServices, testSql, waitFor } from '../helpers/stack.ts';

const sql = testSql(t);

function dlq(env: Record<string, string>, ...args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(ROOT, 'scripts/dlq.ts'), ...args],
      { env: { ...process.env, ...env, LOG_LEVEL: 'warn' } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function click(
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

t.test('dead-letter a click, fix its cause, replay it: it counts once, however often replayed', async (t) => {
  const svc = await startServices(t, ['click-worker']);
  const env = { ...stackEnv(), KAFKA_PREFIX: svc.prefix };
  const log = createLogger('test', 'warn');
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
    log,
  );
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const clicksTopic = topicName(svc.prefix, 'clicks');

  const program = await createProgram(sql);
  const existing = await createLink(sql, program.id);
  // A link id nobody has yet: the click's customer row cannot reference it, so the worker dead-letters it.
  const [reserved] = await sql<{ id: string }[]>`select nextval('referral_links_id_seq') as id`;
  const missing = { ...existing, id: Number(reserved!.id) };
  const sf = new Snowflake(4001);
  const poison = click(missing, sf);
  const value = JSON.stringify(poison);
  await producer.send({
    topic: clicksTopic,
    messages: [{ key: poison.click_id, value, headers: { 'x-trace': 'trace-1' } }],
  });
  const [letter] = await waitFor('the click dead-lettered', async () => {
    const r = await sql<{ id: string; step: string; reason: string }[]>`
      select id, step, reason from dead_letters where source_topic = ${clicksTopic} and message_key = ${Buffer.from(poison.click_id!)}`;
    return r.length === 1 ? r : null;
  });
  t.equal(letter!.step, 'persist');
  t.match(letter!.reason, /foreign key/);

  const listed = await dlq(env, 'list', '--topic', 'clicks');
  t.equal(listed.code, 0, listed.stderr);
  t.match(
    listed.stdout,
    new RegExp(`^${letter!.id}\\t.*${clicksTopic.replace(/\./g, '\\.')}/\\d+@\\d+\\tpersist\\t0\\t`, 'm'),
  );
  const shown = await dlq(env, 'show', letter!.id);
  t.equal(shown.code, 0, shown.stderr);
  t.match(shown.stdout, `key:        ${poison.click_id}`);
  t.match(shown.stdout, 'x-trace: trace-1', 'the original headers are kept');
  t.match(shown.stdout, `"event_id": "${poison.event_id}"`, 'the original value, pretty-printed');
  t.match(shown.stdout, 'replays:    never');
  t.equal((await dlq(env, 'show', '999999999')).code, 1, 'an unknown id exits 1');
  t.equal((await dlq(env, 'replay', '--since', 'soon')).code, 2, 'a bad --since exits 2');

  const dry = await dlq(env, 'replay', '--topic', 'clicks', '--dry-run');
  t.match(dry.stdout, `would replay ${letter!.id} to ${clicksTopic}`);
  t.equal((await sql`select 1 from dead_letter_replays`).length, 0, 'a dry run replays nothing');

  // The fix: the link the click names now exists.
  await sql`
    insert into referral_links (id, short_link, program_id, partner_id, partner_program_id, status)
    values (${missing.id}, ${`fixed-${missing.id}`}, ${program.id}, ${existing.partnerId}, ${existing.partnerProgramId}, 'active')`;

  const first = await dlq(env, 'replay', '--topic', 'clicks');
  t.equal(first.code, 0, first.stderr);
  t.match(first.stderr, 'replayed 1/1', 'a progress line');
  t.match(first.stdout, `replayed 1 dead letter(s): ${letter!.id}`);
  await waitFor(
    'the replayed click stored',
    async () => (await sql`select 1 from click_events where event_id = ${poison.event_id}`).length === 1,
  );
  const again = await dlq(env, 'replay', '--topic', 'clicks');
  t.match(again.stdout, 'nothing to replay', 'replayed letters are not selected again by default');
  const byId = await dlq(env, 'replay', '--id', letter!.id);
  t.equal(byId.code, 0, byId.stderr);
  // A later click with the same key lands on the same partition behind the second replay: once it is
  // stored, the second replay has been consumed.
  const sentinel = { ...click(existing, sf), click_id: poison.click_id };
  await producer.send({
    topic: clicksTopic,
    messages: [{ key: sentinel.click_id, value: JSON.stringify(sentinel) }],
  });
  await waitFor(
    'the sentinel stored',
    async () => (await sql`select 1 from click_events where event_id = ${sentinel.event_id}`).length === 1,
  );
  const [events] = await sql`select count(*)::int as n from click_events where event_id = ${poison.event_id}`;
  t.equal(events!.n, 1, 'the replayed click is stored once');
  const [link] = await sql`select clicks::int from referral_links where id = ${missing.id}`;
  t.equal(link!.clicks, 1, 'and counted once on its link');
  const [customers] = await sql`select count(*)::int as n from customers where link_id = ${missing.id}`;
  t.equal(customers!.n, 1, 'one customer');
  const replays = await sql`select topic from dead_letter_replays where dead_letter_id = ${letter!.id}`;
  t.same(
    replays.map((r) => r.topic),
    [clicksTopic, clicksTopic],
    'both replays kept in the history',
  );
  const [letters] = await sql`
    select count(*)::int as n from dead_letters where message_key = ${Buffer.from(poison.click_id!)}`;
  t.equal(letters!.n, 1, 'not dead-lettered again');
  const after = await dlq(env, 'show', letter!.id);
  t.match(after.stdout, new RegExp(`replays: *\\n  \\S+ to ${clicksTopic.replace(/\./g, '\\.')} by `));
});
