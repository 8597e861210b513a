-- The mail log (docs/mail.md): one row per mail the mail worker received from the outbox (topic `mail`),
-- keyed by the message's stable id, so a mail the relay published twice is one row and is sent once. The
-- row carries its own retry state: the worker's periodic task claims due rows `for update skip locked` (any
-- number of mail workers share them), marks them `sending` with a lease, sends over SMTP and records the
-- result. After the last attempt of MAIL_RETRY_DELAYS a mail is `failed`: the advertiser of its workspace
-- gets a notification and sees it in GET /api/advertiser/mail.
create table mail_log (
  -- The MailMessage id (`invite:<id>`, `magic:<id>`, `notification:<id>[:<email>]`).
  id               text primary key,
  -- The prefixed mail topic it came from: a deployment's workers take only their own rows (the test files
  -- share one database, each with its own KAFKA_PREFIX).
  topic            text not null,
  -- The workspace whose advertiser sees this mail and its failure; null for none.
  workspace_id     bigint,
  recipient        text not null,
  template         text not null,
  subject          text not null,
  -- The message as received: rendered again at each attempt.
  message          jsonb not null,
  -- queued: waiting for its attempt (next_attempt_at); sending: an attempt under way, leased until
  -- next_attempt_at (a worker that dies mid-send leaves it to be taken again after that); sent; failed (the
  -- dead end); skipped (no SMTP configured).
  status           text not null check (status in ('queued', 'sending', 'sent', 'failed', 'skipped')),
  attempts         integer not null default 0,
  next_attempt_at  timestamptz,
  last_error       text,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  sent_at          timestamptz
);
-- The retry poller's query: a deployment's rows due now.
create index mail_log_due on mail_log (topic, next_attempt_at) where status in ('queued', 'sending');
-- The advertiser's list, newest first, optionally by status.
create index mail_log_workspace on mail_log (workspace_id, created_at desc, id desc);
create index mail_log_workspace_status on mail_log (workspace_id, status, created_at desc, id desc);
