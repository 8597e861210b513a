// The mail worker's pure parts: the templates (both bodies, escaping, absolute links), the parse step's
// refusals, the retry schedule, the failure notice, the mail settings' validation, and what the SMTP
// transport of the delivery queue says about an attempt against a fake server (the queue's own rules:
// test/unit/delivery-queue.test.ts).
import t from 'tap';
import { renderMail, escapeHtml } from '../../services/workers/mail/templates.ts';
import { parseMailMessage } from '../../services/workers/mail/parse.ts';
import { failureNotice } from '../../services/workers/mail/log.ts';
import type { MailJob } from '../../services/workers/mail/log.ts';
import { addressOf, messageIdOf, smtpDelivery, smtpError } from '../../services/workers/mail/smtp.ts';
import type { MailTransport } from '../../services/workers/mail/smtp.ts';
import { decide, retryDelayMs } from '../../shared/delivery/outcome.ts';
import type { MailMessage } from '../../shared/contracts/mail.ts';
import { loadConfig } from '../../shared/config.ts';
import type { ConfigError } from '../../shared/config.ts';
import { parseDuration } from '../../shared/config-mail.ts';
import { parseEffect } from '../../shared/contracts/commands.ts';

const base = { workspace_id: 7, created_at: '2026-01-01T00:00:00.000Z' };
const invite: MailMessage = {
  ...base,
  id: 'invite:1',
  to: 'ada@example.com',
  template: 'partner_invite',
  data: {
    url: 'https://aff.example.com/partner/invite/pinv_abc?x=1&y=2',
    program_name: 'Shoes <script>alert(1)</script>',
    partner_name: 'Ada "Lovelace" & Co',
    workspace_name: "O'Brien's <b>shop</b>",
  },
};

t.test('templates: a subject, a plain-text body and an HTML body for each', async (t) => {
  const magic: MailMessage = {
    ...base,
    id: 'magic:1',
    to: 'a@example.com',
    template: 'magic_link',
    data: { url: 'https://aff.example.com/partner/magic/pml_x' },
  };
  const note: MailMessage = {
    ...base,
    id: 'notification:1',
    to: 'a@example.com',
    template: 'notification',
    data: {
      title: 'A commission was reversed',
      body: 'A refund on sale T-1 deducted 3.00 USD.\n\nReason: <none>',
      url: 'https://aff.example.com/partner/notifications',
    },
  };
  for (const m of [invite, magic, note]) {
    const r = renderMail(m);
    t.ok(r.subject.length > 0, `${m.template}: subject`);
    t.ok(r.text.includes(m.data.url), `${m.template}: the text holds the absolute link`);
    t.ok(r.html.includes(`href="${escapeHtml(m.data.url)}"`), `${m.template}: the HTML links to it`);
    t.notMatch(r.text, /<(p|a|h1|div|br)[\s>]/, `${m.template}: the text is not HTML`);
    t.match(r.html, /^<!doctype html>/, `${m.template}: HTML`);
  }
  t.equal(renderMail(magic).subject, 'Your sign-in link');
  t.match(renderMail(magic).text, /15 minutes/);
  t.equal(renderMail(note).subject, 'A commission was reversed');
  t.match(renderMail(note).text, /Reason: <none>/, 'the text is verbatim');
  t.match(renderMail(note).html, 'Reason: &lt;none&gt;', 'the HTML escaped');
});

t.test('templates: user input is escaped in the HTML and kept verbatim in the text', async (t) => {
  const r = renderMail(invite);
  t.notMatch(r.html, '<script>', 'no markup from a program name');
  t.notMatch(r.html, '<b>shop</b>', 'nor from a workspace name');
  t.match(r.html, 'Shoes &lt;script&gt;alert(1)&lt;/script&gt;');
  t.match(r.html, 'Ada &quot;Lovelace&quot; &amp; Co');
  t.match(r.html, 'O&#39;Brien&#39;s &lt;b&gt;shop&lt;/b&gt;');
  t.match(r.html, 'href="https://aff.example.com/partner/invite/pinv_abc?x=1&amp;y=2"', 'the link escaped');
  t.match(r.text, 'Hi Ada "Lovelace" & Co,');
  t.match(r.text, "O'Brien's <b>shop</b> invited you to join the Shoes <script>alert(1)</script> affiliate");
  t.equal(r.subject, "You're invited to the Shoes <script>alert(1)</script> affiliate program");
  const noWs = renderMail({ ...invite, data: { ...invite.data, workspace_name: undefined } } as MailMessage);
  t.match(noWs.text, 'You are invited to join');
  const long = renderMail({
    ...invite,
    template: 'notification',
    data: { title: `Line\r\nBcc: x@evil.example ${'a'.repeat(300)}`, body: 'b', url: 'https://a.example/' },
  } as MailMessage);
  t.notMatch(long.subject, /[\r\n]/, 'a subject is one line');
  t.ok(long.subject.length <= 200, 'and bounded');
});

