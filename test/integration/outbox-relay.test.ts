// The outbox relay (services/workers/relay): a row written in a committed transaction is published to its
// topic, a rolled-back one never is, rows of another deployment's prefix are left alone, and a relay killed
// with -9 mid-backlog loses nothing when it comes back (a row may be published twice: its id dedupes it).
import t from 'tap';
import { writeOutbox, outboxTopic } from '../../shared/db/outbox.ts';
import type { OutboxItem } from '../../shared/db/outbox.ts';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { readTopic } from '../helpers/kafka.ts';

t.test('the outbox relay publishes exactly the committed rows, and survives kill -9', async (t) => {
  const sql = testSql(t);
  const svc = await startServices(t, ['outbox-relay']);
  const mail = await readTopic(t, svc.prefix, 'mail');
  const events = await readTopic(t, svc.prefix, 'webhookEvents');
  const item = (topic: 'mail' | 'webhookEvents', id: string): OutboxItem => ({
    topic: outboxTopic(svc.prefix, topic),
    key: id,
    payload: { id },
  });
  const ids = (list: { value: string }[]) => list.map((m) => (JSON.parse(m.value) as { id: string }).id);
  const mine = [outboxTopic(svc.prefix, 'mail'), outboxTopic(svc.prefix, 'webhookEvents')];
  const waiting = async () =>
    Number((await sql`select count(*)::int as n from outbox where topic = any(${mine})`)[0]!.n);

  await sql.begin((tx) =>
    writeOutbox(tx, [item('mail', 'm1'), item('mail', 'm2'), item('webhookEvents', 'e1')]),
  );
  await sql
    .begin(async (tx) => {
      await writeOutbox(tx, [item('mail', 'rolled-back')]);
      throw new Error('roll back');
    })
    .catch(() => {});
  // Another deployment's row in the same database (the test files share one): not this relay's.
  const foreign = `other-${svc.prefix}mail`;
  await writeOutbox(sql, [{ topic: foreign, key: 'x', payload: { id: 'foreign' } }]);
  t.teardown(() => sql`delete from outbox where topic = ${foreign}`);

  await waitFor('the committed rows on their topics', async () => mail.length >= 2 && events.length >= 1);
  await waitFor('the outbox drained', async () => (await waiting()) === 0);
  // At least once: a produce that timed out while the new topic elected its leader is sent again.
  t.same([...new Set(ids(mail))].sort(), ['m1', 'm2'], 'mail: the committed rows, not the rolled-back one');
  t.same([...new Set(ids(events))], ['e1']);
  t.ok(
    [...mail, ...events].every((m) => m.key === (JSON.parse(m.value) as { id: string }).id),
    'each message keyed by its row key',
  );
  const [left] = await sql`select count(*)::int as n from outbox where topic = ${foreign}`;
  t.equal(left!.n, 1, "another prefix's row is left for its own relay");

  // A backlog, the relay killed while it works through it, then started again. Rows must still be waiting
  // at the kill whatever the machine's speed, so the test holds every tenth backlog row `for update` in a
  // transaction of its own from before the relay starts until after the kill: the relay's rounds skip them
  // (skip locked) and take the rest, and they are left for the restarted relay once released.
  await svc.kill('outbox-relay');
  const backlog = Array.from({ length: 3000 }, (_, i) => item(i % 2 ? 'mail' : 'webhookEvents', `b${i}`));
  await sql.begin((tx) => writeOutbox(tx, backlog));
  const heldKeys = backlog.filter((_, i) => i % 10 === 0).map((b) => b.key);
  const stillHeld = async () =>
    Number(
      (
        await sql`select count(*)::int as n from outbox
                  where topic = any(${mine}) and message_key = any(${heldKeys})`
      )[0]!.n,
    );
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: (n: number) => void;
  const holding = new Promise<number>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    const rows = await tx`select id from outbox
                          where topic = any(${mine}) and message_key = any(${heldKeys}) for update`;
    locked(rows.length);
    await released;
  });
  try {
    const n = await Promise.race([
      holding,
      holder.then(() => Promise.reject(new Error('the holding transaction ended before it held the rows'))),
    ]);
    t.equal(n, heldKeys.length, 'the test holds every tenth backlog row');
    await svc.start('outbox-relay');
    await waitFor('the relay under way', async () => (await waiting()) < 3000, 60_000, 5);
    await svc.kill('outbox-relay');
    t.equal(
      await stillHeld(),
      heldKeys.length,
      'killed with rows still waiting: the held ones, which the relay skipped',
    );
  } finally {
    release();
    await holder;
  }
  await svc.start('outbox-relay');
  await waitFor('the backlog drained', async () => (await waiting()) === 0, 120_000);
  await waitFor(
    'every backlog row published',
    async () => new Set([...ids(mail), ...ids(events)]).size >= 3 + backlog.length,
    60_000,
  );
  const published = new Set([...ids(mail), ...ids(events)]);
  t.ok(
    backlog.every((b) => published.has(b.payload.id)),
    'no row lost to the kill',
  );
  t.notOk(published.has('rolled-back'), 'the rolled-back row never published');
  t.comment(`published twice after the kill: ${mail.length + events.length - published.size}`);
});
