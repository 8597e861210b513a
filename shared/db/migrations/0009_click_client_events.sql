-- Click event ids minted by the client (the tracker script, or any caller that sends `event_id`): the
-- click worker inserts (program, event id) in the same transaction as the click event, so a retry of a
-- click already accepted (a 503 that was stored anyway, a network error after the 200) is stored and
-- counted once. Pruned after 30 days by the click worker (docs/operations.md "Faults").
create table click_client_events (
  program_id       bigint not null,
  client_event_id  uuid not null,
  event_id         bigint not null,
  created_at       timestamptz not null default now(),
  primary key (program_id, client_event_id)
);
create index click_client_events_created_at on click_client_events (created_at);