t.test('parse: a well-formed message, and the reasons poison is refused', async (t) => {
  const ok = parseMailMessage(Buffer.from(JSON.stringify(invite)));
  t.same(ok, invite);
  const noWs = parseMailMessage(Buffer.from(JSON.stringify({ ...invite, workspace_id: undefined })));
  t.equal((noWs as MailMessage).workspace_id, null, 'a missing workspace is null');
  const bad = (patch: Record<string, unknown>) =>
    parseMailMessage(Buffer.from(JSON.stringify({ ...invite, ...patch })));
  t.equal(parseMailMessage(null), 'empty message');
  t.equal(parseMailMessage(Buffer.from('{')), 'not JSON');
  t.equal(parseMailMessage(Buffer.from('[1]')), 'not a JSON object');
  t.equal(bad({ id: '' }), 'bad id');
  t.equal(bad({ to: 'a@example.com\r\nBcc: b@example.com' }), 'bad to');
  t.equal(bad({ to: 'a@example.com, b@example.com' }), 'bad to', 'one recipient only');
  t.equal(bad({ to: 'Ada <a@example.com>' }), 'bad to');
  t.equal(bad({ template: 'welcome' }), 'unknown template welcome');
  t.equal(bad({ data: null }), 'bad data');
  t.equal(
    bad({ data: { ...invite.data, url: '/partner/invite/x' } }),
    'data.url must be an absolute http(s) URL',
  );
  t.equal(
    bad({ data: { ...invite.data, url: 'javascript:alert(1)' } }),
    'data.url must be an absolute http(s) URL',
  );
  t.equal(bad({ data: { ...invite.data, program_name: 3 } }), 'bad data.program_name');
  t.equal(
    bad({ template: 'notification', data: { url: 'https://a.example/', title: 't' } }),
    'bad data.body',
  );
  t.equal(bad({ workspace_id: 0 }), 'bad workspace_id');
  t.equal(parseMailMessage(Buffer.from('{"id":"\\u0000"}')), 'a string holds a NUL or an unpaired surrogate');
});

t.test('retry schedule: the listed waits with ±20 % jitter, then the dead end', async (t) => {
  const policy = { scheduleMs: [60_000, 300_000], jitter: 0.2 };
  t.equal(retryDelayMs(policy, 1, null, 0), 48_000, 'lowest');
  t.equal(retryDelayMs(policy, 1, null, 1), 72_000, 'highest');
  t.equal(retryDelayMs(policy, 2, null, 0.5), 300_000);
  t.equal(retryDelayMs(policy, 3), null, 'after the last wait: no more attempts');
  const dflt = loadConfig({}).mailRetryDelaysMs;
  t.equal(dflt.length + 1, 8, '8 attempts by default');
  const hours = dflt.reduce((a, b) => a + b, 0) / 3_600_000;
  t.ok(hours > 20 && hours < 26, `over about a day (${hours.toFixed(1)} h)`);
});

t.test('the failure notice names the recipient and the reason, and is not mailed', async (t) => {
  const claimed: MailJob = {
    id: 'invite:1',
    token: '8',
    attempt: 8,
    once: false,
    key: null,
    createdAt: new Date(),
    payload: invite,
  };
  const n = failureNotice(claimed, '550 5.1.1 No such user');
  t.match(n, {
    notification_key: 'mail:invite:1:failed',
    recipient_type: 'advertiser',
    workspace_id: 7,
    kind: 'mail_failed',
    mail: false,
  });
  t.match(n!.title, 'ada@example.com');
  t.match(n!.body, /partner invite to ada@example.com was not delivered after 8 attempts.*550 5\.1\.1/);
  t.equal(failureNotice({ ...claimed, payload: { ...invite, workspace_id: null } }, 'x'), null);
});

