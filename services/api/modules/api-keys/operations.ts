// The key writes that need the workspace's lock, one transaction each (the unit-of-work rule:
// docs/architecture.md): the lock with the creator's role read again under it (auth/access.ts
// `lockForManage`), then the SQL (dal.ts).
import type { Sql } from '../../../../shared/db/sql.ts';
import { lockForManage } from '../auth/access.ts';
import type { Principal } from '../auth/access.ts';
import type { ApiKeyDal, KeyRow, NewKey } from './dal.ts';

/**
 * Inserts a key under the workspace's lock, its creator checked again: a creator demoted meanwhile would
 * otherwise keep a key that the demotion's revocation (members/operations.ts) did not see.
 */
export function createKey(
  sql: Sql,
  dal: ApiKeyDal,
  actor: { principal?: Principal },
  key: NewKey,
): Promise<KeyRow> {
  return sql.begin(async (tx) => {
    await lockForManage(tx, key.workspaceId, actor);
    return dal.insert(key, tx);
  });
}
