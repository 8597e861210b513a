-- Initial schema: programs, partners, referral links, customers, click events and the rollups the
-- click worker maintains. Money is integer cents; timestamps are timestamptz (calendar days are UTC).

create sequence instance_node_seq;

create table workspaces (
  id          bigserial primary key,
  name        text not null,
  created_at  timestamptz not null default now()
);

create table programs (
  id                  bigserial primary key,
  workspace_id        bigint references workspaces (id),
  name                text not null,
  slug                text not null unique,
  status              text not null default 'draft' check (status in ('draft', 'live')),
  cookie_window_days  integer not null default 60 check (cookie_window_days between 1 and 3650),
  currency            char(3) not null default 'USD',
  commission          jsonb not null default '{"type": "percentage", "percent": 20}',
  allowed_origins     text[] not null default '{}',
  api_token_hash      bytea unique,
  api_token_masked    text,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now(),
  deleted_at          timestamptz
);

create table partners (
  id            bigserial primary key,
  workspace_id  bigint references workspaces (id),
  name          text not null,
  email         text not null,
  balance_cents bigint not null default 0,
  created_at    timestamptz not null default now()
);
create index partners_email on partners (email);

create table partner_programs (
  id               bigserial primary key,
  partner_id       bigint not null references partners (id),
  program_id       bigint not null references programs (id),
  status           text not null default 'approved' check (status in ('approved', 'pending')),
  clicks           bigint not null default 0,
  last_clicked_at  timestamptz,
  balance_cents    bigint not null default 0,
  created_at       timestamptz not null default now(),
  unique (partner_id, program_id)
);
create index partner_programs_program on partner_programs (program_id, created_at);

-- A link without both a partner and a program is invalid (spec 2): the columns may be null when a
-- partner or program is removed, and the ingress answers "Invalid referral link configuration".
create table referral_links (
  id                  bigserial primary key,
  short_link          text not null unique check (short_link ~ '^[A-Za-z0-9_-]{1,64}$'),
  program_id          bigint references programs (id) on delete set null,
  partner_id          bigint references partners (id) on delete set null,
  partner_program_id  bigint references partner_programs (id) on delete set null,
  status              text not null default 'active' check (status in ('active', 'inactive')),
  clicks              bigint not null default 0,
  last_clicked        timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
create index referral_links_partner_program on referral_links (partner_program_id);

create table customers (
  id                  bigserial primary key,
  program_id          bigint not null references programs (id),
  partner_id          bigint references partners (id),
  partner_program_id  bigint references partner_programs (id),
  link_id             bigint references referral_links (id) on delete set null,
  click_id            text unique,
  customer_status     text not null check (customer_status in ('click', 'lead', 'conversion')),
  customer_key        text,
  email               text,
  first_click_at      timestamptz,
  last_click_at       timestamptz,
  signup_date         timestamptz,
  first_purchase_date timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now(),
  unique (program_id, customer_key)
);

-- Click events: the big table, range-partitioned by month on the ingress timestamp. event_id is the
-- ingress-minted snowflake; (click_timestamp, event_id) is what makes a redelivered message a no-op.
create table click_events (
  event_id            bigint not null,
  click_timestamp     timestamptz not null,
  program_id          bigint not null,
  link_id             bigint,
  partner_id          bigint,
  partner_program_id  bigint,
  click_id            text,
  is_test             boolean not null default false,
  session_id          text,
  page_url            text,
  page_title          text,
  referrer_url        text,
  user_agent          text,
  geo_country         text,
  geo_region          text,
  geo_city            text,
  device_type         text,
  device_os           text,
  browser_name        text,
  screen_resolution   text,
  viewport_size       text,
  language            text,
  timezone            text,
  created_at          timestamptz not null default now(),
  primary key (click_timestamp, event_id)
) partition by range (click_timestamp);
create index click_events_program_time on click_events (program_id, click_timestamp desc, event_id desc);
create index click_events_click_id on click_events (click_id);

-- Monthly partitions (UTC months). Workers call this at boot and daily; concurrent callers serialise on
-- an advisory lock so "create table if not exists" never races itself.
create function ensure_click_event_partitions(p_from timestamptz, p_to timestamptz) returns void
language plpgsql as $$
declare
  m timestamptz := date_trunc('month', p_from at time zone 'UTC') at time zone 'UTC';
  nxt timestamptz;
begin
  perform pg_advisory_xact_lock(hashtext('ensure_click_event_partitions'));
  while m <= p_to loop
    nxt := (date_trunc('month', m at time zone 'UTC') + interval '1 month') at time zone 'UTC';
    execute format('create table if not exists %I partition of click_events for values from (%L) to (%L)',
                   'click_events_' || to_char(m at time zone 'UTC', 'YYYYMM'), m, nxt);
    m := nxt;
  end loop;
end $$;
select ensure_click_event_partitions(now() - interval '3 months', now() + interval '2 months');

-- Per program and UTC day, maintained in the same transaction as the events it counts, so that
-- /performance reads O(days). Columns beyond clicks are filled as lead/sale processing lands.
create table program_daily_stats (
  program_id        bigint not null,
  day               date not null,
  clicks            bigint not null default 0,
  leads             bigint not null default 0,
  conversions       bigint not null default 0,
  sales             bigint not null default 0,
  revenue_cents     bigint not null default 0,
  commission_cents  bigint not null default 0,
  primary key (program_id, day)
);

-- Messages that can never be processed: kept with their original bytes, beside the dead-letter topic.
create table dead_letters (
  id               bigserial primary key,
  source_topic     text not null,
  source_partition integer not null,
  source_offset    bigint not null,
  step             text not null,
  reason           text not null,
  message_key      bytea,
  payload          bytea,
  created_at       timestamptz not null default now(),
  unique (source_topic, source_partition, source_offset)
);

-- Cache invalidation log: triggers append the keys of changed links and programs; every ingress polls
-- it (seq > last seen) and evicts those keys. Polling cannot miss a change the way a dropped LISTEN can.
create table cache_invalidations (
  seq         bigserial primary key,
  kind        text not null,
  key         text not null,
  created_at  timestamptz not null default now()
);

create function log_link_change() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    insert into cache_invalidations (kind, key) values ('link', old.short_link);
  end if;
  if tg_op in ('INSERT', 'UPDATE') and (tg_op = 'INSERT' or new.short_link is distinct from old.short_link) then
    insert into cache_invalidations (kind, key) values ('link', new.short_link);
  end if;
  return null;
end $$;
-- Not on clicks/last_clicked: the click worker updates those on every batch, and the cache does not hold them.
create trigger referral_links_changed after insert or delete or update of short_link, status, program_id,
  partner_id, partner_program_id on referral_links
  for each row execute function log_link_change();

create function log_program_change() returns trigger language plpgsql as $$
begin
  insert into cache_invalidations (kind, key) values ('program', coalesce(new.id, old.id)::text);
  return null;
end $$;
-- The link cache holds program fields (cookie window, deletion); counters do not live on programs.
create trigger programs_changed after update or delete on programs
  for each row execute function log_program_change();

create function log_partner_program_change() returns trigger language plpgsql as $$
begin
  insert into cache_invalidations (kind, key) values ('partner_program', coalesce(new.id, old.id)::text);
  return null;
end $$;
-- Click counters change on every batch; only a status change matters to the cache.
create trigger partner_programs_changed after update of status, partner_id, program_id or delete on partner_programs
  for each row execute function log_partner_program_change();
