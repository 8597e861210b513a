// The mail worker end to end, against a real SMTP receiver (test/helpers/smtp.ts): a mail queued in a
// committed transaction arrives once, also when the relay publishes it twice, and a rolled-back one never;
// a receiver that refuses and then accepts gets the mail after retries, recorded in the mail log; one that
// never accepts makes the mail `failed` after the last attempt, with the advertiser's notification and the
// list showing it. The schedule is shortened through configuration (MAIL_RETRY_DELAYS), not code paths.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { queueMail } from '../../shared/db/mail.ts';
import type { MailInput } from '../../shared/db/mail.ts';
import { outboxTopic, writeOutbox } from '../../shared/db/outbox.ts';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { startSmtpSink } from '../helpers/smtp.ts';
import type { SinkMail } from '../helpers/smtp.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';

const sql = testSql(t);
const sink = await startSmtpSink(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'mail-worker', 'notification-worker'], {
  SMTP_URL: sink.url,
  // 4 attempts, a second apart (±20 %).
  MAIL_RETRY_DELAYS: '1s,1s,1s',
  MAIL_POLL_MS: '100',
});
const owner = await signup(svc, { workspace: 'Mail & Co' });
const uniq = () => randomBytes(5).toString('hex');
const mailId = (m: SinkMail) => m.headers['x-svc-mail-id'];

const invite = (id: string, to: string, programName = 'Shoes'): MailInput => ({
  id,
  to,
  template: 'partner_invite',
  data: {
    url: `${svc.baseUrl}/partner/invite/pinv_${id}`,
    program_name: programName,
    partner_name: 'Ada',
    workspace_name: 'Mail & Co',
  },
  workspace_id: owner.workspaceId,
});
const queue = (mails: MailInput[]) => sql.begin((tx) => queueMail(tx, svc.prefix, mails));
const logRow = async (id: string) =>
  (
    await sql<{ status: string; attempts: number; last_error: string | null; topic: string }[]>`
    select status, attempts, last_error, topic from mail_log where id = ${id}`
  )[0];

t.test('a committed mail arrives once, also when published twice; a rolled-back one never', async (t) => {
  const to = `ada-${uniq()}@example.com`;
  const [committed, rolledBack, twice, sentinel] = ['c', 'r', 'd', 's'].map((k) => `test:${uniq()}:${k}`);
  await queue([invite(committed!, to, 'Shoes <b>&</b> "Socks"')]);
  await sql
    .begin(async (tx) => {
      await queueMail(tx, svc.prefix, [invite(rolledBack!, to)]);
      throw new Error('roll back');
    })
    .catch(() => {});
  // The same outbox row twice, as a relay that died after the broker's acknowledgement publishes it.
  const row = {
    topic: outboxTopic(svc.prefix, 'mail'),
    key: to,
    payload: { ...invite(twice!, to), created_at: new Date().toISOString() },
  };
  await writeOutbox(sql, [row]);
  await writeOutbox(sql, [row]);
  // Same recipient, same partition, queued last: once it is recorded, both copies were consumed before it.
  // The worker sends the mails of one round concurrently (MAIL_CONCURRENCY), so the sentinel may arrive
  // before the others: wait for each.
  await queue([invite(sentinel!, to)]);
  for (const id of [committed, twice, sentinel]) await sink.waitForMail((m) => mailId(m) === id);

  const ids = sink.messages.filter((m) => m.to.includes(to)).map(mailId);
  t.same(ids.filter((id) => id === committed).length, 1, 'the committed mail, once');
  t.same(ids.filter((id) => id === twice).length, 1, 'the row published twice, sent once');
  t.notOk(ids.includes(rolledBack), 'the rolled-back mail never');
  // The queue records a result after the SMTP answer (in the next batch): the row leaves 'sending' then.
  const recorded = await waitFor('the twice-published mail recorded', async () => {
    const r = await logRow(twice!);
    return r && r.status !== 'sending' ? r : null;
  });
  t.match(recorded, { status: 'sent', attempts: 1, last_error: null });
  t.notOk(await logRow(rolledBack!), 'nor recorded');
  const [kept] = await sql`select message->'data' as data from mail_log where id = ${twice!}`;
  t.notOk('url' in kept!.data, 'a sent mail keeps no link (its token) in the log');
  t.equal(kept!.data.program_name, 'Shoes', 'the rest of it stays');

  // Published once more after it was sent (a relay that died long after its produce): still one mail.
  await writeOutbox(sql, [row]);
  const sentinel2 = `test:${uniq()}:s2`;
  await queue([invite(sentinel2, to)]);
  await sink.waitForMail((m) => mailId(m) === sentinel2);
  t.equal(
    sink.messages.filter((m) => mailId(m) === twice).length,
    1,
    'a copy published after the mail was sent is not sent again',
  );

  const mail = sink.messages.find((m) => mailId(m) === committed)!;
  const url = `${svc.baseUrl}/partner/invite/pinv_${committed}`;
  t.equal(mail.subject, `You're invited to the Shoes <b>&</b> "Socks" affiliate program`);
  t.ok(mail.links.includes(url), 'the plain-text body holds the absolute link');
  t.match(mail.text, /Hi Ada,/);
  t.match(mail.html, `href="${url}"`, 'the HTML links to it');
  t.match(mail.html, 'Shoes &lt;b&gt;&amp;&lt;/b&gt; &quot;Socks&quot;', 'the program name escaped');
  t.notMatch(mail.html, '<b>&</b>', 'never as markup');
  t.match(mail.headers['message-id'], /^<[0-9a-f]{32}@localhost>$/, 'a Message-ID stable per mail');
});

