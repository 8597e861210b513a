// Callers get an answer, never a hang: a tracking request whose handler stalls (a driver stuck on a dying
// connection, seen in `npm run chaos` during a Postgres stop) is answered 503 with Retry-After at the bound.
import t from 'tap';
import Fastify from 'fastify';
import { NO_ANSWER_IN_TIME, installAnswerBound } from '../../shared/http/server.ts';
import { isTrackingWrite } from '../../services/web/app.ts';

t.test('a stalled tracking handler is answered 503 with Retry-After; others are left alone', async (t) => {
  const app = Fastify();
  installAnswerBound(app, 100, isTrackingWrite);
  let release: () => void = () => {};
  const stalled = new Promise<void>((r) => (release = r));
  app.post('/api/v1/track/sale', async () => {
    await stalled;
    return { late: true };
  });
  app.post('/api/v1/track/click', async () => ({ ok: true }));
  app.get('/api/tracking/status/:id', async () => {
    await new Promise((r) => setTimeout(r, 300));
    return { slow: 'but unbounded' };
  });
  t.teardown(() => app.close());

  const sale = await app.inject({ method: 'POST', url: '/api/v1/track/sale', payload: {} });
  t.equal(sale.statusCode, 503);
  t.equal(sale.headers['retry-after'], '2');
  t.same(sale.json(), { error: NO_ANSWER_IN_TIME });
  release();

  const click = await app.inject({ method: 'POST', url: '/api/v1/track/click', payload: {} });
  t.equal(click.statusCode, 200, 'a prompt answer is the answer');
  t.same(click.json(), { ok: true });

  const read = await app.inject({ method: 'GET', url: '/api/tracking/status/1' });
  t.equal(read.statusCode, 200, 'dashboard reads are not tracking writes');
});

t.test('which requests are tracking writes', async (t) => {
  const yes = [
    'POST /api/v1/track/click',
    'POST /api/tracking/lead',
    'POST /api/v1/track/sale?x=1',
    'POST /api/tracking/refund',
    'POST /api/v1/webhooks/processor/12',
  ];
  const no = [
    'GET /api/v1/track/click',
    'POST /api/tracking/performance/1',
    'POST /api/advertiser/affiliate-programs',
    'POST /api/v1/track/clicks',
  ];
  for (const r of yes) t.ok(isTrackingWrite({ method: r.split(' ')[0]!, url: r.split(' ')[1]! }), r);
  for (const r of no) t.notOk(isTrackingWrite({ method: r.split(' ')[0]!, url: r.split(' ')[1]! }), r);
});
