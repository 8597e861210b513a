// The Python SDK (sdk/python) against the real service: sdk/python/tests/test_live.py runs with the
// machine's python3 (standard library only) against the services this file starts, through two proxies
// that spoil the first sale they see (a 503 with Retry-After: 1, and a connection dropped after the service
// recorded the sale). Here, afterwards: each of those sales is recorded once and both attempts carried the
// same Idempotency-Key and body.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { flakyProxy } from '../helpers/flaky-proxy.ts';
import type { ProxiedRequest } from '../helpers/flaky-proxy.ts';
import { sdkProgram } from '../helpers/sdk-program.ts';
import { PY_DIR, runPython } from '../helpers/python.ts';

const sql = testSql(t);
const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
  'notification-worker',
  'outbox-relay',
]);
const fx = await sdkProgram(svc, 'py');
const isSale = (method: string, path: string) => method === 'POST' && path === '/api/v1/track/sale';
const p503 = await flakyProxy(t, svc.baseUrl, '503', isSale);
const pDrop = await flakyProxy(t, svc.baseUrl, 'drop', isSale);
const txn503 = `py-order-${fx.run}-503`;
const txnDrop = `py-order-${fx.run}-drop`;

t.test('tests/test_live.py passes against the running service', async (t) => {
  const r = await runPython('python3', ['-m', 'unittest', '-v', 'tests.test_live'], {
    cwd: PY_DIR,
    env: {
      SVC_BASE_URL: svc.baseUrl,
      SVC_TRACKING_TOKEN: fx.trackingToken,
      SVC_API_KEY: fx.apiKey,
      SVC_SESSION: fx.session,
      SVC_PROGRAM_ID: String(fx.programId),
      SVC_PARTNER_ID: String(fx.partnerId),
      SVC_AFFILIATE_URL: fx.affiliateUrl,
      SVC_RUN: fx.run,
      SVC_PROXY_503_URL: p503.url,
      SVC_TXN_503: txn503,
      SVC_PROXY_DROP_URL: pDrop.url,
      SVC_TXN_DROP: txnDrop,
      SVC_COUPON_CODE: fx.couponCode,
    },
  });
  t.equal(r.code, 0, 'python3 -m unittest tests.test_live', { output: r.out.slice(-6000) });
  t.match(r.out, /Ran 8 tests/);
  t.notMatch(r.out, /skipped/, 'nothing skipped');

  for (const [proxy, txn, spoiled] of [
    [p503, txn503, '503'],
    [pDrop, txnDrop, 'dropped'],
  ] as const) {
    // The spoiled attempt, then the retries: one, or more when the loaded service itself answered 503.
    const attempts = proxy.seen.filter((x: ProxiedRequest) => isSale(x.method, x.path));
    t.equal(attempts[0]?.fate, spoiled, `${spoiled}: the first attempt`);
    t.ok(attempts.length >= 2, `${spoiled}: retried (${attempts.length} attempts)`);
    t.ok(attempts.slice(1).every((x) => x.fate === 'passed'));
    const key = attempts[0]?.headers['idempotency-key'];
    t.type(key, 'string');
    t.ok(
      attempts.every((x) => x.headers['idempotency-key'] === key && x.body === attempts[0]!.body),
      'every attempt carried the same Idempotency-Key and body',
    );
    const rows = await sql<{ id: string }[]>`select id from sales where transaction_id = ${txn}`;
    t.equal(rows.length, 1, `${txn} recorded once`);
    if (spoiled === 'dropped') {
      t.match(r.out, new RegExp(`SALE_DROP_ID=${rows[0]?.id}\\b`), 'the caller got the recorded sale');
    }
  }
});
