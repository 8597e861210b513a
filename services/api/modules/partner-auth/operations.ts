// The partner account's writes of more than one statement, one transaction each (the unit-of-work rule:
// docs/architecture.md "Commission lifecycle"): a sign-in link (its token and its mail in the outbox), and
// a change of the account (a new password ends every other session of the account with it).
import type { Sql } from '../../../../shared/db/sql.ts';
import * as dal from './dal.ts';
import { queueMagicLink } from './invites.ts';

/** Mails a sign-in link to an address that has a partner account or record; nothing for any other. */
export async function mailSignInLink(
  sql: Sql,
  ctx: { kafkaPrefix: string; publicUrl: string },
  email: string,
): Promise<void> {
  if (await dal.emailKnown(sql, email)) await sql.begin((tx) => queueMagicLink(tx, ctx, email));
}

/** The account's new name and/or password (already hashed); a new password revokes the other sessions. */
export async function changeAccount(
  sql: Sql,
  who: { accountId: number; sessionId: number | null },
  change: { name?: string | null; passwordHash?: string },
): Promise<void> {
  await sql.begin(async (tx) => {
    await dal.updateAccount(tx, who.accountId, change);
    if (change.passwordHash !== undefined) await dal.revokeOtherSessions(tx, who.accountId, who.sessionId);
  });
}
