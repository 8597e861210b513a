// Persistence step: one transaction per chunk writes the click events and, only from the rows actually
// inserted, the customers, counters and daily rollups (so a redelivery changes nothing). See docs/pipeline.md.
// A bot or prefetch click (its `quality`, shared/tracking/quality.ts) is stored and makes its customer (a
// sale through it is then held for review, `bot_traffic`), but no counter, rollup or breakdown counts it.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { EnrichedClick } from './enrich-click.ts';
import { RollupBuffer } from '../../../../shared/rollups/dal.ts';
import { visitKeys } from '../../../../shared/rollups/rules.ts';
import type { VisitKeys } from '../../../../shared/rollups/rules.ts';

const EVENT_COLUMNS = [
  'event_id',
  'click_timestamp',
  'program_id',
  'link_id',
  'partner_id',
  'partner_program_id',
  'click_id',
  'is_test',
  'session_id',
  'page_url',
  'page_title',
  'referrer_url',
  'user_agent',
  'geo_country',
  'geo_region',
  'geo_city',
  'device_type',
  'device_os',
  'browser_name',
  'screen_resolution',
  'viewport_size',
  'language',
  'timezone',
  'ip_hash',
  'quality',
] as const;

/** 25 columns × 1,000 rows stays well under Postgres's 65,534 parameters per statement. */
const ROWS_PER_STATEMENT = 1000;

interface InsertedRow {
  event_id: string;
  is_test: boolean;
  quality: string;
}

export interface PersistResult {
  inserted: number;
  duplicates: number;
  counted: number;
  /** Of the inserted non-test clicks, the bots and prefetches: stored, counted nowhere. */
  filtered: number;
}

export function createPersistClicksStep(deps: { sql: Sql; breakdown?: boolean }) {
  const { sql } = deps;
  const breakdown = deps.breakdown ?? true;

  return async function persistClicks(clicks: EnrichedClick[]): Promise<PersistResult> {
    if (clicks.length === 0) return { inserted: 0, duplicates: 0, counted: 0, filtered: 0 };
    // The same message twice in one chunk (a producer retry) is one click; so are two clicks with one
    // client event id for one program (a caller's retry), the first kept.
    const byEvent = new Map<string, EnrichedClick>();
    const byClientId = new Set<string>();
    for (const c of clicks) {
      if (c.client_event_id) {
        const k = `${c.program_id}:${c.client_event_id}`;
        if (byClientId.has(k) && !byEvent.has(c.event_id)) continue;
        byClientId.add(k);
      }
      byEvent.set(c.event_id, c);
    }
    let unique = [...byEvent.values()];

    return sql.begin(async (tx) => {
      unique = await claimClientEventIds(tx, unique);
      const inserted = new Set<string>();
      const filtered = new Set<string>();
      let insertedAll = 0;
      for (let i = 0; i < unique.length; i += ROWS_PER_STATEMENT) {
        const rows = unique.slice(i, i + ROWS_PER_STATEMENT).map((c) => ({
          event_id: c.event_id,
          click_timestamp: new Date(c.ts),
          program_id: c.program_id,
          link_id: c.link_id,
          partner_id: c.partner_id,
          partner_program_id: c.partner_program_id,
          click_id: c.click_id,
          is_test: c.is_test,
          session_id: c.session_id,
          page_url: c.page_url,
          page_title: c.page_title,
          referrer_url: c.referrer_url,
          user_agent: c.user_agent,
          geo_country: c.geo_country,
          geo_region: c.geo_region,
          geo_city: c.geo_city,
          device_type: c.device_type,
          device_os: c.device_os,
          browser_name: c.browser_name,
          screen_resolution: c.screen_resolution,
          viewport_size: c.viewport_size,
          language: c.language,
          timezone: c.timezone,
          ip_hash: c.ip_hash ?? null,
          quality: c.quality ?? 'human',
        }));
        const got = await tx<InsertedRow[]>`
          insert into click_events ${tx(rows, ...EVENT_COLUMNS)}
          on conflict do nothing
          returning event_id::text, is_test, quality`;
        insertedAll += got.length;
        for (const r of got) {
          if (r.is_test) continue;
          inserted.add(r.event_id);
          if (r.quality !== 'human') filtered.add(r.event_id);
        }
      }
      const stored = unique.filter((c) => inserted.has(c.event_id));
      const counted = stored.filter((c) => !filtered.has(c.event_id));
      if (stored.length > 0) await applyCounters(tx, stored, filtered, breakdown);
      return {
        inserted: insertedAll,
        duplicates: clicks.length - insertedAll,
        counted: counted.length,
        filtered: stored.length - counted.length,
      };
    });
  };
}

/**
 * Records the (program, client event id) of each click that has one; a click whose pair was recorded
 * before (by an earlier attempt of the same click, or by this very message on a redelivery) is dropped:
 * its click event is already stored, by the same transaction that recorded the pair.
 */
async function claimClientEventIds(tx: Tx, clicks: EnrichedClick[]): Promise<EnrichedClick[]> {
  const withId = clicks.filter((c) => c.client_event_id);
  if (withId.length === 0) return clicks;
  const claimed = await tx<{ event_id: string }[]>`
    insert into click_client_events (program_id, client_event_id, event_id)
    select * from unnest(${withId.map((c) => c.program_id)}::bigint[],
                         ${withId.map((c) => c.client_event_id!)}::uuid[],
                         ${withId.map((c) => c.event_id)}::bigint[])
    on conflict do nothing
    returning event_id::text`;
  const won = new Set(claimed.map((r) => r.event_id));
  return clicks.filter((c) => !c.client_event_id || won.has(c.event_id));
}

