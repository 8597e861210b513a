-- Partners who sign in (CONTRACT part two "Partners who sign in", docs/partners.md): partner accounts and
-- their sessions, invites, magic links, the records each account has claimed, sign-in IP hashes, program
-- settings for applications, the `rejected` partner-program status, and a rate-limit table shared by the
-- web processes. Secrets (session, invite and magic-link tokens) are stored only as SHA-256 hashes.

-- A person: one account per email (case-insensitive). password_hash null: magic links only.
-- email_verified_at: when a magic link (mailed to the address) was first followed. An account made by
-- accepting an invite or by applying with a password is not verified (the advertiser sees the invite_url;
-- anyone may apply with any address); see docs/partners.md "Claiming".
create table partner_accounts (
  id                 bigserial primary key,
  email              text not null,
  name               text,
  password_hash      text,
  email_verified_at  timestamptz,
  -- { type: paypal|wise|bank_transfer, email?, details? }, set from the portal; the payout exports read it
  -- through the account that claimed the partner record.
  payout_method      jsonb,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);
create unique index partner_accounts_email on partner_accounts (lower(email));

create table partner_sessions (
  id          bigserial primary key,
  account_id  bigint not null references partner_accounts (id),
  token_hash  bytea not null unique,
  expires_at  timestamptz not null,
  revoked_at  timestamptz,
  created_at  timestamptz not null default now()
);
create index partner_sessions_account on partner_sessions (account_id);

-- The partner records (partners rows) an account sees: claimed by accepting an invite, by applying, or by a
-- magic link mailed to the record's email. Never by the email string alone.
create table partner_claims (
  account_id  bigint not null references partner_accounts (id),
  partner_id  bigint not null references partners (id),
  via         text not null check (via in ('invite', 'application', 'magic_link', 'seed')),
  created_at  timestamptz not null default now(),
  primary key (account_id, partner_id)
);
create index partner_claims_partner on partner_claims (partner_id);

-- An invite to claim one partner record (mailed to its email; invite_url shown once to the advertiser).
-- A new invite of the same partner revokes the older ones.
create table partner_invites (
  id          bigserial primary key,
  partner_id  bigint not null references partners (id),
  program_id  bigint not null references programs (id),
  token_hash  bytea not null unique,
  expires_at  timestamptz not null,
  used_at     timestamptz,
  revoked_at  timestamptz,
  created_at  timestamptz not null default now()
);
create index partner_invites_partner on partner_invites (partner_id);

-- Sign-in links: 15 minutes, one use.
create table partner_magic_links (
  id          bigserial primary key,
  email       text not null,
  token_hash  bytea not null unique,
  expires_at  timestamptz not null,
  used_at     timestamptz,
  created_at  timestamptz not null default now()
);
create index partner_magic_links_email on partner_magic_links (lower(email), created_at);

-- Each sign-in's IP address as a keyed hash (shared/domain/ip-hash.ts), never the address: review holds
-- compare them with the hashes of the clicks that earn the account's partners commissions.
create table partner_sign_ins (
  id          bigserial primary key,
  account_id  bigint not null references partner_accounts (id),
  ip_hash     text,
  created_at  timestamptz not null default now()
);
create index partner_sign_ins_account on partner_sign_ins (account_id, ip_hash);

-- Applications (public program page) and the advertiser's review.
alter table programs
  add column public_page    boolean not null default false,
  add column auto_approve   boolean not null default false,
  add column description    text check (char_length(description) <= 2000),
  add column partner_links  boolean not null default true;

alter table partner_programs drop constraint partner_programs_status_check;
alter table partner_programs
  add constraint partner_programs_status_check check (status in ('approved', 'pending', 'rejected')),
  add column rejection_reason  text,
  -- 'advertiser' (added by the advertiser) or 'application' (applied from the public page).
  add column source            text not null default 'advertiser' check (source in ('advertiser', 'application')),
  -- What the applicant wrote: { website, message }; null for partners the advertiser added.
  add column application       jsonb,
  add column updated_at        timestamptz not null default now();

-- Unread counts of the partner portal and of the dashboard's bell.
create index notifications_partner_unread on notifications (partner_id) where read_at is null;
create index notifications_workspace_unread on notifications (workspace_id) where read_at is null;

-- Token buckets shared by every web process (shared/db/rate-limits.ts): partner sign-in and magic-link
-- requests per IP and per email, applications per IP. Keys hold hashes, never an IP or an email.
create table rate_limits (
  key      text primary key,
  tokens   double precision not null,
  at       timestamptz not null default now(),
  -- Whether the last request took a token (what the upsert answers).
  allowed  boolean not null default true
);
create index rate_limits_at on rate_limits (at);
