// Two mail workers share a backlog of mail (skip locked), and each is killed with -9 at a random moment in
// the middle of it. Afterwards every mail was delivered and is recorded `sent`. A mail goes out twice only
// when the SMTP server accepted it and the worker died before it recorded that (shared/delivery); the test
// counts those and bounds them by what the killed workers had in flight (MAIL_CONCURRENCY each). Without a
// kill, two workers never send a mail twice.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { queueMail } from '../../shared/db/mail.ts';
import type { MailInput } from '../../shared/db/mail.ts';
import { lineWatcher, spawnService } from '../../scripts/lib/stack/services.ts';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { freePort } from '../../scripts/lib/stack/stack.ts';
import { startSmtpSink } from '../helpers/smtp.ts';

const CONCURRENCY = 5;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sql = testSql(t);
const sink = await startSmtpSink(t);
const svc = await startServices(t, ['outbox-relay'], {
  SMTP_URL: sink.url,
  MAIL_POLL_MS: '100',
  MAIL_CONCURRENCY: String(CONCURRENCY),
  // Far above a local send even on a slow machine (a timed-out attempt that the sink accepted later would
  // be a second delivery). The lease of a killed worker's mails is twice this: taken again 30 s later.
  MAIL_SEND_TIMEOUT_MS: '15000',
});
const run = randomBytes(4).toString('hex');
const mailIds = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `test:${run}:${tag}:${i}`);
const queue = (ids: string[]) =>
  sql.begin((tx) =>
    queueMail(
      tx,
      svc.prefix,
      ids.map((id, i): MailInput => ({
        id,
        to: `p${i % 50}-${run}@example.com`,
        template: 'magic_link',
        data: { url: `${svc.baseUrl}/partner/magic/${id}` },
        workspace_id: null,
      })),
    ),
  );
const deliveredIds = () => sink.messages.map((m) => m.headers['x-svc-mail-id']!);
const countIn = (ids: string[]) => {
  const want = new Set(ids);
  return deliveredIds().filter((id) => want.has(id)).length;
};
const sent = async (ids: string[]) =>
  (
    await sql<
      { n: number }[]
    >`select count(*)::int as n from mail_log where id = any(${ids}) and status = 'sent'`
  )[0]!.n;

/** A second mail worker (startServices keeps one process per name), with its /metrics on `opsPort`. */
async function secondWorker(opsPort: number) {
  const watch = lineWatcher();
  const p = spawnService('mail-worker', {
    env: { ...svc.env, LOG_LEVEL: 'info', OPS_PORT: String(opsPort) },
    onLine: (line) => watch.onLine(line),
  });
  t.teardown(() => p.stop());
  await watch.waitFor(/mail-worker running/, 60_000);
  return p;
}

t.test('two workers share a backlog: every mail sent once', async (t) => {
  const ids = mailIds(200, 'shared');
  await svc.start('mail-worker');
  const opsPort = await freePort();
  const b = await secondWorker(opsPort);
  // Both workers sending by construction: the sink answers nothing until more mails wait for an answer
  // than one worker sends at once (a fast first worker had sent all 200 before the second one started).
  sink.holdAfter(0);
  await queue(ids);
  await waitFor('both workers sending', async () => sink.held > CONCURRENCY, 120_000, 20);
  sink.release();
  await waitFor('all recorded sent', async () => (await sent(ids)) === ids.length, 180_000, 200);
  const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
  const attempts = (outcome: string) =>
    Number(
      new RegExp(
        `^svc_delivery_attempts_total\\{[^}]*queue="mail"[^}]*outcome="${outcome}"[^}]*\\} (\\d+)$`,
        'm',
      ).exec(metrics)?.[1] ?? NaN,
    );
  t.ok(attempts('delivered') > 0, `the second worker counts what it sent (${attempts('delivered')})`);
  t.equal(attempts('failed'), 0, 'and no failure');
  const rows = await sql`
    select attempts, last_error, count(*)::int as n from mail_log where id = any(${ids})
    group by attempts, last_error`;
  t.same(rows, [{ attempts: 1, last_error: null, n: ids.length }], 'each in one attempt');
  t.equal(countIn(ids), ids.length, 'each delivered exactly once');
  t.equal(new Set(deliveredIds().filter((id) => ids.includes(id))).size, ids.length, 'none missing');
  await b.stop();
  await svc.stop('mail-worker');
});

t.test('kill -9 mid-backlog, twice: nothing lost, a duplicate only where SMTP had accepted', async (t) => {
  const ids = mailIds(600, 'crash');
  // Mid-backlog by construction, whatever the machine's speed: the sink accepts 400 of the 600 and then
  // leaves every mail unanswered until both kills have happened (on a fast machine the workers had sent
  // all 600 before the second kill). Held mails of a killed worker were never accepted: taken again later.
  sink.holdAfter(400);
  await queue(ids);
  await svc.start('mail-worker');
  const b = await secondWorker(await freePort());
  // Each kill at a random moment while mail flows (not right after a delivery, which would aim at the
  // window between the server's acceptance and the UPDATE that records it).
  const randomMoment = () => sleep(200 + Math.random() * 800);
  await waitFor('the workers under way', async () => countIn(ids) >= 60, 120_000, 50);
  await randomMoment();
  await svc.kill('mail-worker');
  await waitFor('the other worker carrying on', async () => countIn(ids) >= 250, 120_000, 50);
  await randomMoment();
  await b.kill();
  const atKill = countIn(ids);
  t.ok(atKill < ids.length, `killed with mail still waiting (${atKill} of ${ids.length} delivered)`);
  // The killed workers' held mails are dropped once the sink sees their connections close; released
  // before that, they would count as accepted by a server whose answer never reached anyone.
  await waitFor('the killed workers disconnected', async () => sink.held === 0, 60_000, 20);
  sink.release();
  await svc.start('mail-worker');
  await waitFor('every mail recorded sent', async () => (await sent(ids)) === ids.length, 300_000, 200);

  const delivered = deliveredIds().filter((id) => ids.includes(id));
  const distinct = new Set(delivered);
  t.equal(distinct.size, ids.length, 'every mail delivered');
  const twice = delivered.length - distinct.size;
  t.ok(
    twice <= 2 * CONCURRENCY,
    `at most what the two killed workers had in flight went out twice (${twice})`,
  );
  const [retaken] = await sql<{ n: number }[]>`
    select count(*)::int as n from mail_log where id = any(${ids}) and attempts > 1`;
  t.comment(
    `${ids.length} mails, 2 kills: ${retaken!.n} taken again after their lease ran out, ${twice} delivered twice`,
  );
  t.ok(retaken!.n >= twice, 'a mail delivered twice is one whose lease ran out');
});
