// The partner side of the demo data: a demo partner account that signs in to the portal at /partner/ with a
// generated password (printed at start, like the demo owner's), claiming the demo program's "Demo Partner"
// record, and the demo program's public page at /p/demo with a description. Idempotent; the password is
// stored hashed (scrypt, as every partner password) and its clear value kept only in the git-ignored stack
// folder; a lost or changed file means a new password.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Sql } from '../../../shared/db/sql.ts';
import { hashPassword, verifyPassword } from '../../../shared/domain/passwords.ts';
import { DEV_STACK, STACK_DIR } from '../stack/stack.ts';

/** Where the demo partner's clear password is kept between runs (git-ignored). */
export const DEMO_PARTNER_PASSWORD_FILE = join(STACK_DIR, DEV_STACK.name, 'demo-partner-password.txt');
/** The email of the demo program's first partner record, which the demo account claims. */
export const DEMO_PARTNER_EMAIL = 'partner@demo.example';

export const DEMO_DESCRIPTION =
  'Demo program of svc: recommend our shop to your readers and earn 30% of every payment your referrals ' +
  'make, for as long as they stay customers.\n\nApply below; we review applications within a day.';

async function readSecret(file: string): Promise<string | null> {
  return readFile(file, 'utf8').then(
    (t) => t.trim() || null,
    () => null,
  );
}

/**
 * The demo partner account (claiming partner record `partnerId`) and the demo program's public page.
 * Returns the account's email and clear password.
 */
export async function seedDemoPartner(
  sql: Sql,
  demo: { programId: number; partnerId: number },
  passwordFile = DEMO_PARTNER_PASSWORD_FILE,
): Promise<{ email: string; password: string }> {
  // The public page, once: a description the owner has since changed or removed is left alone.
  await sql`
    update programs set public_page = true, description = ${DEMO_DESCRIPTION}
    where id = ${demo.programId} and description is null and not public_page`;

  let password = await readSecret(passwordFile);
  const [account] = await sql<{ id: string; password_hash: string | null }[]>`
    select id, password_hash from partner_accounts where lower(email) = ${DEMO_PARTNER_EMAIL}`;
  const valid =
    account?.password_hash != null &&
    password !== null &&
    (await verifyPassword(password, account.password_hash));
  if (!valid || password === null) {
    password = randomBytes(12).toString('base64url');
    const hash = await hashPassword(password);
    await sql`
      insert into partner_accounts (email, name, password_hash)
      values (${DEMO_PARTNER_EMAIL}, 'Demo Partner', ${hash})
      on conflict ((lower(email))) do update set password_hash = excluded.password_hash, updated_at = now()`;
    await mkdir(dirname(passwordFile), { recursive: true });
    await writeFile(passwordFile, password + '\n', { mode: 0o600 });
  }
  // The demo's address is made up, so nothing could prove it: the seed counts it verified, as if its owner
  // had followed a sign-in link (docs/security.md "Partner accounts and claims").
  await sql`
    update partner_accounts set email_verified_at = coalesce(email_verified_at, now()),
                                mailbox_verified_at = coalesce(mailbox_verified_at, now())
    where lower(email) = ${DEMO_PARTNER_EMAIL}`;
  await sql`
    insert into partner_claims (account_id, partner_id, via)
    select id, ${demo.partnerId}, 'seed' from partner_accounts where lower(email) = ${DEMO_PARTNER_EMAIL}
    on conflict do nothing`;
  return { email: DEMO_PARTNER_EMAIL, password };
}
