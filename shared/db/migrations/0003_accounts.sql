-- Dashboard users, workspace membership and roles, sessions, management API keys, and the payment
-- processor connection. Secrets are stored as SHA-256 hashes; passwords with scrypt.

create table users (
  id             bigserial primary key,
  email          text not null,
  name           text,
  password_hash  text not null,
  created_at     timestamptz not null default now()
);
create unique index users_email on users (lower(email));

create table memberships (
  user_id       bigint not null references users (id),
  workspace_id  bigint not null references workspaces (id),
  role          text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  status        text not null default 'active' check (status in ('active', 'inactive')),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  primary key (user_id, workspace_id)
);
create index memberships_workspace on memberships (workspace_id);

create table sessions (
  id          bigserial primary key,
  user_id     bigint not null references users (id),
  token_hash  bytea not null unique,
  expires_at  timestamptz not null,
  revoked_at  timestamptz,
  created_at  timestamptz not null default now()
);

create table api_keys (
  id             bigserial primary key,
  workspace_id   bigint not null references workspaces (id),
  created_by     bigint not null references users (id),
  name           text not null,
  prefix         text not null,
  key_hash       bytea not null unique,
  key_masked     text not null,
  scopes         text[] not null default '{*}',
  program_scope  bigint[],
  expires_at     timestamptz,
  status         text not null default 'active' check (status in ('active', 'revoked')),
  last_used_at   timestamptz,
  created_at     timestamptz not null default now(),
  revoked_at     timestamptz
);
create index api_keys_workspace on api_keys (workspace_id);

-- What GET /api/tracking/status reads as its payments block. The webhook signing secret must be usable
-- to compute HMACs, so unlike tokens it cannot be stored as a hash.
create table processor_connections (
  workspace_id       bigint primary key references workspaces (id),
  status             text not null default 'pending',
  account_id         text,
  charges_enabled    boolean not null default false,
  payouts_enabled    boolean not null default false,
  details_submitted  boolean not null default false,
  webhook_secret     text not null,
  connected_at       timestamptz,
  updated_at         timestamptz not null default now()
);

-- Programs are created in a workspace from now on (the seed and tests already set it).
create index programs_workspace on programs (workspace_id);
