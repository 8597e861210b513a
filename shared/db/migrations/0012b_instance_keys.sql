-- Keys of this installation, made once by the migration and read by every process at boot. `ip_hash` keys
-- the HMAC that stands for an IP address where one must be compared later without being kept (a partner's
-- sign-ins against the clicks that earn them commissions: review holds). A keyed hash, because a plain hash
-- of an IPv4 address is reversed by trying all 2^32. gen_random_uuid() draws from a strong random source.
create table instance_keys (
  name   text primary key,
  value  bytea not null
);
insert into instance_keys (name, value)
values ('ip_hash', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
