-- Partner codes (CONTRACT part three "Codes as well as links"; docs/codes.md): a coupon code names its partner,
-- and a sale that carries it (API `coupon_code`, or a processor's discount id in `processor_ids`) is
-- attributed by it under the program's `code_attribution` rule.

-- website_url: where the portal and dashboard build full referral links (else the first allowed_origins entry).
alter table programs
  add column website_url text,
  add column code_attribution text not null default 'fallback' check (code_attribution in ('fallback', 'override'));

-- One row per code. A deactivated code keeps its name taken (a coupon still in circulation never silently
-- starts earning for another partner). processor_ids: `{ stripe?, paddle?, lemonsqueezy?, polar? }` strings.
create table partner_codes (
  id                  bigserial primary key,
  program_id          bigint not null references programs (id),
  partner_id          bigint not null references partners (id),
  partner_program_id  bigint not null references partner_programs (id),
  code                text not null check (code ~ '^[A-Za-z0-9_-]{3,32}$'),
  processor_ids       jsonb not null default '{}',
  status              text not null default 'active' check (status in ('active', 'inactive')),
  created_at          timestamptz not null default now(),
  updated_at          timestamptz not null default now()
);
-- Unique per program regardless of case; also the index of the sale's lookup by code.
create unique index partner_codes_program_code on partner_codes (program_id, lower(code));
create index partner_codes_partner_program on partner_codes (partner_program_id, id);
create index partner_codes_processor_ids on partner_codes using gin (processor_ids) where status = 'active';

-- The code a sale carried (as the matched code spells it, else as sent) and the active code that
-- attributed it (null: none did). Commissions show their sale's coupon_code.
alter table sales
  add column coupon_code text,
  add column partner_code_id bigint references partner_codes (id);
