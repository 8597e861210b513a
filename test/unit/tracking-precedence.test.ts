// The order of the tracking routes' answers where the schema check meets authentication, the rate limit
// and the Idempotency-Key (docs/ingress.md "Validation"): the ingress plugin on a small Fastify app with an
// in-memory cache, no Postgres or Kafka. Every request here is answered before anything is produced.
import t from 'tap';
import Fastify from 'fastify';
import { installJsonHandling } from '../../shared/http/server.ts';
import { hashSecret } from '../../shared/domain/secrets.ts';
import { ingressPlugin } from '../../services/ingress/app.ts';
import { RateLimiter } from '../../services/ingress/rate-limit.ts';
import type { IngressDeps } from '../../services/ingress/deps.ts';

const TOKEN = 'aff_precedence_token';
const PROGRAM = { id: 7, deleted: false, allowedOrigins: [], name: 'P', slug: 'p', status: 'live' };

async function build(rateLimiter = new RateLimiter({ perMinute: 0, burst: 1, exempt: [] })) {
  const tokenHash = hashSecret(TOKEN).toString('hex');
  const cache = {
    programIdForToken: async (hash: Buffer) => (hash.toString('hex') === tokenHash ? PROGRAM.id : null),
    getProgram: async (id: number) => (id === PROGRAM.id ? PROGRAM : null),
    getLink: async () => null,
    programIdForPartnerProgram: async () => null,
    originAllowedAnywhere: async () => false,
  };
  const fail = () => {
    throw new Error('nothing may be produced in this test');
  };
  const deps = {
    cache,
    rateLimiter,
    producer: { send: fail },
    topics: { clicks: 'c', sales: 's', refunds: 'r', processorEvents: 'p' },
  } as unknown as IngressDeps;
  const app = Fastify();
  installJsonHandling(app);
  await app.register(ingressPlugin, deps);
  await app.ready();
  return app;
}

type Answer = { status: number; error: string };

t.test('click and lead: the rate limit comes before any body error, JSON parsing before both', async (t) => {
  const app = await build(new RateLimiter({ perMinute: 1, burst: 1, exempt: [] }));
  t.teardown(() => app.close());
  const click = async (payload: string): Promise<Answer> => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/track/click',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    return { status: r.statusCode, error: r.json().error };
  };
  t.same(
    await click('{}'),
    { status: 400, error: 'affiliate_url is required' },
    'the one token of the bucket',
  );
  t.same((await click('{}')).status, 429, 'the body is not checked for a limited caller');
  t.same(await click('{nope'), { status: 400, error: 'Invalid JSON body' }, 'parsing comes first');
  const lead = await app.inject({ method: 'POST', url: '/api/tracking/lead', payload: { email: 5 } });
  t.equal(lead.statusCode, 429, 'lead (alias) too');
});

t.test(
  'lead: body fields, then the token, then the Idempotency-Key, then session_id and page_url',
  async (t) => {
    const app = await build();
    t.teardown(() => app.close());
    const lead = async (payload: object, headers: Record<string, string> = {}): Promise<Answer> => {
      const r = await app.inject({ method: 'POST', url: '/api/v1/track/lead', payload, headers });
      return { status: r.statusCode, error: r.json().error };
    };
    const bad = { authorization: 'Bearer aff_wrong' };
    const good = { authorization: `Bearer ${TOKEN}` };
    t.same(await lead({ email: 5 }, bad), { status: 400, error: 'email must be a string' });
    t.same(
      await lead({ customer_key: 'c', page_url: 5 }, bad),
      { status: 401, error: 'Invalid tracking token' },
      'page_url is read after authentication',
    );
    t.same(
      await lead({ customer_key: 'c', session_id: 5 }, { ...good, 'idempotency-key': 'x'.repeat(201) }),
      {
        status: 400,
        error: 'Idempotency-Key must be 1 to 200 characters',
      },
    );
    t.same(await lead({ customer_key: 'c', session_id: 'x'.repeat(129) }, good), {
      status: 400,
      error: 'session_id must be at most 128 characters',
    });
  },
);

