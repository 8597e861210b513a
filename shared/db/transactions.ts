// A transaction retried when Postgres chose it as the victim of a deadlock (40P01) or a serialization
// failure (40001). Payout writes lock a program's commissions in id order while the reversal worker locks
// the commissions of its refunds in message order; when the two cross, Postgres aborts one of them after
// deadlock_timeout, and the request should not answer 500 for what a second attempt settles.
import type { Sql, Tx } from './sql.ts';

const RETRIED = new Set(['40P01', '40001']);

export function isRetriableTxError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRIED.has(code);
}

/** `sql.begin(fn)`, again (up to `attempts` times in all) while it fails with a deadlock or serialization failure. */
export async function beginRetrying<T>(sql: Sql, fn: (tx: Tx) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(fn)) as T;
    } catch (err) {
      if (attempt >= attempts || !isRetriableTxError(err)) throw err;
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
    }
  }
}
