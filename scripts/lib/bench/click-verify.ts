// The end of bench:clicks: nothing accepted is lost. Every click answered 200 "success": true has its row in
// click_events (exactly one), every link's click counter equals its rows, and the partner-program, daily
// and customer counts agree with them; no dead letters.
import type { Sql } from '../../../shared/db/sql.ts';
import type { LoadCounters } from './bench.ts';
import type { Seed } from './click-traffic.ts';

export interface ClickVerification {
  problems: string[];
  lost: number;
  acceptedTotal: number;
  dbRows: number;
  unknown: number;
  missing: number;
  perLink: { short_link: string; counter: string; rows: string }[];
  agg: { pp: string; daily: string; customers: string; dead: string };
}

/**
 * Compares what the load runs accepted (`runs`: every phase's counters, `acceptedIds` their click ids) with
 * the rows of the seeded links; dead letters since `since`. `problems` lists every discrepancy.
 */
export async function verifyClicks(
  sql: Sql,
  seed: Seed,
  runs: LoadCounters[],
  acceptedIds: string[],
  since: number,
): Promise<ClickVerification> {
  const problems: string[] = [];
  const linkIds = seed.links.map((l) => l.id);
  const dbIds = new Set<string>();
  let dbRows = 0;
  await sql`
    select click_id from click_events where link_id = any(${linkIds}::bigint[]) and not is_test`.cursor(
    20_000,
    (rows) => {
      for (const r of rows as unknown as { click_id: string }[]) {
        dbRows++;
        dbIds.add(r.click_id);
      }
    },
  );
  const acceptedTotal = runs.reduce((n, k) => n + k.accepted, 0);
  const acceptedSet = new Set(acceptedIds);
  let missing = 0;
  for (const id of acceptedSet) if (!dbIds.has(id)) missing++;
  const extra = dbIds.size - (acceptedSet.size - missing);
  const unknown = runs.reduce((n, k) => n + k.unknown, 0);
  if (acceptedSet.size !== acceptedTotal)
    problems.push(`${acceptedTotal - acceptedSet.size} accepted answers repeated a click_id`);
  if (missing > 0) problems.push(`${missing} accepted clicks have no row in click_events`);
  if (dbRows !== dbIds.size) problems.push(`${dbRows - dbIds.size} click_ids have more than one row`);
  if (extra > unknown)
    problems.push(
      `${extra} rows were never answered 200, more than the ${unknown} requests of unknown outcome`,
    );

  // The counter counts the human clicks only (bots and prefetches are stored, counted nowhere).
  const perLink = await sql<{ short_link: string; counter: string; counter_rows: string; rows: string }[]>`
    select l.short_link, l.clicks::text as counter, count(e.event_id) filter (where e.quality = 'human')::text as counter_rows,
           count(e.event_id)::text as rows
    from referral_links l left join click_events e on e.link_id = l.id and not e.is_test
    where l.id = any(${linkIds}::bigint[])
    group by l.id, l.short_link, l.clicks order by l.id`;
  for (const l of perLink) {
    const client = runs.reduce((n, k) => n + (k.perLink.get(l.short_link) ?? 0), 0);
    if (l.counter !== l.counter_rows)
      problems.push(`link ${l.short_link}: clicks counter ${l.counter} != ${l.counter_rows} human rows`);
    if (Number(l.rows) < client) problems.push(`link ${l.short_link}: ${client} accepted but ${l.rows} rows`);
  }
  const [agg] = await sql<{ pp: string; daily: string; customers: string; dead: string }[]>`
    select (select coalesce(sum(clicks), 0) from partner_programs where id = any(${seed.partnerProgramIds}::bigint[]))::text as pp,
           (select coalesce(sum(clicks), 0) from program_daily_stats where program_id = ${seed.programId})::text as daily,
           (select count(*) from customers where program_id = ${seed.programId})::text as customers,
           (select count(*) from dead_letters where created_at >= ${new Date(since)})::text as dead`;
  if (Number(agg!.pp) !== dbRows) problems.push(`partner_programs.clicks sum ${agg!.pp} != ${dbRows} rows`);
  if (Number(agg!.daily) !== dbRows)
    problems.push(`program_daily_stats.clicks sum ${agg!.daily} != ${dbRows} rows`);
  if (Number(agg!.customers) !== dbRows) problems.push(`${agg!.customers} customers != ${dbRows} rows`);
  if (Number(agg!.dead) > 0) problems.push(`${agg!.dead} dead letters`);
  const lost = Math.max(missing, acceptedTotal - dbRows, 0);
  return { problems, lost, acceptedTotal, dbRows, unknown, missing, perLink, agg: agg! };
}
