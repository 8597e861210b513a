// postgres.js's default reconnect backoff grows with every failed attempt to 10-20 s, so after a Postgres
// restart queries waited up to 19 s (measured). createSql caps it at 0.5 s.
import t from 'tap';
import { createSql, reconnectDelaySeconds } from '../../shared/db/sql.ts';

t.test('reconnect attempts stay at most 0.5 s apart however long the outage', async (t) => {
  const delays = Array.from({ length: 60 }, (_, n) => reconnectDelaySeconds(n));
  t.ok(
    delays.every((d) => d > 0 && d <= 0.5),
    `every delay in (0, 0.5] s: ${delays.slice(0, 8).join(', ')}…`,
  );
  t.equal(reconnectDelaySeconds(1), 0.05, 'the first retry comes at once');
  // No connection is opened until a query runs: the options are what postgres.js will use.
  const sql = createSql('postgres://nobody@127.0.0.1:1/none', 1);
  t.equal(sql.options.backoff, reconnectDelaySeconds, 'the process-wide client uses it');
  await sql.end({ timeout: 0 });
});
