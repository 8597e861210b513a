// The signup write, one transaction (the unit-of-work rule: docs/architecture.md): the user, its workspace
// and the owner membership together or not at all; the SQL is dal.ts's.
import type { Sql } from '../../../../shared/db/sql.ts';
import type { AuthDal } from './dal.ts';

/** A user and the workspace it owns; null when the email is taken. */
export function signup(
  sql: Sql,
  dal: AuthDal,
  u: Parameters<AuthDal['insertSignup']>[1],
): ReturnType<AuthDal['insertSignup']> {
  return sql.begin((tx) => dal.insertSignup(tx, u));
}
