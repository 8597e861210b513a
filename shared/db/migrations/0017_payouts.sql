-- Holding, reviewing and paying out (CONTRACT part two, issue 18; docs/payouts.md says why it is shaped so).

-- A program's hold (days from a sale until its commission is payable) and its smallest payout. Both apply to
-- commissions created after a change: payable_at is written when a commission is created.
alter table programs
  add column hold_days        integer not null default 30 check (hold_days between 0 and 365),
  add column min_payout_cents bigint  not null default 0 check (min_payout_cents >= 0);

-- Payouts: one per partner of a program and run of "create payouts", holding commissions.
create table payouts (
  id                  bigserial primary key,
  program_id          bigint not null references programs (id),
  partner_id          bigint not null references partners (id),
  partner_program_id  bigint not null references partner_programs (id),
  currency            char(3) not null,
  -- What is sent: the commissions' amounts less their deductions at creation (commissions_cents), less the
  -- clawbacks of earlier payments that this payout recovers (recovered_cents).
  amount_cents        bigint not null check (amount_cents >= 0),
  commissions_cents   bigint not null check (commissions_cents >= 0),
  recovered_cents     bigint not null default 0 check (recovered_cents >= 0),
  status              text not null default 'pending' check (status in ('pending', 'paid', 'canceled')),
  reference           text,
  -- The partner's payout method when it was paid (a pending payout shows the current one).
  payout_method       jsonb,
  created_at          timestamptz not null default now(),
  paid_at             timestamptz,
  canceled_at         timestamptz,
  updated_at          timestamptz not null default now(),
  check (amount_cents = commissions_cents - recovered_cents)
);
create index payouts_program on payouts (program_id, status, id desc);
create index payouts_partner_program on payouts (partner_program_id, status);

-- The commissions of each payout, canceled ones included, with what the payout counted for each (its
-- amount less its deductions at creation: what was sent for it when the payout is paid). `live` is false
-- once the payout is canceled; a commission is in at most one live payout, whatever runs concurrently.
create table payout_commissions (
  payout_id      bigint not null references payouts (id),
  commission_id  bigint not null,
  amount_cents   bigint not null check (amount_cents >= 0),
  live           boolean not null default true,
  primary key (payout_id, commission_id)
);
create unique index payout_commissions_live on payout_commissions (commission_id) where live;

-- payable_at: the sale's time + the program's hold_days (null only for rows written outside the pipeline,
-- which the sweep leaves alone). review_reason: why the commission is held for review (it stays pending past
-- payable_at until approved or rejected); approving clears it. payout_id: the pending or paid payout
-- holding it (null again when that payout is canceled).
alter table commissions
  add column payable_at     timestamptz,
  add column review_reason  text check (review_reason in ('self_referral', 'partner_ip')),
  add column payout_id      bigint references payouts (id);
-- Commissions created before holds existed were payable at once: they stay so.
update commissions set payable_at = created_at where payable_at is null;
-- The approval sweep's read: pending, not held, oldest payable_at first.
create index commissions_due on commissions (payable_at) where status = 'pending' and review_reason is null;
-- The review queue.
create index commissions_review on commissions (program_id, created_at desc)
  where review_reason is not null and status in ('pending', 'refunded');
-- What a new payout takes: unpaid, in no payout, approved (or partly refunded with something left).
create index commissions_payable on commissions (program_id, partner_program_id)
  where payout_id is null and paid_at is null and status in ('approved', 'refunded');
create index commissions_payout on commissions (payout_id) where payout_id is not null;
-- Payments of each partner-program, for the clawback sum.
create index commissions_paid on commissions (partner_program_id) where paid_at is not null;

-- The ledger's payout entries: each commission's payment names its payout, and a payout that recovered a
-- clawback has one `clawback_recovered` entry (+recovered_cents, no commission), so that a payout's entries
-- add up to exactly what it sent.
alter table ledger_entries drop constraint ledger_entries_kind_check;
alter table ledger_entries add constraint ledger_entries_kind_check
  check (kind in ('commission_created', 'commission_reversed', 'commission_refunded', 'commission_paid',
                  'clawback_recovered'));
alter table ledger_entries add column payout_id bigint references payouts (id);
create index ledger_entries_commission on ledger_entries (commission_id) where commission_id is not null;

-- The keyed hash of the click's IP address (shared/domain/ip-hash.ts), kept as long as the click itself: the
-- `partner_ip` review hold compares it with the partner's sign-ins. The address itself is never stored.
alter table click_events add column ip_hash text;
