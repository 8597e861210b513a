// Per-IP rate limits on click and lead: 429 with Retry-After past the burst; a client behind the trusted
// proxy (X-Forwarded-For from loopback) has its own bucket; exempt addresses are never limited.
// One token a minute (the least RATE_LIMIT_PER_MINUTE short of off): the bucket refills in 60 s, so the
// requests after the burst find it empty however slow the machine, unless the few requests below took a
// minute, which the 429 check's message then says.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web'], {
  RATE_LIMIT_PER_MINUTE: '1',
  RATE_LIMIT_BURST: '5',
  RATE_LIMIT_EXEMPT: '10.9.9.9',
});
const program = await createProgram(sql);
const link = await createLink(sql, program.id);
const click = (ip: string) =>
  postJson(
    `${svc.baseUrl}/api/v1/track/click`,
    { affiliate_url: `https://x.example/?aff=${link.shortLink}` },
    { 'x-forwarded-for': ip },
  );

t.test('the burst passes, then 429 with Retry-After; other clients are unaffected', async (t) => {
  // The web is ready once its producer is connected, but this prefix's new topics may still be electing
  // their leaders: a click is 503 until then, its token spent all the same. The exempt address spends
  // none, so it waits for the click path before the burst.
  await waitFor(
    'a click acknowledged by Kafka',
    async () => (await click('10.9.9.9')).status === 200,
    60_000,
    200,
  );
  const statuses: number[] = [];
  const started = Date.now();
  for (let i = 0; i < 5; i++) statuses.push((await click('203.0.113.7')).status);
  t.same(statuses, [200, 200, 200, 200, 200]);
  const limited = await click('203.0.113.7');
  const seconds = (Date.now() - started) / 1000;
  t.equal(
    limited.status,
    429,
    `the sixth click is limited (precondition: the burst and it took ${seconds.toFixed(1)} s of the 60 s a token takes to come back)`,
  );
  t.same(limited.body, { error: 'Too many requests from this address; retry later' });
  // The bucket held less than a token for the seconds since the first click: Retry-After is the rest of
  // the minute that token takes, at least 60 s less the time the six clicks took here, at most 60.
  const retryAfter = Number(limited.headers.get('retry-after'));
  t.ok(
    retryAfter <= 60 && retryAfter >= Math.max(1, 60 - Math.ceil(seconds)),
    `Retry-After ${retryAfter}: the seconds until one token is back at one a minute`,
  );
  t.equal((await click('203.0.113.8')).status, 200, 'another client has its own bucket');
  const lead = await postJson(
    `${svc.baseUrl}/api/v1/track/lead`,
    { click_id: 'cust_1_1' },
    { 'x-forwarded-for': '203.0.113.7' },
  );
  t.equal(lead.status, 429, 'lead shares the per-IP limit');
  for (let i = 0; i < 8; i++)
    t.equal((await click('10.9.9.9')).status, 200, 'an exempt address is never limited');
});
