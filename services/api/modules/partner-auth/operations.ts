// The partner account's writes, one transaction each (the unit-of-work rule: docs/architecture.md "One unit
// of work per write"); routes.ts calls these and writes nothing itself: a password sign-in (an older kind of
// hash replaced, the session and its sign-in record), a session in the transaction of an invite or a sign-in
// link (partner-claims/operations.ts), a sign-out, a sign-in link (its token and its mail in the outbox), and
// a change of the account (a new password ends every other session of the account with it).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import { generateSecret, hashSecret } from '../../../../shared/domain/secrets.ts';
import * as dal from './dal.ts';
import { queueMagicLink } from './invites.ts';

/** A new session: its token, shown once (only its hash is stored), and when it ends. */
export interface NewSession {
  token: string;
  expiresAt: Date;
}

/** How long a session lasts and the hash of the address it is opened from (null without one). */
export interface SessionOrigin {
  ttlHours: number;
  ipHash: string | null;
}

/**
 * A session of the account with the record of the sign-in that opened it, in the caller's transaction: no
 * session without its sign-in record, nor a record of a session that failed.
 */
export async function openSession(tx: Tx, accountId: number, origin: SessionOrigin): Promise<NewSession> {
  const token = generateSecret('psess_');
  const expiresAt = new Date(Date.now() + origin.ttlHours * 3600_000);
  await dal.createSession(tx, accountId, hashSecret(token), expiresAt);
  await dal.recordSignIn(tx, accountId, origin.ipHash);
  return { token, expiresAt };
}

/**
 * A password sign-in (the password already checked), one transaction: `rehash` replaces an older kind of
 * hash with the new one (hashed before, so no connection waits on it; compare-and-set, so a password changed
 * meanwhile is never overwritten), then the session and its sign-in record.
 */
export function signIn(
  sql: Sql,
  accountId: number,
  origin: SessionOrigin,
  rehash: { previous: string; next: string } | null,
): Promise<NewSession> {
  return sql.begin(async (tx) => {
    if (rehash !== null) await dal.replacePasswordHash(tx, accountId, rehash.previous, rehash.next);
    return openSession(tx, accountId, origin);
  });
}

/** Ends the session at once (sign-out): one statement, so no transaction. */
export async function signOut(sql: Sql, sessionId: number): Promise<void> {
  await dal.revokeSession(sql, sessionId);
}

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
