// The TypeScript SDK's HTTP behaviour against a scripted local server: every attempt of one call carries
// the same Idempotency-Key (or click event_id) and body, Retry-After is waited for, timeouts abort, calls
// that could act twice are not repeated, and answers map to results or SvcError as documented.
import t from 'tap';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Svc, SvcError } from '../../sdk/typescript/src/index.ts';
import type { Teardown } from '../helpers/stack.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}
type Reply = { status: number; headers?: Record<string, string>; body?: unknown } | 'destroy' | 'hang';

/** A server answering each request with the next scripted reply (the last one repeats). */
async function stub(t: Teardown, ...replies: Reply[]) {
  const seen: Seen[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() });
      const reply = replies[Math.min(seen.length - 1, replies.length - 1)]!;
      if (reply === 'destroy') return req.socket.destroy();
      if (reply === 'hang') return void hanging.push(res);
      const text =
        reply.body === undefined
          ? ''
          : typeof reply.body === 'string'
            ? reply.body
            : JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        ...(typeof reply.body === 'object' ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        ...reply.headers,
      });
      res.end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    return new Promise((r) => server.close(() => r(undefined)));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { seen, baseUrl };
}

const SALE = { transaction_id: 'order-1', amount_cents: 4900, customer_key: 'user-1' };
const OK = { success: true, sale_id: 7, commission_id: 9, message: 'Sale recorded' };

async function rejection(p: Promise<unknown>): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof SvcError) return err;
    throw err;
  }
  throw new Error('resolved, but should have rejected');
}

