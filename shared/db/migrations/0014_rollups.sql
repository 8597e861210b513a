-- Dimensional daily rollups (issue 20, CONTRACT "Analytics: who and where"): per program, UTC day,
-- dimension and key, the counters of program_daily_stats, kept by the workers in the transactions of the
-- events they count, exactly like program_daily_stats (shared/pipeline/breakdown.ts, docs/pipeline.md
-- "Rollups"). GET /api/tracking/breakdown and the partnerId / linkId filters of /performance read them:
-- O(days x keys), never the events.
--
-- key: the partner or link id (decimal), the country code, the device type, browser or OS name, the
-- referrer's host, the landing page (page_url up to its first ? or #); `unknown` when the value is missing,
-- `other` for what went past the per-day cap of distinct keys of a visitor dimension.
create table program_daily_breakdown (
  program_id        bigint not null,
  dimension         text not null check (dimension in ('partner', 'link', 'country', 'device', 'browser', 'os',
                                                       'referrer', 'landing_page')),
  day               date not null,
  key               text not null,
  clicks            bigint not null default 0,
  leads             bigint not null default 0,
  conversions       bigint not null default 0,
  sales             bigint not null default 0,
  revenue_cents     bigint not null default 0,
  commission_cents  bigint not null default 0,
  primary key (program_id, dimension, day, key)
);
-- One partner's or one link's days (the performance filters, the partner portal): O(days), whatever the
-- number of partners.
create index program_daily_breakdown_member on program_daily_breakdown (program_id, dimension, key, day)
  where dimension in ('partner', 'link');

-- The attributing click's values, remembered on its customer: the click that created the customer row (its
-- first click). Leads, conversions, revenue and commission of the customer count under these keys. Null on
-- a customer without a click, and on customers created before this migration until
-- `npm run rollups -- --rebuild` fills them from their first click event.
alter table customers
  add column attr_country       text,
  add column attr_device        text,
  add column attr_browser       text,
  add column attr_os            text,
  add column attr_referrer      text,
  add column attr_landing_page  text;

-- npm run rollups -- --rebuild: one row per run; `done_through` is the last (program, day) chunk
-- committed, written in that chunk's transaction, so an interrupted run resumes after it.
create table rollup_rebuilds (
  id                  bigserial primary key,
  program_ids         bigint[],
  first_day           date,
  last_day            date,
  done_program_id     bigint,
  done_day            date,
  chunks              bigint not null default 0,
  started_at          timestamptz not null default now(),
  finished_at         timestamptz
);
