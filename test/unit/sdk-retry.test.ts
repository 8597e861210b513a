// The TypeScript SDK's retry decisions (sdk/typescript/src/retry.ts): which answers are retried for which
// kind of call, how Retry-After is read, and how long each retry waits.
import t from 'tap';
import {
  BACKOFF_CAP_MS,
  MAX_RETRY_AFTER_MS,
  isRetryable,
  parseRetryAfter,
  retryDelay,
} from '../../sdk/typescript/src/retry.ts';

t.test('idempotent calls retry 429, 502, 503, 504 and network errors, nothing else', async (t) => {
  for (const status of [429, 502, 503, 504]) t.ok(isRetryable('idempotent', { status }), `${status}`);
  for (const status of [200, 201, 400, 401, 403, 404, 409, 413, 500, 501])
    t.notOk(isRetryable('idempotent', { status }), `${status}`);
  t.ok(isRetryable('idempotent', { network: true }), 'network error or timeout');
});

t.test('calls that could act twice retry only a 429', async (t) => {
  t.ok(isRetryable('once', { status: 429 }));
  for (const status of [502, 503, 504, 500, 409]) t.notOk(isRetryable('once', { status }), `${status}`);
  t.notOk(isRetryable('once', { network: true }), 'a lost answer may have acted');
});

t.test('Retry-After: delay-seconds and HTTP dates', async (t) => {
  const now = Date.parse('2026-01-10T12:00:00Z');
  t.equal(parseRetryAfter('1', now), 1000);
  t.equal(parseRetryAfter('2', now), 2000);
  t.equal(parseRetryAfter(' 3 ', now), 3000);
  t.equal(parseRetryAfter('0', now), 0);
  t.equal(parseRetryAfter('1.5', now), 1500);
  t.equal(parseRetryAfter('Sat, 10 Jan 2026 12:00:30 GMT', now), 30_000, 'a date 30 s ahead');
  t.equal(parseRetryAfter('Sat, 10 Jan 2026 11:00:00 GMT', now), 0, 'a date in the past: now');
  for (const bad of [null, undefined, '', '  ', 'soon', '-1', '1e3', '0x10', '12abc'])
    t.equal(parseRetryAfter(bad, now), null, `unreadable ${JSON.stringify(bad)}`);
});

t.test(
  'with Retry-After: what was asked, plus at most 10 % (1 s) jitter; too long is not waited',
  async (t) => {
    t.equal(
      retryDelay(0, 1000, () => 0),
      1000,
    );
    t.equal(
      retryDelay(0, 1000, () => 1),
      1100,
    );
    t.equal(
      retryDelay(5, 1000, () => 0.5),
      1050,
      'the retry number does not matter',
    );
    t.equal(
      retryDelay(0, 20_000, () => 1),
      21_000,
      'jitter capped at 1 s',
    );
    t.equal(
      retryDelay(0, 0, () => 1),
      0,
    );
    t.equal(
      retryDelay(0, MAX_RETRY_AFTER_MS, () => 0),
      MAX_RETRY_AFTER_MS,
    );
    t.equal(
      retryDelay(0, MAX_RETRY_AFTER_MS + 1, () => 0),
      null,
      'longer than a minute: give the answer back',
    );
  },
);

t.test('without Retry-After: exponential backoff with equal jitter, capped', async (t) => {
  t.equal(
    retryDelay(0, null, () => 0),
    250,
  );
  t.equal(
    retryDelay(0, null, () => 1),
    500,
  );
  t.equal(
    retryDelay(1, null, () => 0),
    500,
  );
  t.equal(
    retryDelay(1, null, () => 1),
    1000,
  );
  t.equal(
    retryDelay(3, null, () => 1),
    4000,
  );
  t.equal(
    retryDelay(10, null, () => 1),
    BACKOFF_CAP_MS,
    'capped',
  );
  t.equal(
    retryDelay(10, null, () => 0),
    BACKOFF_CAP_MS / 2,
  );
  // Two clients refused together spread out.
  const spread = new Set(Array.from({ length: 50 }, () => retryDelay(2, null)));
  t.ok(spread.size > 10, `jittered (${spread.size} distinct delays of 50)`);
  for (const d of spread) t.ok(d! >= 1000 && d! <= 2000, `${d} in [1000, 2000]`);
});
