-- Rewards (CONTRACT part four; docs/rewards.md): groups of partners with their own terms, partner overrides,
-- tier rules that move partners up as they sell, stepped recurring rates, bonuses, discounts for the
-- customers partners bring, and on every commission what priced it.

-- ---- groups ----
-- A program's partners are in groups. The default group's commission is the program's own
-- (programs.commission: its `commission` here stays null, and a change of either is a change of both);
-- another group's null commission means the program's too. hold_days and auto_approve null: the program's.
-- A deleted group is kept (soft) so that the commissions it priced still name it; its slug is free again.
create table program_groups (
  id            bigserial primary key,
  program_id    bigint not null references programs (id),
  name          text not null,
  slug          text not null check (slug ~ '^[a-z0-9-]{1,40}$'),
  is_default    boolean not null default false,
  commission    jsonb,
  hold_days     integer check (hold_days between 0 and 365),
  auto_approve  boolean,
  discount      jsonb,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  deleted_at    timestamptz,
  check (not (is_default and deleted_at is not null))
);
create unique index program_groups_slug on program_groups (program_id, slug) where deleted_at is null;
create unique index program_groups_default on program_groups (program_id) where is_default;

-- Every program has its default group from its first moment, whoever inserts it (the API, seeds, tests).
create function add_default_group() returns trigger language plpgsql as $$
begin
  insert into program_groups (program_id, name, slug, is_default) values (new.id, 'Default', 'default', true);
  return null;
end $$;
create trigger programs_default_group after insert on programs
  for each row execute function add_default_group();

insert into program_groups (program_id, name, slug, is_default, created_at)
select id, 'Default', 'default', true, created_at from programs;

-- A partner-program's group, whether tier rules may move it, and its own policy (null: none).
alter table partner_programs
  add column group_id bigint references program_groups (id),
  add column group_locked boolean not null default false,
  add column commission_override jsonb;
update partner_programs pp set group_id = g.id
from program_groups g where g.program_id = pp.program_id and g.is_default;
alter table partner_programs alter column group_id set not null;
create index partner_programs_group on partner_programs (group_id);

-- A partner joining without a group named joins the default group, whoever inserts the row.
create function place_in_default_group() returns trigger language plpgsql as $$
begin
  if new.group_id is null then
    select id into new.group_id from program_groups where program_id = new.program_id and is_default;
  end if;
  return new;
end $$;
create trigger partner_programs_default_group before insert on partner_programs
  for each row execute function place_in_default_group();

-- The ingress caches a link with its partner's group's discount: a move evicts the partner-program's links,
-- a change of a group evicts its program's (0001's triggers; these extend them).
drop trigger partner_programs_changed on partner_programs;
create trigger partner_programs_changed
  after update of status, partner_id, program_id, group_id or delete on partner_programs
  for each row execute function log_partner_program_change();
create function log_group_change() returns trigger language plpgsql as $$
begin
  insert into cache_invalidations (kind, key) values ('program', coalesce(new.program_id, old.program_id)::text);
  return null;
end $$;
create trigger program_groups_changed after update or delete on program_groups
  for each row execute function log_group_change();

-- Every move of a partner between groups: by a tier rule (in the transaction of the sale or refund that
-- crossed its threshold), by hand, or because its group was deleted.
create table partner_group_changes (
  id                  bigserial primary key,
  partner_program_id  bigint not null references partner_programs (id),
  from_group_id       bigint references program_groups (id),
  to_group_id         bigint not null references program_groups (id),
  reason              text not null check (reason in ('tier_rule', 'manual', 'group_deleted')),
  rule_id             bigint,
  created_at          timestamptz not null default now()
);
create index partner_group_changes_pp on partner_group_changes (partner_program_id, id);

