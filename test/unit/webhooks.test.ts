// The rules of outbound webhooks that need no server: signatures (checked against the npm `standardwebhooks`
// library), the SSRF address classes and URL rules, the guarded lookup, the retry schedule and what an
// attempt's answer does to its delivery, the WEBHOOK_* configuration, the endpoint fields' rules and the
// worker's parsing of an event.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signatureOf, signedHeaders } from '../../shared/webhooks/signature.ts';
import {
  checkWebhookUrl,
  checkedAddresses,
  embeddedIpv4,
  guardedLookup,
  refusedAddressClass,
  urlError,
} from '../../shared/webhooks/address.ts';
import { decide, retryDelayMs } from '../../shared/delivery/outcome.ts';
import { answerOf, retryAfterMs } from '../../services/workers/webhooks/send.ts';
import { bodyOf, parseWebhookEvent } from '../../services/workers/webhooks/fan-out.ts';
import { ConfigError, loadConfig, parseDuration } from '../../shared/config.ts';
import {
  eventsError,
  programIdsError,
  normaliseEvents,
} from '../../services/api/modules/webhooks/service.ts';

t.test('signatures are what the standardwebhooks library signs and verifies', async (t) => {
  const secret = newSigningSecret();
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
  t.equal(Buffer.from(secret.slice(6), 'base64').length, 24, '24 random bytes');
  const body = JSON.stringify({
    type: 'sale.created',
    timestamp: '2026-01-01T00:00:00.000Z',
    data: { id: 1 },
  });
  const at = new Date();
  const headers = signedHeaders([secret], 'msg_1', at, body);
  t.equal(
    headers['webhook-signature'],
    new Webhook(secret).sign('msg_1', at, body),
    'the library signs the same',
  );
  t.same(new Webhook(secret).verify(body, headers), JSON.parse(body), 'the library verifies ours');
  t.throws(() => new Webhook(secret).verify(`${body} `, headers), 'a changed body does not verify');
  t.throws(() => new Webhook(newSigningSecret()).verify(body, headers), 'another secret does not verify');

  const next = newSigningSecret();
  const both = signedHeaders([next, secret], 'msg_2', at, body);
  t.equal(both['webhook-signature'].split(' ').length, 2, 'two secrets: two signatures');
  t.ok(new Webhook(next).verify(body, both), 'the new secret verifies');
  t.ok(new Webhook(secret).verify(body, both), 'the old secret verifies');
  t.equal(
    signatureOf(secret, 'msg_2', Math.floor(at.getTime() / 1000), body),
    both['webhook-signature'].split(' ')[1],
  );
  const stale = signedHeaders([secret], 'msg_3', new Date(Date.now() - 10 * 60_000), body);
  t.throws(() => new Webhook(secret).verify(body, stale), 'a timestamp 10 minutes old is refused (replay)');
});

