-- Who may claim a partner record (CONTRACT part three "Who may see and change what"; docs/security.md
-- "Partner accounts and claims").
--
-- email_verified_at: the account's email is verified, by a sign-in link followed or an invite accepted. An
-- unverified account (made by a password typed into a public application form) sees nothing but a banner.
-- mailbox_verified_at: a sign-in link mailed to the address was followed. An invite's URL is shown to the
-- advertiser who made it as well as mailed, so accepting one proves nothing to other workspaces: the
-- invitations of other workspaces' records and claims by application wait for this one.
alter table partner_accounts add column mailbox_verified_at timestamptz;
-- Until now email_verified_at was set only by a followed sign-in link: the mailbox was proven.
update partner_accounts set mailbox_verified_at = email_verified_at where email_verified_at is not null;
-- An accepted invite verifies the account now.
update partner_accounts a set email_verified_at = c.first_invite
from (select account_id, min(created_at) as first_invite from partner_claims where via = 'invite'
      group by account_id) c
where c.account_id = a.id and a.email_verified_at is null;

-- A sign-in link mailed after an application that created a new partner record names that record: following
-- it claims it (the application's own record, with proof of the mailbox). Other sign-in links claim nothing.
alter table partner_magic_links add column claim_partner_id bigint references partners (id);

-- Records accepted from the portal's invitations list are claimed `via 'invitation'`.
alter table partner_claims drop constraint partner_claims_via_check;
alter table partner_claims add constraint partner_claims_via_check
  check (via in ('invite', 'application', 'magic_link', 'seed', 'invitation'));

-- Invitations (records of the account's email it has not claimed) the partner declined: not shown again.
create table partner_invitation_declines (
  account_id  bigint not null references partner_accounts (id),
  partner_id  bigint not null references partners (id),
  created_at  timestamptz not null default now(),
  primary key (account_id, partner_id)
);
