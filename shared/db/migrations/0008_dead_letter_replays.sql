-- Dead letters an operator can act on (npm run dlq): the original headers and timestamp beside the
-- original key and bytes already kept, so a replay re-produces the message as it was; and the history of
-- replays (who replayed what, when, to which topic), kept rather than overwritten. Headers are a JSON
-- array of [name, base64 value] pairs (a header may repeat); null for rows written before this migration.
alter table dead_letters
  add column message_headers   jsonb,
  add column message_timestamp timestamptz;

create table dead_letter_replays (
  id              bigserial primary key,
  dead_letter_id  bigint not null references dead_letters (id),
  topic           text not null,
  replayed_at     timestamptz not null default now(),
  replayed_by     text not null
);
create index dead_letter_replays_letter on dead_letter_replays (dead_letter_id);
create index dead_letters_created on dead_letters (created_at);
