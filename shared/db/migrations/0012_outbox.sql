-- The outbox (ARCHITECTURE "outbox and its workers"): every effect that leaves a committed transaction and
-- is not a command's own Kafka effect (outbound webhook events, mail) is a row written in the transaction
-- that causes it. The relay (services/workers/relay) publishes each row to its Kafka topic and deletes it,
-- so a committed change always sends its effect and a rolled-back one never does. A relay that dies between
-- the broker's acknowledgement and its delete publishes the row again: the payload carries a stable id that
-- its consumer dedupes on.
create table outbox (
  id           bigserial primary key,
  -- The Kafka topic, with the deployment's prefix (KAFKA_PREFIX): a relay takes only its own deployment's
  -- rows, so stacks that share a database (the test suite's files do) never take each other's.
  topic        text not null,
  -- The Kafka message key (locality only: no consumer depends on the order of outbox rows).
  message_key  text not null,
  payload      jsonb not null,
  created_at   timestamptz not null default now()
);
create index outbox_topic on outbox (topic, id);

-- One notification per statement that wrote rows, delivered on commit: the relay wakes at once instead of
-- at its next poll (the poll stays, for a notification lost to a reconnect).
create function notify_outbox() returns trigger language plpgsql as $$
begin
  perform pg_notify('svc_outbox', '');
  return null;
end $$;
create trigger outbox_written after insert on outbox
  for each statement execute function notify_outbox();