-- ---- tier rules ----
-- The program's ladder: a partner in from_group (not locked) whose metric in the window reached threshold
-- moves to to_group. Replaced as a whole by PUT …/tier-rules (ids change then; moves keep the rule id they
-- were made by).
create table tier_rules (
  id                        bigserial primary key,
  program_id                bigint not null references programs (id),
  position                  integer not null,
  from_group_id             bigint not null references program_groups (id),
  to_group_id               bigint not null references program_groups (id),
  metric                    text not null check (metric in ('sales_cents', 'customers', 'commission_cents')),
  time_window               text not null check (time_window in ('lifetime', 'calendar_month')),
  threshold                 bigint not null check (threshold > 0),
  carry_existing_customers  boolean not null default true,
  check (from_group_id <> to_group_id)
);
create index tier_rules_program on tier_rules (program_id, position);

-- What a tier rule reads, per partner-program: its lifetime (period 1970-01-01) and each UTC month's
-- attributed sales less refunds, customers with a sale, and commissions less refund deductions. Written in
-- the transaction of each sale and refund; a program with tier rules or bonuses locks its partners' rows
-- before deciding, so concurrent sales cross a threshold once (docs/rewards.md).
create table partner_metrics (
  partner_program_id  bigint not null references partner_programs (id),
  period              date not null,
  sales_cents         bigint not null default 0,
  customers           bigint not null default 0,
  commission_cents    bigint not null default 0,
  primary key (partner_program_id, period)
);