t.test('mail settings are validated with the rest of the configuration', async (t) => {
  const c = loadConfig({});
  t.equal(c.smtpUrl, null, 'no SMTP by default');
  t.equal(c.mailFrom, 'svc <no-reply@localhost>');
  t.equal(loadConfig({ PUBLIC_URL: 'https://aff.example.com' }).mailFrom, 'svc <no-reply@aff.example.com>');
  t.equal(
    loadConfig({ SMTP_URL: 'smtps://u:p@smtp.example.com:465' }).smtpUrl,
    'smtps://u:p@smtp.example.com:465',
  );
  t.same(
    loadConfig({ MAIL_RETRY_DELAYS: '500ms, 2s,1m,1h,1d' }).mailRetryDelaysMs,
    [500, 2_000, 60_000, 3_600_000, 86_400_000],
  );
  t.equal(parseDuration('15'), 15);
  t.equal(parseDuration('1w'), null);
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };
  t.match(problems({ SMTP_URL: 'http://smtp.example.com' }), [/^SMTP_URL must be/]);
  t.match(problems({ SMTP_URL: 'smtp://' }), [/^SMTP_URL must be/]);
  t.match(problems({ MAIL_FROM: 'nobody' }), [/^MAIL_FROM must be/]);
  t.match(problems({ MAIL_FROM: 'a@b.example\r\nBcc: c@d.example' }), [/^MAIL_FROM must be/]);
  t.same(problems({ MAIL_FROM: 'Shop <no-reply@shop.example>' }), []);
  t.match(problems({ MAIL_RETRY_DELAYS: '1m,soon' }), [/^MAIL_RETRY_DELAYS must list/]);
  t.match(problems({ MAIL_RETRY_DELAYS: '10ms' }), [/^MAIL_RETRY_DELAYS must list/]);
  t.match(problems({ MAIL_CONCURRENCY: '0' }), [/^MAIL_CONCURRENCY must be an integer between 1 and 100/]);
});

t.test('SMTP helpers: a stable Message-ID, the server answer as the error', async (t) => {
  t.equal(addressOf('Shop <no-reply@shop.example>'), 'no-reply@shop.example');
  t.equal(addressOf('no-reply@shop.example'), 'no-reply@shop.example');
  const id = messageIdOf('invite:1', 'Shop <no-reply@shop.example>');
  t.match(id, /^<[0-9a-f]{32}@shop\.example>$/);
  t.equal(messageIdOf('invite:1', 'x@shop.example'), id, 'the same on every attempt');
  t.not(messageIdOf('invite:2', 'x@shop.example'), id);
  t.equal(smtpError({ response: '550 5.1.1  No such\r\nuser', message: 'x' }), '550 5.1.1 No such user');
  t.equal(smtpError(new Error('connect ECONNREFUSED 127.0.0.1:1')), 'connect ECONNREFUSED 127.0.0.1:1');
});

t.test('SMTP transport: accepted, refused (answered), unreachable, cut off by shutdown', async (t) => {
  const policy = { scheduleMs: [1_000, 2_000], jitter: 0.2 };
  const sent: { id: string; to: string; subject: string }[] = [];
  let answer: 'ok' | 'refuse' | 'down' | 'hang' = 'ok';
  const server: MailTransport = {
    send: async (m) => {
      if (answer === 'refuse') throw Object.assign(new Error('x'), { response: '550 5.1.1 No such user' });
      if (answer === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:25');
      if (answer === 'hang') return new Promise<string>(() => {});
      sent.push({ id: m.id, to: m.to, subject: m.subject });
      return '250 ok';
    },
    close() {},
  };
  const transport = smtpDelivery(server);
  const job = (attempt: number): MailJob => ({
    id: 'invite:1',
    token: String(attempt),
    attempt,
    once: false,
    key: null,
    createdAt: new Date(),
    payload: invite,
  });
  const attempt = async (n: number, signal = new AbortController().signal) => {
    const a = await transport.send(job(n), new Date(), signal);
    return { a, outcome: decide(policy, job(n), a, signal.aborted, 0.5) };
  };
  t.match(await attempt(1), { a: { type: 'accepted' }, outcome: { type: 'delivered' } });
  t.match(sent, [{ id: 'invite:1', to: 'ada@example.com', subject: /Shoes/ }], 'rendered and sent');
  answer = 'refuse';
  t.match(await attempt(1), {
    a: { type: 'failed', answered: true, error: '550 5.1.1 No such user' },
    outcome: { type: 'retry', delayMs: 1_000, error: '550 5.1.1 No such user' },
  });
  t.match(await attempt(3), { outcome: { type: 'failed', gone: false } }, 'the last attempt: the dead end');
  answer = 'down';
  t.match(await attempt(2), {
    a: { type: 'failed', answered: false },
    outcome: { type: 'retry', delayMs: 2_000, error: /ECONNREFUSED/ },
  });
  answer = 'hang';
  const shutdown = new AbortController();
  const cut = attempt(1, shutdown.signal);
  shutdown.abort();
  t.match(await cut, { a: { type: 'failed', answered: false }, outcome: { type: 'released' } });
});

t.test('notification effects say whether they are mailed', async (t) => {
  const effect = {
    topic: 'notifications',
    notification_key: 'k',
    recipient_type: 'partner',
    partner_id: 1,
    workspace_id: null,
    program_id: 1,
    kind: 'commission_reversed',
    title: 't',
    body: 'b',
    data: {},
  };
  const parse = (e: object) => parseEffect(Buffer.from(JSON.stringify(e)));
  t.match(parse(effect), { notification_key: 'k' }, 'mail is optional');
  t.match(parse({ ...effect, mail: true }), { mail: true });
  t.equal(parse({ ...effect, mail: 'yes' }), 'bad mail');
});
