-- Traffic quality and fraud (CONTRACT part three "Traffic quality and fraud", issue 31; docs/pipeline.md
-- "Bots and prefetches", docs/payouts.md "Review holds").

-- What kind of visit each click was (shared/tracking/quality.ts): `human`, `bot` (isbot plus the
-- link-preview fetchers) or `prefetch` (Sec-Purpose / Purpose: prefetch). Only human clicks are counted
-- (referral_links.clicks, partner_programs.clicks, the rollups); the others are kept as data. Every click
-- stored before this migration was counted: it stays `human`.
alter table click_events
  add column quality text not null default 'human' check (quality in ('human', 'bot', 'prefetch'));
-- The filtered clicks of a program by time (the status and performance answers' filteredClicks, the risk
-- answer, the events list): a small part of the table, so a small index.
create index click_events_filtered on click_events (program_id, click_timestamp desc, event_id desc)
  where quality <> 'human' and not is_test;

-- The new review holds (shared/commissions/review-reasons.ts).
alter table commissions drop constraint commissions_review_reason_check;
alter table commissions add constraint commissions_review_reason_check check (review_reason in (
  'self_referral', 'partner_ip', 'bot_traffic', 'disposable_email', 'shared_payout_method', 'paid_search'));

-- Which of the optional holds a program applies (bot_traffic is always on): paid_search is off by default,
-- an advertiser who runs no paid-search rules for partners would hold every such sale otherwise.
alter table programs
  add column risk_rules jsonb not null
    default '{"disposable_email": true, "shared_payout_method": true, "paid_search": false}';

-- shared_payout_method compares payout methods across a workspace's partner accounts by this key (the type,
-- and the email or the bank details, trimmed, in lower case): shared/commissions/review-reasons.ts.
create index partner_accounts_payout_key on partner_accounts
  ((lower(payout_method->>'type') || ':' || lower(btrim(coalesce(payout_method->>'email', payout_method->>'details', '')))))
  where payout_method is not null;
