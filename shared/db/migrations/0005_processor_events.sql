-- Payment-processor webhooks (CONTRACT "Payment-processor webhooks").

-- Secret rotation as Stripe does it: after a roll the previous secret keeps verifying for 24 hours.
alter table processor_connections
  add column previous_webhook_secret    text,
  add column previous_secret_expires_at timestamptz;

-- One row per (program, event id): the dedupe key of redeliveries, and what the event did, for the
-- advertiser to read. `waiting_for` names what a waiting event needs ('payment:pi_…', 'invoice:in_…',
-- 'subscription:sub_…'); it is applied when that arrives.
create table processor_events (
  id              bigserial primary key,
  program_id      bigint not null references programs (id),
  event_id        text not null,
  type            text not null,
  livemode        boolean not null,
  received_at     timestamptz not null,
  applied_at      timestamptz not null default now(),
  outcome         text not null check (outcome in ('attributed', 'recorded', 'unattributed', 'refund_applied',
                                                   'linked', 'waiting', 'ignored', 'failed')),
  reason          text,
  transaction_id  text,
  sale_id         bigint,
  commission_id   bigint,
  waiting_for     text,
  payload         jsonb not null,
  unique (program_id, event_id)
);
create index processor_events_list on processor_events (program_id, received_at desc, id desc);
create index processor_events_waiting on processor_events (program_id, waiting_for) where outcome = 'waiting';

-- The customer a processor subscription belongs to, remembered at its checkout, so that renewals whose
-- invoices carry no metadata still attribute.
create table processor_subscriptions (
  program_id             bigint not null references programs (id),
  subscription_id        text not null,
  processor_customer_id  text,
  customer_key           text,
  click_id               text,
  created_at             timestamptz not null default now(),
  primary key (program_id, subscription_id)
);

-- Which invoice a payment intent paid (invoice_payment.paid): 2025+ invoices and charges no longer name
-- each other, so a refunded charge finds its invoice's sale through this.
create table processor_invoice_payments (
  program_id      bigint not null references programs (id),
  payment_intent  text not null,
  invoice_id      text not null,
  primary key (program_id, payment_intent)
);

-- A processor event is a command like a sale: its outcome row is its idempotency key.
alter table command_outcomes drop constraint command_outcomes_kind_check;
alter table command_outcomes add constraint command_outcomes_kind_check
  check (kind in ('lead', 'sale', 'refund', 'processor_event'));
