// Token buckets kept in Postgres (0013's `rate_limits`), for the low-volume routes a person drives: partner
// sign-ins and magic-link requests (per IP and per email), applications (per IP). The click path's limiter
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
