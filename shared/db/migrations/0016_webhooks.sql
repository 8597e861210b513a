-- Outbound webhooks (CONTRACT "Webhooks to integrators", docs/webhooks.md). An event is an outbox row written
-- in the transaction of the change it reports (shared/db/webhook-events.ts); the webhook worker
-- (services/workers/webhooks) stores it here once, fans it out to the endpoints that want it as one delivery
-- row per (event, endpoint), and delivers each with its retries held in these rows, never in memory.

-- An advertiser's receiving URLs. The signing secret must be usable to compute HMACs, so like the processor
-- connection's it is stored as written, never as a hash: it is shown once when created or rotated and never
-- read back by the API (access to this table is access to the secrets: protect the database, its backups
-- and replicas as the credentials they hold).
create table webhook_endpoints (
  id                         bigserial primary key,
  workspace_id               bigint not null references workspaces (id),
  url                        text not null,
  description                text,
  -- Event types this endpoint receives; '*' is every type.
  events                     text[] not null default '{*}',
  -- Programs whose events it receives; null is every program of the workspace.
  program_ids                bigint[],
  status                     text not null default 'enabled' check (status in ('enabled', 'disabled')),
  -- Why it is disabled: 'manual' (the advertiser), 'failing' (every attempt failed for the failure window),
  -- 'gone' (the receiver answered 410).
  disabled_reason            text,
  disabled_at                timestamptz,
  secret                     text not null,
  -- After a rotation the previous secret signs too until it expires (two signatures in the header).
  previous_secret            text,
  previous_secret_expires_at timestamptz,
  -- The first failed attempt since the last successful one; null while the endpoint answers.
  failing_since              timestamptz,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now()
);
create index webhook_endpoints_workspace on webhook_endpoints (workspace_id, id);
-- recordWebhookEvents' one read per call: does any of these workspaces have an enabled endpoint?
create index webhook_endpoints_enabled on webhook_endpoints (workspace_id) where status = 'enabled';

-- Each event once, whatever the outbox relay published twice; `payload` is the exact body sent at every
-- attempt to every endpoint.
create table webhook_events (
  id            text primary key,
  workspace_id  bigint not null,
  program_id    bigint,
  type          text not null,
  payload       text not null,
  created_at    timestamptz not null,
  received_at   timestamptz not null default now()
);
create index webhook_events_received on webhook_events (received_at);

-- One row per (event, endpoint): its webhook-id is the same at every attempt, redelivery and restart.
-- A pending row is due at next_attempt_at; a worker claims it by moving next_attempt_at past the attempt's
-- timeout (the lease) and setting lease_id, so a worker killed mid-attempt leaves it due again once the lease
-- has passed, and only the claim's owner records the attempt's result.
create table webhook_deliveries (
  id                bigserial primary key,
  webhook_id        text not null unique,
  event_id          text not null references webhook_events (id) on delete cascade,
  endpoint_id       bigint not null references webhook_endpoints (id) on delete cascade,
  workspace_id      bigint not null,
  type              text not null,
  status            text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts          integer not null default 0,
  next_attempt_at   timestamptz,
  lease_id          uuid,
  -- A retry the advertiser asked for of a delivery that had ended: one attempt, no schedule after it.
  once              boolean not null default false,
  last_status_code  integer,
  last_error        text,
  last_response     text,
  last_attempt_at   timestamptz,
  created_at        timestamptz not null default now(),
  delivered_at      timestamptz,
  unique (event_id, endpoint_id)
);
create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';
create index webhook_deliveries_log on webhook_deliveries (endpoint_id, id desc);
create index webhook_deliveries_ended on webhook_deliveries (created_at) where status <> 'pending';

-- Every attempt, for the delivery log: when, how long, what the receiver answered (its first 4 KB).
create table webhook_attempts (
  id            bigserial primary key,
  delivery_id   bigint not null references webhook_deliveries (id) on delete cascade,
  attempted_at  timestamptz not null,
  duration_ms   integer not null,
  status_code   integer,
  error         text,
  response      text
);
create index webhook_attempts_delivery on webhook_attempts (delivery_id, id);
