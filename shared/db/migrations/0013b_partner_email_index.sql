-- A magic link claims every partner record with its email, whatever its case (partner-auth's
-- unclaimedRecordsOf, emailKnown): an index on lower(email) instead of a scan of every partner.
create index partners_email_lower on partners (lower(email));
