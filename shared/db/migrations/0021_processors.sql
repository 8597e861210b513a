-- Revenue from every processor (CONTRACT part three "Revenue from every processor"): Paddle, Lemon Squeezy
-- and Polar beside Stripe.

-- The signing secret of each non-Stripe processor a workspace connected (Stripe's stays in
-- processor_connections, with its roll). The secret is what the processor's dashboard shows (or, for Lemon
-- Squeezy, what the advertiser typed there); it must be usable to compute HMACs, so it is stored as is.
create table processor_secrets (
  workspace_id    bigint not null references workspaces (id),
  processor       text not null check (processor in ('paddle', 'lemonsqueezy', 'polar')),
  webhook_secret  text not null,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  primary key (workspace_id, processor)
);

-- The ingress caches every processor's secrets per program: a change evicts the workspace's entries, as a
-- change of processor_connections does (0011).
create trigger processor_secrets_changed after insert or update or delete on processor_secrets
  for each row execute function log_processor_connection_change();

-- Each event row names its processor; rows from before are Stripe's. The dedupe key is per processor: two
-- processors may use the same event id.
alter table processor_events add column processor text not null default 'stripe'
  check (processor in ('stripe', 'paddle', 'lemonsqueezy', 'polar'));
alter table processor_events drop constraint processor_events_program_id_event_id_key;
alter table processor_events add constraint processor_events_program_processor_event_key
  unique (program_id, processor, event_id);