t.test('a receiver that refuses twice, then accepts: retried and delivered', async (t) => {
  const id = `test:${uniq()}`;
  const refusedBefore = sink.refused;
  sink.refuse(2);
  await queue([invite(id, `bob-${uniq()}@example.com`)]);
  const mail = await sink.waitForMail((m) => mailId(m) === id);
  t.equal(sink.refused - refusedBefore, 2, 'two attempts refused');
  t.ok(mail, 'the third attempt delivered');
  const row = await waitFor('recorded as sent', async () => {
    const r = await logRow(id);
    return r?.status === 'sent' ? r : null;
  });
  t.equal(row.attempts, 3, 'three attempts recorded');
  t.equal(sink.messages.filter((m) => mailId(m) === id).length, 1, 'delivered once');
});

t.test(
  'a receiver that never accepts: failed after the last attempt, and the advertiser sees it',
  async (t) => {
    const to = `carol-${uniq()}@example.com`;
    const id = `test:${uniq()}`;
    sink.refuse(Infinity);
    t.teardown(() => sink.refuse(0));
    await queue([invite(id, to)]);
    const row = await waitFor(
      'the mail failed',
      async () => {
        const r = await logRow(id);
        return r?.status === 'failed' ? r : null;
      },
      120_000,
      200,
    );
    t.equal(row.attempts, 4, 'one attempt plus one per MAIL_RETRY_DELAYS entry');
    t.match(row.last_error, /^550 /, "the server's answer kept");

    // Queued with the failure, stored by the notification worker.
    const note = await waitFor("the advertiser's notification", async () => {
      const [n] = await sql<{ kind: string; title: string; body: string; data: Record<string, unknown> }[]>`
      select kind, title, body, data from notifications
      where workspace_id = ${owner.workspaceId} and recipient_type = 'advertiser'
        and notification_key = ${`mail:${id}:failed`}`;
      return n ?? null;
    });
    t.ok(note, "the advertiser's notification");
    t.equal(note!.kind, 'mail_failed');
    t.match(note!.title, to, 'naming the recipient');
    t.match(note!.body, /after 4 attempts.*550 /, 'and the reason');
    t.match(note!.data, { mail_id: id, to, attempts: 4 });
    const [mailed] = await sql`select count(*)::int as n from mail_log where id like ${`notification:%`}
    and message->'data'->>'title' = ${note!.title}`;
    t.equal(mailed!.n, 0, 'not mailed: the mail may be what fails');

    const list = await getJson(`${svc.baseUrl}/api/advertiser/mail?status=failed`, bearer(owner.session));
    t.equal(list.status, 200);
    const item = (list.body.data as Record<string, unknown>[]).find((m) => m.id === id);
    t.match(item, { to, template: 'partner_invite', status: 'failed', attempts: 4, last_error: /^550 / });
    t.notOk('text' in item! || 'html' in item! || 'data' in item!, 'the body is never shown');
  },
);