t.test(
  'a sale answered 503 with Retry-After is sent again after it, with the same key and body',
  async (t) => {
    const s = await stub(
      t,
      { status: 503, headers: { 'retry-after': '1' }, body: { error: 'busy' } },
      {
        status: 200,
        body: OK,
      },
    );
    const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test' });
    t.same(await svc.track.sale(SALE), OK);
    t.equal(s.seen.length, 2);
    const [a, b] = s.seen as [Seen, Seen];
    t.match(
      a.headers['idempotency-key'],
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    t.equal(b.headers['idempotency-key'], a.headers['idempotency-key'], 'the same Idempotency-Key');
    t.equal(b.body, a.body, 'the same body');
    t.same(JSON.parse(a.body), SALE);
    t.equal(a.headers.authorization, 'Bearer aff_test');
    t.equal(a.headers['content-type'], 'application/json');
    t.ok(b.at - a.at >= 990, `waited for Retry-After: 1 (${b.at - a.at} ms)`);
  },
);

t.test('a dropped connection and a timeout are retried with the same key', async (t) => {
  const s = await stub(t, 'destroy', 'hang', { status: 200, body: OK });
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test', timeoutMs: 300 });
  t.same(await svc.track.sale(SALE, { idempotencyKey: 'order-1-key' }), OK);
  t.equal(s.seen.length, 3);
  t.same(
    s.seen.map((x) => x.headers['idempotency-key']),
    ['order-1-key', 'order-1-key', 'order-1-key'],
    'the given key on every attempt',
  );
});

t.test('each call gets its own key', async (t) => {
  const s = await stub(t, { status: 200, body: OK });
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test' });
  await svc.track.sale(SALE);
  await svc.track.sale({ ...SALE, transaction_id: 'order-2' });
  t.not(s.seen[0]!.headers['idempotency-key'], s.seen[1]!.headers['idempotency-key']);
});

t.test('retries stop at maxRetries; the last answer is the error', async (t) => {
  const s = await stub(t, {
    status: 503,
    headers: { 'retry-after': '0' },
    body: { error: 'Sale tracking failed' },
  });
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test', maxRetries: 2 });
  const err = await rejection(svc.track.sale(SALE, { idempotencyKey: 'k-503' }));
  t.equal(s.seen.length, 3, 'one attempt and two retries');
  t.equal(err.status, 503);
  t.equal(err.error, 'Sale tracking failed');
  t.same(err.body, { error: 'Sale tracking failed' });
  t.equal(err.idempotencyKey, 'k-503', 'the key to retry with later');
  t.equal(err.retryAfterMs, 0);
});

t.test('no answer at all: SvcError with status 0 after the retries', async (t) => {
  const s = await stub(t, 'hang');
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test', timeoutMs: 200, maxRetries: 1 });
  const err = await rejection(svc.track.refund({ transaction_id: 'order-1' }));
  t.equal(s.seen.length, 2);
  t.equal(err.status, 0);
  t.equal(err.error, 'No answer within 200 ms (2 attempts)');
  t.type(err.idempotencyKey, 'string');
  const closed = new Svc({ baseUrl: 'http://127.0.0.1:9', maxRetries: 0 });
  const refused = await rejection(closed.track.click({ affiliate_url: 'https://shop.example/?aff=x' }));
  t.equal(refused.status, 0);
  t.match(refused.error, /^Network error: /);
});

t.test('a Retry-After longer than a minute is not waited for', async (t) => {
  const s = await stub(t, {
    status: 429,
    headers: { 'retry-after': '3600' },
    body: { error: 'Too many requests' },
  });
  const svc = new Svc({ baseUrl: s.baseUrl });
  const err = await rejection(svc.track.lead({ customer_key: 'u' }));
  t.equal(s.seen.length, 1);
  t.equal(err.status, 429);
  t.equal(err.retryAfterMs, 3_600_000);
});

t.test('a duplicate sale resolves { duplicate: true }; other 4xx and 5xx reject at once', async (t) => {
  const dup = {
    error: 'Duplicate transaction_id. This sale has already been recorded.',
    message: 'Duplicate transaction_id. This sale has already been recorded.',
    statusCode: 409,
  };
  const s = await stub(
    t,
    { status: 409, body: dup },
    { status: 409, body: { error: 'Idempotency-Key was used with a different request' } },
    { status: 400, body: { error: 'amount_cents is required and must be a positive integer' } },
    { status: 500, body: { error: 'Sale tracking failed' } },
  );
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test' });
  const r = await svc.track.sale(SALE);
  t.same(r, { duplicate: true, ...dup });
  if (r.duplicate) t.equal(r.statusCode, 409, 'narrowed by duplicate');
  const reused = await rejection(svc.track.sale(SALE, { idempotencyKey: 'k' }));
  t.equal(reused.status, 409);
  t.equal(reused.error, 'Idempotency-Key was used with a different request');
  const bad = await rejection(svc.track.sale({ ...SALE, amount_cents: 0 }));
  t.match(bad, { status: 400, error: 'amount_cents is required and must be a positive integer' });
  t.equal(bad.message, '400: amount_cents is required and must be a positive integer');
  const failed = await rejection(svc.track.sale(SALE));
  t.equal(failed.status, 500);
  t.equal(s.seen.length, 4, 'none of them retried');
});

t.test('a click carries one event_id on every attempt and no Authorization', async (t) => {
  const answer = { success: true, click_id: 'cust_1_2', partner_code: 'p', cookie_window_days: 60 };
  const s = await stub(
    t,
    { status: 503, headers: { 'retry-after': '0' }, body: { error: 'x' } },
    {
      status: 200,
      body: answer,
    },
  );
  const svc = new Svc({ baseUrl: `${s.baseUrl}/`, token: 'aff_test' });
  t.same(await svc.track.click({ affiliate_url: 'https://shop.example/?aff=p' }), answer);
  const [a, b] = s.seen.map((x) => JSON.parse(x.body) as { event_id: string });
  t.match(a!.event_id, /^[0-9a-f-]{36}$/);
  t.equal(b!.event_id, a!.event_id);
  t.equal(s.seen[0]!.headers.authorization, undefined, 'the click route is public');
  t.equal(s.seen[0]!.headers['idempotency-key'], undefined);
  t.equal(s.seen[0]!.url, '/api/v1/track/click', 'a trailing slash on baseUrl is fine');
  await svc.track.click({ affiliate_url: 'https://shop.example/?aff=p', event_id: 'my-own-id' });
  t.equal((JSON.parse(s.seen[2]!.body) as { event_id: string }).event_id, 'my-own-id');
  await svc.track.lead({ click_id: 'cust_1_2', customer_key: 'u' });
  t.equal(s.seen[3]!.headers.authorization, 'Bearer aff_test', 'a lead sends the token (server mode)');
  t.ok(s.seen[3]!.headers['idempotency-key']);
});

t.test('management POSTs are not repeated on 503 (they could act twice), only on 429', async (t) => {
  const s = await stub(
    t,
    { status: 503, headers: { 'retry-after': '0' }, body: { error: 'Service unavailable' } },
    { status: 429, headers: { 'retry-after': '0' }, body: { error: 'Too many requests' } },
    { status: 201, body: { data: { partner: { id: 1 } } } },
  );
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'affk_test' });
  const err = await rejection(svc.partners.create(5, { name: 'Ada', email: 'ada@example.com' }));
  t.equal(err.status, 503);
  t.equal(s.seen.length, 1);
  t.same(await svc.partners.create(5, { name: 'Ada', email: 'ada@example.com' }), {
    data: { partner: { id: 1 } },
  });
  t.equal(s.seen.length, 3, 'the 429 was retried');
  t.equal(s.seen[2]!.headers['idempotency-key'], undefined);
});

