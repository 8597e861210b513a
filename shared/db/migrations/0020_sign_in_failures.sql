-- Failed password checks, for the sign-in limits (docs/security.md "Sign-in limits and password hashing";
-- shared/db/rate-limits.ts `takeFailure`): per key (an HMAC of the email and the realm, never the email), the
-- times of its failures still inside the window, oldest first, at most the limit of them. A check counts as a
-- failure from the moment it starts (so concurrent guesses cannot overrun the limit) and a success deletes
-- the row. `at`: the last change; rows idle longer than the window are pruned.
create table sign_in_failures (
  key       text primary key,
  failures  timestamptz[] not null,
  -- Whether the last check was allowed (what the upsert answers).
  allowed   boolean not null default true,
  at        timestamptz not null default now()
);
create index sign_in_failures_at on sign_in_failures (at);