t.test('GET /api/advertiser/mail: workspace-scoped, filtered, paged, with exact 400s', async (t) => {
  const api = (path: string, token: string) => getJson(`${svc.baseUrl}${path}`, bearer(token));
  // One run prefix: mails the worker records in one transaction share created_at, and the list then orders
  // them by id (descending), which for these ids is their queueing order too.
  const run = uniq();
  const ids = [1, 2, 3].map((i) => `test:${run}:${i}`);
  // A workspace of its own: no mail of another subtest lands between the two reads of the paging check.
  const quiet = await signup(svc, { workspace: 'Quiet mail' });
  // One at a time, each recorded by the mail worker before the next is queued: created_at (the worker's
  // transaction) orders the list, and two mails in flight together may be recorded in either order (the
  // topic has several partitions; seen once in CI).
  for (const id of ids) {
    await queue([{ ...invite(id, `dan-${uniq()}@example.com`), workspace_id: quiet.workspaceId }]);
    await waitFor(`${id} recorded`, async () => (await logRow(id)) !== undefined);
  }
  await waitFor('all sent', async () => {
    const rows = await sql`select 1 from mail_log where id = any(${ids}) and status = 'sent'`;
    return rows.length === 3;
  });

  const all = await api('/api/advertiser/mail', quiet.session);
  t.equal(all.status, 200);
  const data = all.body.data as { id: string; status: string }[];
  t.same(
    data.slice(0, 3).map((m) => m.id),
    [...ids].reverse(),
    'newest first',
  );
  const total = (all.body.meta as { pagination: { total: number } }).pagination.total;
  const page2 = await api('/api/advertiser/mail?pageSize=1&page=2', quiet.session);
  t.same(
    (page2.body.data as { id: string }[]).map((m) => m.id),
    [ids[1]],
  );
  t.same(page2.body.meta, { pagination: { page: 2, pageSize: 1, pageCount: total, total } });
  const sent = await api('/api/advertiser/mail?status=sent&pageSize=100', owner.session);
  t.ok(
    (sent.body.data as { status: string }[]).every((m) => m.status === 'sent'),
    'status filters',
  );

  // Another workspace sees none of it, even naming this one.
  const stranger = await signup(svc);
  const theirs = await api('/api/advertiser/mail', stranger.session);
  t.same(theirs.body.data, [], "another workspace's list is empty");
  const named = await api(`/api/advertiser/mail?workspace_id=${owner.workspaceId}`, stranger.session);
  t.same([named.status, named.body], [404, { error: 'Workspace not found' }]);

  // Every role reads it; a key needs program:read on the whole workspace.
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  const seen = await api(`/api/advertiser/mail?workspace_id=${owner.workspaceId}`, viewer.session);
  t.equal(seen.status, 200, 'a viewer reads it');
  const key = async (body: Record<string, unknown>) => {
    const r = await send(
      'POST',
      `${svc.baseUrl}/api/advertiser/api-keys?workspace_id=${owner.workspaceId}`,
      { name: 'k', ...body },
      bearer(owner.session),
    );
    return (r.body.data as { key: string }).key;
  };
  t.equal((await api('/api/advertiser/mail', await key({ scopes: ['program:read'] }))).status, 200);
  const noScope = await api('/api/advertiser/mail', await key({ scopes: ['program:list'] }));
  t.same([noScope.status, noScope.body], [403, { error: 'API key lacks scope program:read' }]);
  const [program] = await sql<{ id: string }[]>`
    insert into programs (workspace_id, name, slug, api_token_hash, api_token_masked)
    values (${owner.workspaceId}, 'P', ${`p-${uniq()}`}, ${randomBytes(32)}, 'aff_x') returning id`;
  const scoped = await api(
    '/api/advertiser/mail',
    await key({ scopes: ['program:read'], program_scope: [Number(program!.id)] }),
  );
  t.equal(scoped.status, 403, 'a key limited to some programs cannot read the workspace-wide log');
  t.same(scoped.body, { error: `API key is limited to programs ${program!.id}` });

  const bad = async (query: string, error: string) =>
    t.same((await api(`/api/advertiser/mail?${query}`, owner.session)).body, { error }, query);
  await bad('status=lost', 'status must be one of queued, sending, sent, failed, skipped');
  await bad('page=0', 'page must be a positive integer');
  await bad('page=x', 'page must be a positive integer');
  await bad('pageSize=101', 'pageSize must be an integer from 1 to 100');
  await bad('workspace_id=-1', 'workspace_id must be a positive integer');
  const anonymous = await getJson(`${svc.baseUrl}/api/advertiser/mail`);
  t.equal(anonymous.status, 401);
});

t.test('mail rows of another deployment (KAFKA_PREFIX) in the same database are left alone', async (t) => {
  const id = `test:${uniq()}`;
  await sql`
    insert into mail_log (id, topic, workspace_id, recipient, template, subject, message, status, next_attempt_at)
    values (${id}, ${`other-${svc.prefix}mail`}, null, 'x@example.com', 'magic_link', 's',
            ${sql.json({ id, to: 'x@example.com', template: 'magic_link', data: { url: 'http://x.example/' } })},
            'queued', now())`;
  t.teardown(() => sql`delete from mail_log where id = ${id}`);
  // A mail of this deployment queued after it, and sent: the poller ran past the foreign row.
  const mine = `test:${uniq()}`;
  await queue([invite(mine, `erin-${uniq()}@example.com`)]);
  await sink.waitForMail((m) => mailId(m) === mine);
  t.match(await logRow(id), { status: 'queued', attempts: 0 }, 'not claimed');
});

t.test('without SMTP_URL: mail is recorded as skipped, and nothing waits for it', async (t) => {
  const bare = await startServices(t, ['outbox-relay', 'mail-worker']);
  t.notOk('SMTP_URL' in bare.env, 'no SMTP configured');
  const id = `test:${uniq()}`;
  await sql.begin((tx) => queueMail(tx, bare.prefix, [invite(id, `fay-${uniq()}@example.com`)]));
  const row = await waitFor('recorded', async () => logRow(id));
  t.match(row, { status: 'skipped', attempts: 0, last_error: null });
  t.notOk(
    sink.messages.some((m) => mailId(m) === id),
    'not sent anywhere',
  );
  const list = await getJson(`${svc.baseUrl}/api/advertiser/mail?status=skipped`, bearer(owner.session));
  t.ok(
    (list.body.data as { id: string }[]).some((m) => m.id === id),
    'the advertiser sees it skipped',
  );
});
