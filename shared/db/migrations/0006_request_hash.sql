-- The hash of an Idempotency-Key request's parameters, recorded with its outcome: a retry with the same
-- parameters replays the outcome, the same key with other parameters is refused (409). Null for commands
-- sent without an Idempotency-Key (their request_id is minted per request) and for older rows.
alter table command_outcomes add column request_hash text;
