// The SQL of authentication and access: credentials by hash, memberships, sessions, signup.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { Role } from './service.ts';

export interface KeyRow {
  id: string;
  workspace_id: string;
  created_by: string;
  scopes: string[];
  program_scope: string[] | null;
}

export type AuthDal = ReturnType<typeof createAuthDal>;

export function createAuthDal(sql: Sql) {
  return {
    async sessionByHash(hash: Buffer) {
      const [row] = await sql<{ id: string; user_id: string; expires_at: Date }[]>`
        select id, user_id, expires_at from sessions
        where token_hash = ${hash} and revoked_at is null and expires_at > now()`;
      return row;
    },

    /**
     * The active, unexpired key with this hash. Its last_used_at is written at most once a minute: a
     * management client calling in a loop would otherwise update the key's row on every request.
     */
    async useKeyByHash(hash: Buffer) {
      const [row] = await sql<(KeyRow & { stale: boolean })[]>`
        select id, workspace_id, created_by, scopes, program_scope::text[],
          (last_used_at is null or last_used_at < now() - interval '1 minute') as stale
        from api_keys
        where key_hash = ${hash} and status = 'active' and (expires_at is null or expires_at > now())`;
      if (!row) return undefined;
      if (row.stale) {
        await sql`
          update api_keys set last_used_at = now()
          where id = ${row.id} and (last_used_at is null or last_used_at < now() - interval '1 minute')`;
      }
      return row;
    },

    /** The user's membership of `workspaceId`, or by default the active owner, then admin, membership. */
    async membership(userId: number, workspaceId: number | null) {
      const [row] = await sql<{ workspace_id: string; role: Role; status: string }[]>`
        select workspace_id, role, status from memberships
        where user_id = ${userId} ${workspaceId === null ? sql`` : sql`and workspace_id = ${workspaceId}`}
        order by (status = 'active') desc, (role = 'owner') desc, (role = 'admin') desc, created_at
        limit 1`;
      return row;
    },

    async liveProgramWorkspace(programId: number) {
      const [row] = await sql<{ workspace_id: string }[]>`
        select workspace_id from programs where id = ${programId} and deleted_at is null`;
      return row;
    },

    /** A live program's workspace and the user's membership of it (role null: not a member). */
    async programMembership(programId: number, userId: number) {
      const [row] = await sql<{ workspace_id: string; role: Role | null; status: string | null }[]>`
        select pr.workspace_id, m.role, m.status
        from programs pr left join memberships m on m.workspace_id = pr.workspace_id and m.user_id = ${userId}
        where pr.id = ${programId} and pr.deleted_at is null`;
      return row;
    },

    async createSession(userId: number, tokenHash: Buffer, expiresAt: Date): Promise<void> {
      await sql`insert into sessions (user_id, token_hash, expires_at) values (${userId}, ${tokenHash}, ${expiresAt})`;
    },

    async revokeSession(sessionId: number): Promise<void> {
      await sql`update sessions set revoked_at = now() where id = ${sessionId}`;
    },

    /** What the dashboard shows about its session: the user and its active memberships. */
    async sessionUser(userId: number) {
      const [user] = await sql<{ id: string; email: string; name: string | null }[]>`
        select id, email, name from users where id = ${userId}`;
      const workspaces = await sql<{ id: string; name: string; role: Role }[]>`
        select w.id, w.name, m.role from memberships m join workspaces w on w.id = m.workspace_id
        where m.user_id = ${userId} and m.status = 'active'
        order by (m.role = 'owner') desc, (m.role = 'admin') desc, m.created_at, w.id`;
      return user ? { user, workspaces } : undefined;
    },

    async userByEmail(email: string) {
      const [user] = await sql<{ id: string; password_hash: string }[]>`
        select id, password_hash from users where lower(email) = lower(${email})`;
      return user;
    },

    /**
     * Replaces the user's password hash with `next` only if it is still `previous` (a hash of an older
     * kind, upgraded at sign-in): a password changed meanwhile stays as it is. True when replaced.
     */
    async replacePasswordHash(userId: number, previous: string, next: string): Promise<boolean> {
      const rows = await sql`
        update users set password_hash = ${next} where id = ${userId} and password_hash = ${previous}`;
      return rows.count === 1;
    },

    /**
     * A user and the workspace it owns, in the caller's transaction (operations.ts); null when the email
     * is taken.
     */
    async insertSignup(
      tx: Tx,
      u: { email: string; name: string | null; passwordHash: string; workspaceName: string },
    ) {
      const [user] = await tx<{ id: string }[]>`
        insert into users (email, name, password_hash) values (${u.email}, ${u.name}, ${u.passwordHash})
        on conflict ((lower(email))) do nothing returning id`;
      if (!user) return null;
      const [ws] = await tx<
        { id: string }[]
      >`insert into workspaces (name) values (${u.workspaceName}) returning id`;
      await tx`insert into memberships (user_id, workspace_id, role) values (${user.id}, ${ws!.id}, 'owner')`;
      return { userId: Number(user.id), workspace: { id: Number(ws!.id), name: u.workspaceName } };
    },
  };
}
