-- Ledger entries that arrived before an entry they must follow (a commission's refund deduction before its
-- credit, its payment before its credit): held here, under the partner's row lock, and applied by the
-- transaction that applies the last entry they wait for (shared/db/ledger.ts). Never counted in a balance
-- while held.
create table ledger_held (
  entry_key           text primary key,
  commission_id       bigint not null,
  partner_id          bigint not null references partners (id),
  partner_program_id  bigint not null references partner_programs (id),
  waiting_for         text[] not null,
  effect              jsonb not null,
  held_at             timestamptz not null default now()
);
create index ledger_held_commission on ledger_held (commission_id);
