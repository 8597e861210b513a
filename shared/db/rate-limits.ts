// Token buckets kept in Postgres (0013's `rate_limits`), for the low-volume routes a person drives: password
// checks, signups and magic-link requests per address, magic-link requests per email, applications per
// address; and the failure windows of sign-in per email (0019's `sign_in_failures`, `takeFailure`). The
// click path's limiter
// (services/ingress/rate-limit.ts) is the same bucket in process memory, right for tens of thousands of
// clicks a second; these routes see a few requests a minute per caller, so one upsert per request is cheap
// and the bucket then holds across every web process (N processes do not give an attacker N buckets).
//
// One statement per check, under the row's lock: the bucket is refilled for the time passed (at
// `perMinute`, up to `burst`), and one token is taken when there is one. Refused requests take nothing.
import type { Sql } from './sql.ts';

export interface BucketRule {
  /** Sustained requests per minute; 0 turns the bucket off. */
  perMinute: number;
  /** Requests an idle key may send at once. */
  burst: number;
}

/** null: allowed (a token was taken). Otherwise the whole seconds until the next token (Retry-After). */
export async function takeToken(sql: Sql, key: string, rule: BucketRule): Promise<number | null> {
  if (rule.perMinute <= 0) return null;
  const perSecond = rule.perMinute / 60;
  const burst = Math.max(1, rule.burst);
  const refill = sql`least(${burst}::float8, r.tokens + extract(epoch from clock_timestamp() - r.at) * ${perSecond}::float8)`;
  const [row] = await sql<{ tokens: number; allowed: boolean }[]>`
    insert into rate_limits as r (key, tokens, at, allowed)
    values (${key}, ${burst - 1}::float8, clock_timestamp(), true)
    on conflict (key) do update set
      tokens = case when ${refill} >= 1 then ${refill} - 1 else ${refill} end,
      allowed = ${refill} >= 1,
      at = clock_timestamp()
    returning tokens, allowed`;
  if (row!.allowed) {
    // Keys idle for a day behave like absent ones: drop them now and then.
    if (Math.random() < 0.01) await sql`delete from rate_limits where at < now() - interval '1 day'`;
    return null;
  }
  return Math.max(1, Math.ceil((1 - row!.tokens) / perSecond));
}

export interface WindowRule {
  /** Failures allowed within the window; 0 turns the rule off. */
  max: number;
  windowMs: number;
}

/**
 * Counts one failure for `key` unless `max` were already counted within the window: null (counted), or the
 * whole seconds until the oldest of them leaves the window (Retry-After). One statement under the row's
 * lock, so concurrent checks never count past `max`. A success calls `clearFailures`.
 */
export async function takeFailure(sql: Sql, key: string, rule: WindowRule): Promise<number | null> {
  if (rule.max <= 0) return null;
  const seconds = rule.windowMs / 1000;
  const recent = sql`array(
    select x from unnest(f.failures) x
    where x > statement_timestamp() - make_interval(secs => ${seconds}::float8) order by x)`;
  const [row] = await sql<{ allowed: boolean; wait: number | null }[]>`
    insert into sign_in_failures as f (key, failures, allowed, at)
    values (${key}, array[statement_timestamp()], true, statement_timestamp())
    on conflict (key) do update set
      allowed = cardinality(${recent}) < ${rule.max}::int,
      failures = case when cardinality(${recent}) < ${rule.max}::int
        then ${recent} || statement_timestamp() else ${recent} end,
      at = statement_timestamp()
    returning allowed, extract(epoch from
      failures[greatest(1, cardinality(failures) - ${rule.max}::int + 1)]
      + make_interval(secs => ${seconds}::float8) - statement_timestamp())::float8 as wait`;
  if (row!.allowed) {
    if (Math.random() < 0.01) {
      await sql`delete from sign_in_failures where at < now() - make_interval(secs => ${seconds}::float8)`;
    }
    return null;
  }
  return Math.max(1, Math.ceil(row!.wait ?? 1));
}

/** Forgets the failures of `key` (a successful sign-in). */
export async function clearFailures(sql: Sql, key: string): Promise<void> {
  await sql`delete from sign_in_failures where key = ${key}`;
}