/** Whether click a came before click b (time, then event id): the earlier one attributes its customer. */
const earlier = (a: EnrichedClick, b: EnrichedClick): boolean =>
  a.ts < b.ts || (a.ts === b.ts && BigInt(a.event_id) < BigInt(b.event_id));

/** Customers from every stored click; link and partner counters and the rollups from the human ones only. */
async function applyCounters(
  tx: Tx,
  clicks: EnrichedClick[],
  filtered: ReadonlySet<string>,
  breakdown: boolean,
): Promise<void> {
  // Customers: created by their first click, touched by later ones (existing_click_id reuse).
  const customers = new Map<string, { c: EnrichedClick; keys: VisitKeys; last: number }>();
  const links = new Map<number, { n: number; last: number }>();
  const pps = new Map<number, { n: number; last: number }>();
  const rollups = new RollupBuffer({ breakdown });
  for (const c of clicks) {
    const keys = visitKeys(c);
    const cu = customers.get(c.click_id!);
    if (!cu) customers.set(c.click_id!, { c, keys, last: c.ts });
    else {
      if (earlier(c, cu.c)) {
        cu.c = c;
        cu.keys = keys;
      }
      cu.last = Math.max(cu.last, c.ts);
    }
    if (filtered.has(c.event_id)) continue;
    const l = links.get(c.link_id!) ?? { n: 0, last: 0 };
    links.set(c.link_id!, { n: l.n + 1, last: Math.max(l.last, c.ts) });
    const p = pps.get(c.partner_program_id!) ?? { n: 0, last: 0 };
    pps.set(c.partner_program_id!, { n: p.n + 1, last: Math.max(p.last, c.ts) });
    rollups.add(
      c.program_id,
      c.ts,
      { clicks: 1 },
      { partner: String(c.partner_id), link: String(c.link_id), ...keys },
    );
  }

  // The attributing click's visit keys go with the customer (0014_rollups.sql): its leads and sales count
  // under them. A click older than the customer's first (a later chunk bringing an earlier click) takes over.
  const customerRows = [...customers.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([clickId, { c, keys, last }]) => ({
      click_id: clickId,
      program_id: c.program_id,
      partner_id: c.partner_id,
      partner_program_id: c.partner_program_id,
      link_id: c.link_id,
      customer_status: 'click',
      first_click_at: new Date(c.ts),
      last_click_at: new Date(last),
      created_at: new Date(c.ts),
      attr_country: keys.country,
      attr_device: keys.device,
      attr_browser: keys.browser,
      attr_os: keys.os,
      attr_referrer: keys.referrer,
      attr_landing_page: keys.landing_page,
    }));
  for (let i = 0; i < customerRows.length; i += 2000) {
    const rows = customerRows.slice(i, i + 2000);
    await tx`
      insert into customers ${tx(rows, 'click_id', 'program_id', 'partner_id', 'partner_program_id', 'link_id', 'customer_status', 'first_click_at', 'last_click_at', 'created_at', 'attr_country', 'attr_device', 'attr_browser', 'attr_os', 'attr_referrer', 'attr_landing_page')}
      on conflict (click_id) do update
        set last_click_at = greatest(customers.last_click_at, excluded.last_click_at),
            first_click_at = least(customers.first_click_at, excluded.first_click_at),
            attr_country = case when excluded.first_click_at < customers.first_click_at then excluded.attr_country else customers.attr_country end,
            attr_device = case when excluded.first_click_at < customers.first_click_at then excluded.attr_device else customers.attr_device end,
            attr_browser = case when excluded.first_click_at < customers.first_click_at then excluded.attr_browser else customers.attr_browser end,
            attr_os = case when excluded.first_click_at < customers.first_click_at then excluded.attr_os else customers.attr_os end,
            attr_referrer = case when excluded.first_click_at < customers.first_click_at then excluded.attr_referrer else customers.attr_referrer end,
            attr_landing_page = case when excluded.first_click_at < customers.first_click_at then excluded.attr_landing_page else customers.attr_landing_page end`;
  }

  const linkIds = [...links.keys()].sort((a, b) => a - b);
  if (linkIds.length === 0) return; // only bots and prefetches: nothing to count
  // FOR NO KEY UPDATE (what the UPDATE below takes), not FOR UPDATE: the customers insert above holds FOR
  // KEY SHARE on these rows through its foreign keys, and FOR UPDATE conflicts with KEY SHARE, so two
  // concurrent chunks deadlocked (40P01, one deadlock_timeout each).
  await tx`select 1 from referral_links where id = any(${linkIds}::bigint[]) order by id for no key update`;
  await tx`
    update referral_links l
    set clicks = l.clicks + v.n, last_clicked = greatest(l.last_clicked, v.ts), updated_at = now()
    from unnest(${linkIds}::bigint[], ${linkIds.map((id) => links.get(id)!.n)}::bigint[],
                ${linkIds.map((id) => new Date(links.get(id)!.last).toISOString())}::timestamptz[]) as v(id, n, ts)
    where l.id = v.id`;

  const ppIds = [...pps.keys()].sort((a, b) => a - b);
  await tx`select 1 from partner_programs where id = any(${ppIds}::bigint[]) order by id for no key update`;
  await tx`
    update partner_programs pp
    set clicks = pp.clicks + v.n, last_clicked_at = greatest(pp.last_clicked_at, v.ts)
    from unnest(${ppIds}::bigint[], ${ppIds.map((id) => pps.get(id)!.n)}::bigint[],
                ${ppIds.map((id) => new Date(pps.get(id)!.last).toISOString())}::timestamptz[]) as v(id, n, ts)
    where pp.id = v.id`;

  await rollups.flush(tx);
}
