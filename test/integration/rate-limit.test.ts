// Per-IP rate limits on click and lead: 429 with Retry-After past the burst; a client behind the trusted
// proxy (X-Forwarded-For from loopback) has its own bucket; exempt addresses are never limited.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web'], {
  RATE_LIMIT_PER_MINUTE: '60',
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
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await click('203.0.113.7')).status);
  t.same(statuses, [200, 200, 200, 200, 200]);
  const limited = await click('203.0.113.7');
  t.equal(limited.status, 429);
  t.same(limited.body, { error: 'Too many requests from this address; retry later' });
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
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
