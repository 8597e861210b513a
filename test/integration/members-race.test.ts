// Issue 10 items 8 and 9. A membership change decides with the actor's role as it is under the workspace
// lock, not as it was read before (a demotion racing a grant must not let the demoted admin's grant land);
// an API key's last_used_at is written at most once a minute.
// The race is made deterministic: the test holds the workspace's row lock in its own transaction, sends
// the admin's request, waits until Postgres shows that request waiting for the lock, demotes the admin in
// the same transaction, then commits.
import t from 'tap';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { blockedBy } from '../helpers/locks.ts';
import { bearer, memberOf, send, signup } from '../helpers/accounts.ts';
import type { Sql, Tx } from '../../shared/db/sql.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

/**
 * Resolves once a backend of the web service waits for a lock the test's transaction `tx` holds (the
 * request reached the workspace lock). Only waiters blocked by that transaction's backend count: other test
 * files' web processes share the database and may wait for locks of their own meanwhile.
 */
async function lockWaiterAppears(db: Sql, tx: Tx): Promise<void> {
  const [holder] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
  await waitFor(
    'the request waiting for the workspace lock the test holds',
    () => blockedBy(db, 'svc-web%', holder!.pid),
    30_000,
    50,
  );
}

type Change = (
  admin: { session: string },
  ws: number,
  target: number,
) => Promise<{ status: number; body: Record<string, unknown> }>;

const changes: Record<string, { run: Change; unchanged: string }> = {
  'a grant of admin': {
    run: (admin, ws, target) =>
      send(
        'PUT',
        url(`/api/advertiser/members/${target}?workspace_id=${ws}`),
        { role: 'admin' },
        bearer(admin.session),
      ),
    unchanged: 'member/active',
  },
  'a removal': {
    run: (admin, ws, target) =>
      send(
        'DELETE',
        url(`/api/advertiser/members/${target}?workspace_id=${ws}`),
        undefined,
        bearer(admin.session),
      ),
    unchanged: 'member/active',
  },
};

for (const [name, change] of Object.entries(changes)) {
  t.test(`${name} by an admin demoted while the request waits for the lock is refused`, async (t) => {
    const owner = await signup(svc);
    const ws = owner.workspaceId;
    const admin = await memberOf(svc, sql, ws, 'admin');
    const target = await memberOf(svc, sql, ws, 'member');
    let answer: Promise<{ status: number; body: Record<string, unknown> }> | undefined;
    await sql.begin(async (tx) => {
      await tx`select id from workspaces where id = ${ws} for no key update`;
      answer = change.run(admin, ws, target.userId);
      await lockWaiterAppears(sql, tx);
      await tx`update memberships set role = 'viewer' where workspace_id = ${ws} and user_id = ${admin.userId}`;
    });
    const r = await answer!;
    t.equal(r.status, 403, JSON.stringify(r.body));
    t.equal(r.body.error, 'Only owners and admins manage members and API keys');
    const [m] = await sql<{ role: string; status: string }[]>`
      select role, status from memberships where workspace_id = ${ws} and user_id = ${target.userId}`;
    t.equal(`${m!.role}/${m!.status}`, change.unchanged, 'the demoted admin changed nothing');
  });
}

t.test('an addition by an admin demoted while the request waits for the lock is refused', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const admin = await memberOf(svc, sql, ws, 'admin');
  const newcomer = await signup(svc);
  let answer: Promise<{ status: number; body: Record<string, unknown> }> | undefined;
  await sql.begin(async (tx) => {
    await tx`select id from workspaces where id = ${ws} for no key update`;
    answer = send(
      'POST',
      url(`/api/advertiser/members?workspace_id=${ws}`),
      { email: newcomer.email, role: 'admin' },
      bearer(admin.session),
    );
    await lockWaiterAppears(sql, tx);
    await tx`update memberships set status = 'inactive' where workspace_id = ${ws} and user_id = ${admin.userId}`;
  });
  const r = await answer!;
  t.equal(r.status, 403, JSON.stringify(r.body));
  const rows =
    await sql`select 1 from memberships where workspace_id = ${ws} and user_id = ${newcomer.userId}`;
  t.equal(rows.length, 0, 'nobody was added');
});

t.test('an API key writes last_used_at at most once a minute', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const created = await send(
    'POST',
    url(`/api/advertiser/api-keys?workspace_id=${ws}`),
    { name: 'k' },
    bearer(owner.session),
  );
  t.equal(created.status, 201);
  const key = created.body.data as { id: number; key: string };
  const lastUsed = async () => {
    const [row] = await sql<
      { last_used_at: Date | null }[]
    >`select last_used_at from api_keys where id = ${key.id}`;
    return row!.last_used_at?.toISOString() ?? null;
  };
  const list = () => fetch(url('/api/advertiser/affiliate-programs'), { headers: bearer(key.key) });
  t.equal((await list()).status, 200);
  const first = await lastUsed();
  t.not(first, null, 'the first use is recorded');
  for (let i = 0; i < 5; i++) t.equal((await list()).status, 200);
  t.equal(await lastUsed(), first, 'uses within the minute write nothing');
  await sql`update api_keys set last_used_at = last_used_at - interval '61 seconds' where id = ${key.id}`;
  const aged = await lastUsed();
  t.equal((await list()).status, 200);
  const after = await lastUsed();
  t.ok(after !== null && after > aged!, 'a use more than a minute later is recorded');
});

t.test('a key created by an admin demoted while the request waits for the lock is refused', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const admin = await memberOf(svc, sql, ws, 'admin');
  let answer: Promise<{ status: number; body: Record<string, unknown> }> | undefined;
  await sql.begin(async (tx) => {
    await tx`select id from workspaces where id = ${ws} for no key update`;
    answer = send(
      'POST',
      url(`/api/advertiser/api-keys?workspace_id=${ws}`),
      { name: 'late' },
      bearer(admin.session),
    );
    await lockWaiterAppears(sql, tx);
    // What PUT /members/:id with role member does: the role, and the revocation of the member's keys.
    await tx`update memberships set role = 'member' where workspace_id = ${ws} and user_id = ${admin.userId}`;
    await tx`update api_keys set status = 'revoked', revoked_at = now()
             where workspace_id = ${ws} and created_by = ${admin.userId} and status = 'active'`;
  });
  const r = await answer!;
  t.equal(r.status, 403, JSON.stringify(r.body));
  const keys = await sql`select 1 from api_keys where created_by = ${admin.userId} and status = 'active'`;
  t.equal(keys.length, 0, 'the demoted admin holds no active key');
});
