// Row locks as a test's way to reach a precondition by construction: hold a row a service needs, see the
// service's backend wait for it (pg_blocking_pids), act (kill, SIGTERM), then let go. Only waiters blocked by
// the holder's own backend count: other test files' services share the database.
import type { Sql } from '../../shared/db/sql.ts';
import type { Teardown } from './stack.ts';

/**
 * Holds `for update` on one row, in a transaction of its own, until `release()` (or the test's end):
 * whoever needs that row waits, visibly (pg_blocking_pids of `pid`), for as long as the test wants.
 */
export async function holdRow(
  t: Teardown,
  sql: Sql,
  table: string,
  id: number,
): Promise<{ pid: number; release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: Promise<void>;
  const pid = await new Promise<number>((resolve, reject) => {
    held = sql.begin(async (tx) => {
      const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await tx`select 1 from ${tx(table)} where id = ${id} for update`;
      resolve(me!.pid);
      await released;
    });
    held.catch(reject);
  });
  const end = async () => {
    release();
    await held;
  };
  t.teardown(end);
  return { pid, release: end };
}

/**
 * Whether a backend whose application_name is like `app` (`svc-click-worker`, `svc-web%`) waits for a lock
 * that backend `pid` holds.
 */
export async function blockedBy(sql: Sql, app: string, pid: number): Promise<boolean> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where application_name like ${app} and pg_blocking_pids(pid) @> array[${pid}]::int[]`;
  return r!.n > 0;
}
