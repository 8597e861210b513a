// The decision of a step that knows no better: values Postgres rejects are poison, everything else retries.
import t from 'tap';
import { valuesRejectedArePoison } from '../../shared/pipeline/step-outcome.ts';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

t.test('data exceptions and constraint violations are dead-lettered with their message', async (t) => {
  t.match(valuesRejectedArePoison(pgError('22003')), { type: 'dead-letter', reason: 'pg 22003' });
  t.match(valuesRejectedArePoison(pgError('23503')), { type: 'dead-letter', reason: 'pg 23503' });
});

t.test('deadlocks, connection losses, bugs in our SQL and non-Postgres errors are retried', async (t) => {
  for (const code of ['40P01', '08006', '42703', '57P01'])
    t.match(valuesRejectedArePoison(pgError(code)), { type: 'retry' }, code);
  t.match(valuesRejectedArePoison(new Error('ECONNREFUSED')), { type: 'retry', reason: 'ECONNREFUSED' });
});
