-- Lead, sale and refund: events, commissions, the outcome rows that answer the ingress, the balance
-- ledger and notifications.

-- The answer to a command, written in the same transaction as the command's effects (so it is also what
-- makes a redelivered command a no-op), and announced with NOTIFY on commit.
create table command_outcomes (
  request_id    text primary key,
  kind          text not null check (kind in ('lead', 'sale', 'refund')),
  program_id    bigint,
  status_code   integer not null,
  body          jsonb not null,
  -- Messages to publish after commit (ledger entries, notifications); re-published on redelivery.
  effects       jsonb not null default '[]',
  created_at    timestamptz not null default now()
);
create index command_outcomes_created on command_outcomes (created_at);

alter table customers add column first_commission_at timestamptz;
create index customers_program_status on customers (program_id, customer_status);

create table lead_events (
  id              bigserial primary key,
  request_id      text not null unique,
  program_id      bigint not null,
  customer_id     bigint references customers (id),
  click_id        text,
  customer_key    text,
  email           text,
  event_name      text,
  session_id      text,
  page_url        text,
  is_test         boolean not null default false,
  lead_timestamp  timestamptz not null,
  created_at      timestamptz not null default now()
);
create index lead_events_program_time on lead_events (program_id, lead_timestamp desc, id desc);

create table sales (
  id                     bigserial primary key,
  request_id             text not null unique,
  program_id             bigint not null references programs (id),
  customer_id            bigint references customers (id),
  partner_id             bigint,
  partner_program_id     bigint,
  click_id               text,
  customer_key           text,
  -- Unique across all programs (spec): the duplicate check is this constraint.
  transaction_id         text not null unique,
  amount_cents           bigint not null check (amount_cents >= 0),
  currency               char(3) not null,
  sale_type              text not null check (sale_type in ('payment', 'subscription')),
  payment_status         text not null default 'paid',
  is_recurring           boolean not null default false,
  subscription_id        text,
  subscription_interval  text check (subscription_interval in ('monthly', 'quarterly', 'annual')),
  product_id             text,
  line_items             jsonb,
  is_test                boolean not null default false,
  sale_date              timestamptz not null,
  created_at             timestamptz not null default now()
);
create index sales_program_time on sales (program_id, sale_date desc, id desc);
create index sales_customer on sales (customer_id);

create table commissions (
  id                  bigserial primary key,
  sale_id             bigint not null unique references sales (id),
  program_id          bigint not null references programs (id),
  partner_id          bigint not null references partners (id),
  partner_program_id  bigint not null references partner_programs (id),
  customer_id         bigint references customers (id),
  status              text not null default 'pending'
                      check (status in ('pending', 'approved', 'paid', 'reversed', 'refunded')),
  amount_cents        bigint not null check (amount_cents >= 0),
  currency            char(3) not null,
  deducted_cents      bigint not null default 0,
  refund_reason       text,
  paid_at             timestamptz,
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
create index commissions_program_status on commissions (program_id, status, created_at desc);
create index commissions_partner on commissions (partner_id);

-- Append-only balance ledger. Each entry carries what it did to the partner's balance and to the
-- partner-program balance (a refund deduction is clamped at zero unless the commission was paid, so the
-- two may differ); balances are the sums of these columns and are kept in the same transaction.
create table ledger_entries (
  id                    bigserial primary key,
  entry_key             text not null unique,
  kind                  text not null
                        check (kind in ('commission_created', 'commission_reversed', 'commission_refunded', 'commission_paid')),
  partner_id            bigint not null references partners (id),
  partner_program_id    bigint not null references partner_programs (id),
  commission_id         bigint references commissions (id),
  requested_cents       bigint not null,
  partner_cents         bigint not null,
  program_cents         bigint not null,
  created_at            timestamptz not null default now()
);
create index ledger_entries_partner on ledger_entries (partner_id, id);
create index ledger_entries_partner_program on ledger_entries (partner_program_id, id);

create table notifications (
  id                bigserial primary key,
  notification_key  text not null unique,
  recipient_type    text not null check (recipient_type in ('partner', 'advertiser')),
  partner_id        bigint references partners (id),
  workspace_id      bigint references workspaces (id),
  program_id        bigint references programs (id),
  kind              text not null,
  title             text not null,
  body              text not null,
  data              jsonb not null default '{}',
  read_at           timestamptz,
  created_at        timestamptz not null default now()
);
create index notifications_partner on notifications (partner_id, created_at desc);
create index notifications_workspace on notifications (workspace_id, created_at desc);

-- The ingress caches programs by tracking-token hash: a new program is also a change it must see.
create trigger programs_inserted after insert on programs
  for each row execute function log_program_change();