t.test('address classes: every refused class, public addresses allowed', async (t) => {
  const cases: [string, string | null][] = [
    ['127.0.0.1', 'loopback'],
    ['127.5.6.7', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'cloud metadata'],
    ['2002:7f00:1::', 'loopback'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['93.184.216.34', null],
    ['8.8.8.8', null],
    ['172.32.0.1', null],
    ['100.128.0.1', null],
    ['2606:2800:220:1::1', null],
    ['::ffff:93.184.216.34', null],
  ];
  for (const [address, cls] of cases) t.equal(refusedAddressClass(address), cls, address);
  t.equal(embeddedIpv4('::ffff:1.2.3.4'), '1.2.3.4');
  t.equal(embeddedIpv4('2606:2800:220:1::1'), null);
});

t.test('URL rules: https only, no credentials, no metadata or local names', async (t) => {
  const strict = { allowPrivate: false };
  t.equal(urlError('https://hooks.example.com/x', strict), null);
  t.equal(urlError('http://hooks.example.com/x', strict), 'url must be an https:// URL');
  t.equal(urlError('ftp://hooks.example.com/x', strict), 'url must be an https:// URL');
  t.equal(urlError('not a url', strict), 'url must be an absolute https:// URL');
  t.equal(urlError('https://u:p@hooks.example.com/', strict), 'url must not contain a user name or password');
  t.match(urlError('https://metadata.google.internal/computeMetadata/v1/', strict), /is refused/);
  t.match(urlError('https://localhost/', strict), /is refused/);
  t.match(urlError('https://api.localhost/', strict), /is refused/);
  t.equal(
    urlError('http://localhost:3000/', { allowPrivate: true }),
    null,
    'WEBHOOK_ALLOW_PRIVATE allows it',
  );
  t.equal(urlError('ws://x/', { allowPrivate: true }), 'url must be an http:// or https:// URL');
});

t.test(
  'names are resolved and every address checked (WEBHOOK_RESOLVE pins names for the test)',
  async (t) => {
    const policy = {
      allowPrivate: false,
      resolve: { 'public.test': '93.184.216.34', 'inside.test': '10.0.0.5', 'meta.test': '169.254.169.254' },
    };
    t.same(await checkedAddresses('public.test', policy), [{ address: '93.184.216.34', family: 4 }]);
    await t.rejects(checkedAddresses('inside.test', policy), {
      name: 'RefusedAddressError',
      message:
        'url host inside.test resolves to a private address (10.0.0.5): webhooks are only sent to public addresses',
    });
    await t.rejects(checkWebhookUrl('https://meta.test/x', policy), { message: /cloud metadata address/ });
    await t.rejects(checkWebhookUrl('https://[::1]:8443/x', policy), {
      message: 'url host ::1 is a loopback address: webhooks are only sent to public addresses',
    });
    await t.rejects(checkWebhookUrl('https://127.0.0.1/x', policy), { message: /loopback/ });
    await t.resolves(checkWebhookUrl('http://inside.test/x', { ...policy, allowPrivate: true }));
  },
);

t.test('the guarded lookup hands the connection the addresses it checked, or an error', async (t) => {
  // What the worker's requests use at every delivery: each refused class is an error, never an address
  // (no connection is attempted here: the names are pinned, nothing is sent).
  const classes: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.7', 'private'],
    ['172.16.5.5', 'private'],
    ['192.168.7.7', 'private'],
    ['fd00::7', 'private'],
    ['169.254.3.3', 'link-local'],
    ['fe80::7', 'link-local'],
    ['100.64.0.7', 'carrier-grade NAT'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.7', 'multicast'],
    ['::ffff:10.0.0.7', 'private'],
  ];
  const rebound = guardedLookup({
    allowPrivate: false,
    resolve: Object.fromEntries(classes.map(([a], i) => [`h${i}.test`, a])),
  });
  for (const [i, [address, cls]] of classes.entries()) {
    const got = await new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      rebound(`h${i}.test`, { all: true }, (err, a) => resolve({ err, address: a })),
    );
    t.match(
      got,
      {
        err: {
          code: 'EREFUSED_ADDRESS',
          message: `url host h${i}.test resolves to a ${cls} address (${address}): webhooks are only sent to public addresses`,
        },
        address: '',
      },
      `${address}: ${cls}`,
    );
  }
  const lookup = guardedLookup({
    allowPrivate: false,
    resolve: { 'a.test': '93.184.216.34', 'b.test': '127.0.0.1' },
  });
  const call = (host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
      lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
    );
  t.match(await call('a.test', false), { err: null, address: '93.184.216.34', family: 4 });
  t.match(await call('a.test', true), { err: null, address: [{ address: '93.184.216.34', family: 4 }] });
  const refused = await call('b.test', true);
  t.match(refused.err, { code: 'EREFUSED_ADDRESS', message: /resolves to a loopback address/ });
});