-- ---- partner–customer pairs ----
-- The commissions of one partner with one customer (stepped rates count them; recurring months run from
-- the first), its last sale (a customer counts once per window), and the group it stays priced by when the
-- partner moved up under a rule with carry_existing_customers false (pinned_group_id; null: the partner's).
create table partner_customers (
  customer_id          bigint not null references customers (id),
  partner_program_id   bigint not null references partner_programs (id),
  commissions          integer not null default 0,
  first_commission_at  timestamptz,
  last_sale_at         timestamptz,
  pinned_group_id      bigint references program_groups (id),
  primary key (customer_id, partner_program_id)
);
create index partner_customers_pp on partner_customers (partner_program_id) where commissions > 0;

-- ---- bonuses ----
create table bonuses (
  id            bigserial primary key,
  program_id    bigint not null references programs (id),
  name          text not null,
  group_ids     bigint[],
  metric        text not null check (metric in ('sales_cents', 'customers', 'conversions')),
  threshold     bigint not null check (threshold > 0),
  amount_cents  bigint not null check (amount_cents > 0),
  period        text not null check (period in ('once', 'calendar_month')),
  starts_at     timestamptz not null,
  ends_at       timestamptz not null,
  created_at    timestamptz not null default now(),
  deleted_at    timestamptz,
  check (ends_at > starts_at)
);
create index bonuses_program on bonuses (program_id) where deleted_at is null;

-- A partner's progress towards a bonus in one period ('once', or the UTC month 'YYYY-MM'), and when its
-- commission was made (the commission's unique index decides; this only spares later sales the attempt).
create table bonus_progress (
  bonus_id            bigint not null references bonuses (id),
  partner_program_id  bigint not null references partner_programs (id),
  period              text not null,
  value               bigint not null default 0,
  awarded_at          timestamptz,
  primary key (bonus_id, partner_program_id, period)
);

-- ---- commissions: what priced each one; bonuses have no sale ----
alter table commissions
  alter column sale_id drop not null,
  add column group_id bigint references program_groups (id),
  add column rule jsonb,
  add column bonus_id bigint references bonuses (id),
  add column bonus_period text,
  add constraint commissions_sale_or_bonus check (sale_id is not null or bonus_id is not null);
-- At most one commission per bonus, partner and period, whatever runs concurrently or is delivered again.
create unique index commissions_bonus_once on commissions (bonus_id, partner_program_id, bonus_period)
  where bonus_id is not null;
create index commissions_group on commissions (group_id);

-- A refund's amount, written by the first refund of the sale: the partner's sales_cents lose it once,
-- however often the refund is sent (null: not refunded).
alter table sales add column refunded_cents bigint;

-- ---- what older rows show ----
-- Commissions from before: the group is the default (every partner was in it); the rule is derived from
-- the program's policy as it is now: `product` when the sale's product has a rule there, else `group`,
-- with that rate when it reproduces the commission's amount, else type, percent and amount_cents null (the
-- policy changed since, and what priced it can no longer be told).
update commissions c set group_id = g.id
from program_groups g where g.program_id = c.program_id and g.is_default;

with derived as (
  select c.id, c.amount_cents, s.amount_cents as sale_cents,
         coalesce(
           (select r from jsonb_array_elements(
                            case when jsonb_typeof(p.commission -> 'product_rules') = 'array'
                                 then p.commission -> 'product_rules' else '[]'::jsonb end) r
            where s.product_id is not null and r ->> 'product_id' = s.product_id limit 1),
           p.commission) as rate,
         exists (select 1 from jsonb_array_elements(
                                 case when jsonb_typeof(p.commission -> 'product_rules') = 'array'
                                      then p.commission -> 'product_rules' else '[]'::jsonb end) r
                 where s.product_id is not null and r ->> 'product_id' = s.product_id) as by_product
  from commissions c join sales s on s.id = c.sale_id join programs p on p.id = c.program_id
), told as (
  select id, by_product, rate ->> 'type' as type,
         case when rate ->> 'type' = 'percentage' and jsonb_typeof(rate -> 'percent') = 'number'
                   and floor(sale_cents * (rate ->> 'percent')::numeric / 100 + 0.5) = amount_cents
              then (rate -> 'percent') end as percent,
         case when rate ->> 'type' = 'flat' and jsonb_typeof(rate -> 'amount_cents') = 'number'
                   and (rate ->> 'amount_cents')::numeric = amount_cents
              then (rate -> 'amount_cents') end as amount_cents
  from derived
)
update commissions c set rule = jsonb_build_object(
  'source', case when t.by_product then 'product' else 'group' end,
  'type', case when t.percent is not null or t.amount_cents is not null then to_jsonb(t.type) else 'null'::jsonb end,
  'percent', coalesce(t.percent, 'null'::jsonb),
  'amount_cents', coalesce(t.amount_cents, 'null'::jsonb))
from told t where t.id = c.id;

-- The pairs of the commissions and sales there are.
insert into partner_customers (customer_id, partner_program_id, commissions, first_commission_at, last_sale_at)
select s.customer_id, s.partner_program_id,
       count(c.id), min(s.sale_date) filter (where c.id is not null), max(s.sale_date)
from sales s left join commissions c on c.sale_id = s.id
where s.customer_id is not null and s.partner_program_id is not null and not s.is_test
group by s.customer_id, s.partner_program_id;

-- The metrics of the sales and commissions there are, per partner-program, lifetime and per UTC month. A
-- refund from before is known only by its deduction: a reversed commission's sale counts nothing, a partly
-- refunded one what its deduction leaves in proportion.
with attributed as (
  select s.partner_program_id as pp, date_trunc('month', s.sale_date at time zone 'UTC')::date as month,
         s.customer_id,
         s.amount_cents - case
           when c.status = 'reversed' and c.refund_reason not like 'rejected%' then s.amount_cents
           when c.status = 'refunded' and c.amount_cents > 0
             then floor(s.amount_cents * c.deducted_cents::numeric / c.amount_cents + 0.5)::bigint
           else 0 end as net_cents,
         coalesce(c.amount_cents - c.deducted_cents, 0) as commission_cents
  from sales s left join commissions c on c.sale_id = s.id
  where s.partner_program_id is not null and not s.is_test and s.customer_id is not null
), periods as (
  select pp, month as period, net_cents, commission_cents, customer_id from attributed
  union all
  select pp, date '1970-01-01', net_cents, commission_cents, customer_id from attributed
)
insert into partner_metrics (partner_program_id, period, sales_cents, customers, commission_cents)
select pp, period, sum(net_cents), count(distinct customer_id), sum(commission_cents)
from periods group by pp, period;