t.test('sale: additional_data, then the token, then the fields, then the Idempotency-Key', async (t) => {
  const app = await build();
  t.teardown(() => app.close());
  const sale = async (payload: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/track/sale',
      payload: payload as object,
      headers,
    });
    return { status: r.statusCode, error: r.json().error };
  };
  const good = { authorization: `Bearer ${TOKEN}` };
  t.same(await sale({ additional_data: 5, amount_cents: -1 }), {
    status: 400,
    error: 'additional_data must be an object',
  });
  t.same(
    await sale({ amount_cents: -1 }),
    { status: 401, error: 'Authorization header with a tracking token is required' },
    'the fields are checked after the token',
  );
  t.same(await sale({ amount_cents: -1 }, good), {
    status: 400,
    error: 'transaction_id is required and must be a string',
  });
  t.same(await sale({ transaction_id: 't', amount_cents: -1, customer_key: 'c' }, good), {
    status: 400,
    error: 'amount_cents is required and must be a positive integer',
  });
  t.same(await sale({ transaction_id: 't', amount_cents: 1, currency: 'usd ' }, good), {
    status: 400,
    error: 'currency must be an ISO 4217 code',
  });
  t.same(await sale({ transaction_id: 't', amount_cents: 1, customer_key: ' ' }, good), {
    status: 400,
    error: 'Customer not found. Provide customer_key or click_id.',
  });
  const late = { transaction_id: 't', amount_cents: 1, customer_key: 'c', product_id: 5 };
  t.same(await sale(late, { ...good, 'idempotency-key': '' }), {
    status: 400,
    error: 'Idempotency-Key must be 1 to 200 characters',
  });
  t.same(await sale(late, good), { status: 400, error: 'product_id must be a string' });
  t.same(
    await sale({ additional_data: { test_mode: true }, amount_cents: -1 }),
    { status: 400, error: 'additional_data.program_id is required for a test sale without a tracking token' },
    'test mode needs no token, but a program',
  );
  t.same(
    await sale({ additional_data: { test_mode: true, program_id: 7 }, amount_cents: -1 }),
    { status: 400, error: 'amount_cents is required and must be a positive integer' },
    'test mode allows 0, not less',
  );
});

t.test('refund: the token before the body, the Idempotency-Key before refund_reason', async (t) => {
  const app = await build();
  t.teardown(() => app.close());
  const refund = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await app.inject({
      method: 'POST',
      url,
      payload: JSON.stringify(payload),
      headers: { 'content-type': 'application/json', ...headers },
    });
    return { status: r.statusCode, error: r.json().error } as Answer;
  };
  const good = { authorization: `Bearer ${TOKEN}` };
  for (const url of ['/api/v1/track/refund', '/api/tracking/refund']) {
    t.same(await refund(url, [1]), {
      status: 401,
      error: 'Authorization header with a tracking token is required',
    });
    t.same(await refund(url, [1], good), { status: 400, error: 'Request body must be a JSON object' });
    t.same(await refund(url, { refund_amount_cents: -1 }, good), {
      status: 400,
      error: 'transaction_id is required',
    });
    t.same(await refund(url, { transaction_id: 't', refund_amount_cents: -1 }, good), {
      status: 400,
      error: 'refund_amount_cents must be a positive integer',
    });
    const late = { transaction_id: 't', refund_reason: 'x'.repeat(1001) };
    t.same(await refund(url, late, { ...good, 'idempotency-key': 'x'.repeat(201) }), {
      status: 400,
      error: 'Idempotency-Key must be 1 to 200 characters',
    });
    t.same(await refund(url, late, good), {
      status: 400,
      error: 'refund_reason must be at most 1000 characters',
    });
  }
});
