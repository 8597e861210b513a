// The SQL of management API keys. Keys are stored only as their SHA-256; revocation is soft (the row
// stays, status `revoked`).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  program_scope: string[] | null;
  status: 'active' | 'revoked';
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  key_masked: string;
  workspace_id: string;
}

export interface NewKey {
  workspaceId: number;
  createdBy: number;
  name: string;
  prefix: string;
  hash: Buffer;
  masked: string;
  scopes: string[];
  programScope: number[] | null;
  expiresAt: Date | null;
}

export type ApiKeyDal = ReturnType<typeof createApiKeyDal>;

export function createApiKeyDal(sql: Sql) {
  // A new fragment for each query that embeds it.
  const columns = (db: Sql | Tx = sql) => db`
    id, name, prefix, scopes, program_scope::text[] as program_scope, status, expires_at, created_at,
    last_used_at, revoked_at, key_masked, workspace_id`;
  const bigints = (ids: number[] | null, db: Sql | Tx = sql) =>
    db`${ids === null ? null : ids.map(String)}::bigint[]`;

  return {
    /** Which of `ids` are live programs of the workspace. */
    async livePrograms(ids: number[], workspaceId: number): Promise<Set<number>> {
      const found = await sql<{ id: string }[]>`
        select id from programs
        where id = any(${ids.map(String)}::bigint[]) and workspace_id = ${workspaceId} and deleted_at is null`;
      return new Set(found.map((r) => Number(r.id)));
    },

    /** Inserts a key; `db` is the transaction holding the workspace's lock (lockForManage). */
    async insert(k: NewKey, db: Sql | Tx = sql): Promise<KeyRow> {
      const [row] = await db<KeyRow[]>`
        insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes, program_scope, expires_at)
        values (${k.workspaceId}, ${k.createdBy}, ${k.name}, ${k.prefix}, ${k.hash}, ${k.masked},
                ${k.scopes}::text[], ${bigints(k.programScope, db)}, ${k.expiresAt})
        returning ${columns(db)}`;
      return row!;
    },

    /** The workspace's keys, newest first, revoked ones included. */
    list(workspaceId: number) {
      return sql<
        KeyRow[]
      >`select ${columns()} from api_keys where workspace_id = ${workspaceId} order by id desc`;
    },

    async byId(id: number): Promise<KeyRow | undefined> {
      const [row] = await sql<KeyRow[]>`select ${columns()} from api_keys where id = ${id}`;
      return row;
    },

    /** Changes the given fields (null/undefined: unchanged) of an active key; undefined when it is revoked. */
    async update(
      id: string,
      c: { name: string | null; scopes: string[] | null; programScope: number[] | null | undefined },
    ): Promise<KeyRow | undefined> {
      const [row] = await sql<KeyRow[]>`
        update api_keys set
          name = coalesce(${c.name}, name),
          scopes = coalesce(${c.scopes}::text[], scopes),
          program_scope = ${c.programScope === undefined ? sql`program_scope` : bigints(c.programScope)}
        where id = ${id} and status = 'active'
        returning ${columns()}`;
      return row;
    },

    /** Revokes an active key; undefined when it was revoked already. */
    async revoke(id: string): Promise<KeyRow | undefined> {
      const [row] = await sql<KeyRow[]>`
        update api_keys set status = 'revoked', revoked_at = now()
        where id = ${id} and status = 'active'
        returning ${columns()}`;
      return row;
    },
  };
}
