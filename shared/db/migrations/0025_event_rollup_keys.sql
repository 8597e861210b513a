-- The partner and link keys each lead and sale was counted under in the rollups, recorded with it
-- (shared/pipeline/breakdown.ts keys: an id, or 'unknown'). A partner code may move a customer to the code's
-- partner after its lead or earlier sales (docs/codes.md): the live rollups counted those under the partner
-- the customer had then, and the rebuild and the check (shared/db/rollups-raw.ts) must count them there too,
-- not under its partner of today. Null (rows from before, seeded rows): the customer's keys, as before.
-- The visit keys (country, device, …) are the customer's attributing click's, which no code changes.
alter table lead_events add column partner_key text, add column link_key text;
alter table sales add column partner_key text, add column link_key text;