t.test(
  'the retry schedule: about each delay with ±10 % jitter, then the end; Retry-After within bounds',
  async (t) => {
    const JITTER = 0.1;
    const policy = { scheduleMs: [5_000, 300_000, 1_800_000], jitter: JITTER };
    const nextDelayMs = (attempts: number, retryAfter: number | null, random?: number) =>
      retryDelayMs(policy, attempts, retryAfter, random);
    t.equal(nextDelayMs(1, null, 0.5), 5_000);
    t.equal(nextDelayMs(1, null, 0), 5_000 * (1 - JITTER));
    t.equal(nextDelayMs(1, null, 1), 5_000 * (1 + JITTER));
    t.equal(nextDelayMs(3, null, 0.5), 1_800_000);
    t.equal(nextDelayMs(4, null, 0.5), null, 'past the last delay: failed');
    t.equal(nextDelayMs(2, 60_000), 60_000, 'a Retry-After replaces the delay');
    t.equal(nextDelayMs(2, 0), 1_000, 'at least a second');
    t.equal(nextDelayMs(2, 86_400_000), 3_600_000, 'at most an hour');
    t.equal(nextDelayMs(4, 60_000), null, 'but never past the end of the schedule');
    t.equal(retryAfterMs(429, '120'), 120_000);
    t.equal(retryAfterMs(503, '7'), 7_000);
    t.equal(retryAfterMs(500, '7'), null, 'only 429, 502, 503, 504');
    const now = Date.parse('2026-01-01T00:00:00Z');
    t.equal(retryAfterMs(503, 'Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000, 'an HTTP date');
    t.equal(retryAfterMs(503, 'soon'), null);
  },
);

t.test("what an attempt's answer does to its delivery", async (t) => {
  const policy = { scheduleMs: [1_000, 2_000], jitter: 0.1 };
  const d = (status: number | null, attempts = 0, once = false, retryAfter?: string, aborted = false) => {
    const result = { statusCode: status, retryAfter, response: null, error: null, durationMs: 1 };
    return decide(policy, { attempt: attempts + 1, once }, answerOf(result), aborted, 0.5);
  };
  t.same(d(200), { type: 'delivered' });
  t.same(d(204), { type: 'delivered' });
  t.same(d(500), { type: 'retry', delayMs: 1_000, error: 'HTTP 500' });
  t.same(d(null, 1), { type: 'retry', delayMs: 2_000, error: 'failed' }, 'no answer');
  t.same(d(302), { type: 'retry', delayMs: 1_000, error: 'HTTP 302' }, 'a redirect fails');
  t.same(d(500, 2), { type: 'failed', error: 'HTTP 500', gone: false }, 'schedule exhausted');
  t.same(d(410), { type: 'failed', error: 'HTTP 410', gone: true }, '410 Gone');
  t.same(d(500, 0, true), { type: 'failed', error: 'HTTP 500', gone: false }, 'a one-off retry');
  t.same(d(429, 0, false, '30'), { type: 'retry', delayMs: 30_000, error: 'HTTP 429' });
  t.same(d(null, 0, false, undefined, true), { type: 'released' }, 'no answer while shutting down');
  t.same(
    d(503, 0, false, undefined, true),
    { type: 'retry', delayMs: 1_000, error: 'HTTP 503' },
    'an answer counts',
  );
});

t.test('WEBHOOK_* configuration', async (t) => {
  const c = loadConfig({}).webhooks;
  t.same(c.retryScheduleMs, [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  t.equal(c.disableAfterMs, 5 * 86_400_000);
  t.equal(c.timeoutMs, 10_000);
  t.equal(c.allowPrivate, false);
  t.same(c.resolve, {});
  const s = loadConfig({
    WEBHOOK_RETRY_SCHEDULE: '500ms,2s,1m',
    WEBHOOK_DISABLE_AFTER: '30s',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RESOLVE: 'Hooks.Test=127.0.0.1, six.test=::1',
  }).webhooks;
  t.same(s.retryScheduleMs, [500, 2_000, 60_000]);
  t.equal(s.disableAfterMs, 30_000);
  t.equal(s.allowPrivate, true);
  t.same(s.resolve, { 'hooks.test': '127.0.0.1', 'six.test': '::1' });
  t.equal(parseDuration('2h'), 7_200_000);
  t.equal(parseDuration('1.5s'), 1_500);
  t.equal(parseDuration('soon'), null);
  try {
    loadConfig({
      WEBHOOK_RETRY_SCHEDULE: '5s,later',
      WEBHOOK_DISABLE_AFTER: 'never',
      WEBHOOK_ALLOW_PRIVATE: 'yes',
      WEBHOOK_RESOLVE: 'x.test=not-an-ip',
    });
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    t.equal((err as ConfigError).problems.length, 4, (err as ConfigError).problems.join('; '));
  }
});

t.test("endpoint fields' rules", async (t) => {
  t.equal(eventsError(['*']), null);
  t.equal(eventsError(['sale.created', 'commission.updated']), null);
  t.match(eventsError(['sale.deleted']), /^Unknown event type: sale.deleted\. Allowed: \*, lead.created, /);
  t.equal(eventsError([]), 'events must be a non-empty array of event types (or ["*"])');
  t.equal(eventsError('sale.created'), 'events must be a non-empty array of event types (or ["*"])');
  t.same(normaliseEvents(['sale.created', '*']), ['*']);
  t.same(normaliseEvents(['sale.created', 'sale.created']), ['sale.created']);
  t.same(normaliseEvents(undefined), ['*']);
  t.equal(programIdsError(null), null);
  t.equal(programIdsError([1, '2']), null);
  t.equal(programIdsError([0]), 'program_ids has an invalid program id: 0');
  t.equal(programIdsError([]), 'program_ids must be null or an array of 1 to 100 program ids');
});

t.test('the worker parses an event or says why not; the body is { type, timestamp, data }', async (t) => {
  const event = {
    id: `evt_${'a'.repeat(32)}`,
    type: 'sale.created',
    workspace_id: 1,
    program_id: 2,
    created_at: '2026-01-01T00:00:00.000Z',
    data: { id: 3 },
  };
  const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));
  t.same(parseWebhookEvent(bytes(event)), event);
  t.equal(parseWebhookEvent(Buffer.from('{')), 'not JSON');
  t.equal(parseWebhookEvent(bytes({ ...event, type: 'sale.deleted' })), 'unknown event type');
  t.equal(parseWebhookEvent(bytes({ ...event, id: 'x' })), 'bad id');
  t.equal(parseWebhookEvent(bytes({ ...event, workspace_id: 0 })), 'bad workspace_id');
  t.equal(parseWebhookEvent(bytes({ ...event, data: [] })), 'bad data');
  t.same(JSON.parse(bodyOf(event as never)), {
    type: 'sale.created',
    timestamp: event.created_at,
    data: { id: 3 },
  });
});