t.test('reads are retried; paths and queries are encoded', async (t) => {
  const s = await stub(t, 'destroy', { status: 200, body: { data: [] } });
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'affk_test' });
  t.same(await svc.commissions.list(3, { status: 'paid', limit: 5 }), { data: [] });
  t.equal(s.seen[1]!.url, '/api/advertiser/affiliate-programs/3/commissions?status=paid&limit=5');
  await svc.links.update(3, 'a/b', 7, { status: 'inactive' });
  t.equal(s.seen[2]!.url, '/api/advertiser/affiliate-programs/3/partners/a%2Fb/links/7');
  t.equal(s.seen[2]!.method, 'PUT');
  await svc.dashboard.breakdown(3, { dimension: 'country', period: '30d', dateFrom: undefined });
  t.equal(s.seen[3]!.url, '/api/tracking/breakdown/3?dimension=country&period=30d');
  await svc.request('GET', '/api/advertiser/processor-events', {
    query: { program_id: 3, outcome: ['a', 'b'] },
  });
  t.equal(s.seen[4]!.url, '/api/advertiser/processor-events?program_id=3&outcome=a&outcome=b');
});

t.test('request(): any route, JSON or text answers, empty 204', async (t) => {
  const s = await stub(
    t,
    { status: 200, headers: { 'content-type': 'text/csv' }, body: 'a,b\n1,2\n' },
    { status: 204 },
    { status: 404, body: { error: 'Program not found' } },
  );
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'affk_test' });
  t.equal(await svc.payouts.export(1, { format: 'csv' }), 'a,b\n1,2\n');
  t.equal(await svc.request('DELETE', '/api/advertiser/api-keys/4'), undefined);
  const err = await rejection(svc.request('POST', '/api/advertiser/x', { body: { a: 1 }, anonymous: true }));
  t.match(err, { status: 404, error: 'Program not found', body: { error: 'Program not found' } });
  t.equal(s.seen[2]!.headers.authorization, undefined);
  t.equal(s.seen[2]!.body, '{"a":1}');
});

t.test("the caller's AbortSignal stops the call and its retries", async (t) => {
  const s = await stub(t, { status: 503, headers: { 'retry-after': '30' }, body: { error: 'busy' } });
  const svc = new Svc({ baseUrl: s.baseUrl, token: 'aff_test' });
  const controller = new AbortController();
  const call = svc.track.sale(SALE, { signal: controller.signal });
  const deadline = Date.now() + 30_000;
  while (s.seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  controller.abort(new Error('shutting down'));
  await t.rejects(call, { message: 'shutting down' });
  t.equal(s.seen.length, 1, 'no retry after the abort');
});

t.test('the constructor refuses what cannot work', async (t) => {
  t.throws(() => new Svc({ baseUrl: 'localhost:8080' }), /baseUrl must be an http\(s\) URL/);
  t.throws(() => new Svc(undefined as never), /baseUrl/);
});
