// Readiness: every check runs at once, each bounded; the answer names what is not ready.
import t from 'tap';
import { readiness, readinessAnswer } from '../../shared/http/ops.ts';

t.test('all checks ok: 200 with each check', async (t) => {
  const r = await readiness({ postgres: async () => 'ok', kafka: async () => 'ok' });
  t.same(readinessAnswer(r), { status: 200, body: { ready: true, checks: { postgres: 'ok', kafka: 'ok' } } });
});

t.test('a failing, a throwing and a hanging check: 503 naming each', async (t) => {
  const r = await readiness({
    postgres: async () => 'ok',
    kafka: async () => 'connect ECONNREFUSED',
    consumer: async () => {
      throw new Error('crashed');
    },
    slow: () => new Promise(() => {}),
  });
  const a = readinessAnswer(r);
  t.equal(a.status, 503);
  t.equal(a.body.error, 'not ready: kafka, consumer, slow');
  t.same(a.body.checks, {
    postgres: 'ok',
    kafka: 'connect ECONNREFUSED',
    consumer: 'crashed',
    slow: 'no answer within 1000 ms',
  });
});
