-- Each worker's group assignment, rewritten every 500 ms (shared/pipeline/liveness.ts): the ingress answers
-- a command 503 at once when no live worker owns its partition, instead of at the command deadline.
-- Unlogged: it is rebuilt within a second of any restart, so it needs no WAL.
create unlogged table consumer_heartbeats (
  member      text primary key,
  group_id    text not null,
  topic       text not null,
  partitions  int[] not null,
  beat_at     timestamptz not null default now()
);
