-- The breakdown by week (issue 20): per program, dimension, ISO week (its Monday, UTC) and key, the sum of
-- that week's program_daily_breakdown rows. Written in the same statement as the daily rows
-- (shared/pipeline/breakdown.ts, BreakdownBuffer.flush), so the two never disagree; `npm run rollups --
-- --check` compares them. GET /api/tracking/breakdown reads the whole weeks of its range here and only the
-- days at its ends from program_daily_breakdown: a 90-day range reads at most 13 weeks and 12 days of rows
-- per key instead of 90 (docs/pipeline.md "Rollups by partner, link, country, device, referrer and page").
create table program_weekly_breakdown (
  program_id        bigint not null,
  dimension         text not null check (dimension in ('partner', 'link', 'country', 'device', 'browser', 'os',
                                                       'referrer', 'landing_page')),
  week              date not null check (extract(isodow from week) = 1),
  key               text not null,
  clicks            bigint not null default 0,
  leads             bigint not null default 0,
  conversions       bigint not null default 0,
  sales             bigint not null default 0,
  revenue_cents     bigint not null default 0,
  commission_cents  bigint not null default 0,
  primary key (program_id, dimension, week, key)
);

insert into program_weekly_breakdown (program_id, dimension, week, key, clicks, leads, conversions, sales,
                                      revenue_cents, commission_cents)
select program_id, dimension, day - extract(isodow from day)::int + 1, key, sum(clicks), sum(leads), sum(conversions),
       sum(sales), sum(revenue_cents), sum(commission_cents)
from program_daily_breakdown
group by 1, 2, 3, 4;
