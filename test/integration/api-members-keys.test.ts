// Members and management API keys: who may manage them (owner, admin with a session; never a key), the
// owner rules, and the key lifecycle (shown once, stored hashed, masked in every other answer, revoked or
// expired keys rejected at once).
import t from 'tap';
import { createProgram, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;

const MANAGE_DENIED = 'Only owners and admins manage members and API keys';
const KEY_DENIED = 'Members and API keys are managed with a dashboard session';
const INACTIVE = 'Your membership of this workspace is inactive';
const LAST_OWNER = 'The workspace must keep at least one active owner';
const OWNER_ONLY = 'Only an owner can grant the owner role or change or remove an owner';
const KEY_REJECTED = 'Invalid, revoked or expired API key';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
function call(method: Method, path: string, token: string, body?: unknown) {
  return method === 'GET' ? getJson(url(path), bearer(token)) : send(method, url(path), body, bearer(token));
}

interface KeyData {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  program_scope: string[] | null;
  status: string;
  expires_at: string | null;
  created_at: string;
  revoked_at: string | null;
  key_masked: string;
  key?: string;
}

async function createKey(user: User, body: Record<string, unknown> = {}): Promise<KeyData & { key: string }> {
  const r = await call('POST', `/api/advertiser/api-keys?workspace_id=${user.workspaceId}`, user.session, {
    name: 'test key',
    ...body,
  });
  if (r.status !== 201) throw new Error(`key creation failed: ${r.status} ${r.text}`);
  return r.body.data as KeyData & { key: string };
}

/**
 * 403 on a members route with the "session" reason (or, for a key limited to some programs, the
 * workspace-wide route's `API key is limited to programs <ids>`) proves the key authenticated (a bad key
 * is 401).
 */
async function keyStatus(key: string): Promise<number> {
  const r = await getJson(url('/api/advertiser/members'), bearer(key));
  const reason = String(r.body.error);
  if (r.status === 403 && reason !== KEY_DENIED && !reason.startsWith('API key is limited to programs '))
    throw new Error(`unexpected 403: ${r.text}`);
  return r.status;
}

t.test(
  'who may manage members and keys: owner and admin yes; member, viewer, inactive, keys no',
  async (t) => {
    const owner = await signup(svc);
    const ws = owner.workspaceId;
    const admin = await memberOf(svc, sql, ws, 'admin');
    const member = await memberOf(svc, sql, ws, 'member');
    const viewer = await memberOf(svc, sql, ws, 'viewer');
    const gone = await memberOf(svc, sql, ws, 'admin');
    await sql`update memberships set status = 'inactive' where user_id = ${gone.userId} and workspace_id = ${ws}`;
    const stranger = await signup(svc);
    const target = await memberOf(svc, sql, ws, 'viewer');
    const newcomer = await signup(svc);
    const ownerKey = await createKey(owner);

    const q = `?workspace_id=${ws}`;
    const routes: { method: Method; path: string; body?: unknown; ok: number }[] = [
      { method: 'GET', path: `/api/advertiser/members${q}`, ok: 200 },
      {
        method: 'POST',
        path: `/api/advertiser/members${q}`,
        body: { email: newcomer.email, role: 'viewer' },
        ok: 201,
      },
      {
        method: 'PUT',
        path: `/api/advertiser/members/${target.userId}${q}`,
        body: { role: 'member' },
        ok: 200,
      },
      { method: 'DELETE', path: `/api/advertiser/members/${newcomer.userId}${q}`, ok: 200 },
      { method: 'POST', path: `/api/advertiser/api-keys${q}`, body: { name: 'k' }, ok: 201 },
      { method: 'GET', path: `/api/advertiser/api-keys${q}`, ok: 200 },
      { method: 'PUT', path: `/api/advertiser/api-keys/${ownerKey.id}`, body: { name: 'renamed' }, ok: 200 },
      { method: 'DELETE', path: `/api/advertiser/api-keys/${ownerKey.id}`, ok: 200 },
    ];
    const denied: [string, string, number, string][] = [
      ['member', member.session, 403, MANAGE_DENIED],
      ['viewer', viewer.session, 403, MANAGE_DENIED],
      ['deactivated admin', gone.session, 403, INACTIVE],
      ['key of the workspace', ownerKey.key, 403, KEY_DENIED],
    ];
    for (const r of routes) {
      for (const [who, token, status, error] of denied) {
        const res = await call(r.method, r.path, token, r.body);
        t.same([res.status, res.body], [status, { error }], `${who}: ${r.method} ${r.path}`);
      }
      // A user of another workspace learns nothing about this one.
      const res = await call(r.method, r.path, stranger.session, r.body);
      const notFound = r.path.includes('/api-keys/') ? 'API key not found' : 'Workspace not found';
      t.same([res.status, res.body], [404, { error: notFound }], `other workspace: ${r.method} ${r.path}`);
    }
    t.same(
      await sql`select role, status from memberships where user_id = ${target.userId} and workspace_id = ${ws}`,
      [{ role: 'viewer', status: 'active' }],
      'nothing changed',
    );
    t.equal(
      (await sql`select 1 from memberships where user_id = ${newcomer.userId} and workspace_id = ${ws}`)
        .length,
      0,
    );
    t.same(await sql`select name, status from api_keys where id = ${ownerKey.id}`, [
      { name: 'test key', status: 'active' },
    ]);

    for (const [who, u] of [
      ['owner', owner],
      ['admin', admin],
    ] as const) {
      for (const r of routes) {
        const res = await call(r.method, r.path, u.session, r.body);
        t.equal(res.status, r.ok, `${who}: ${r.method} ${r.path} ${res.text.slice(0, 200)}`);
        if (r.method === 'DELETE' && r.path.includes('/members/')) {
          // Re-add so the next role can run the same sequence.
          await sql`delete from memberships where user_id = ${newcomer.userId} and workspace_id = ${ws}`;
        }
        if (r.path.includes(`/api-keys/${ownerKey.id}`)) {
          await sql`update api_keys set status = 'active', revoked_at = null, name = 'test key' where id = ${ownerKey.id}`;
        }
      }
    }
    t.equal(await keyStatus(ownerKey.key), 403, 'key authenticates (403, not 401) on a members route');
  },
);

t.test('members: add, list, change role, remove, reactivate', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const q = `?workspace_id=${ws}`;
  const u = await signup(svc);

  const added = await call('POST', '/api/advertiser/members', owner.session, {
    email: `  ${u.email.toUpperCase()} `,
    role: 'viewer',
  });
  t.equal(added.status, 201, added.text);
  t.match(added.body.data, {
    user_id: u.userId,
    email: u.email,
    name: 'Test User',
    role: 'viewer',
    status: 'active',
  });
  t.ok(Date.parse((added.body.data as { created_at: string }).created_at) > 0);

  const list = await call('GET', '/api/advertiser/members', owner.session);
  t.equal(list.status, 200);
  const members = list.body.data as { user_id: number; role: string; status: string }[];
  t.same(
    members.map((m) => [m.user_id, m.role, m.status]),
    [
      [owner.userId, 'owner', 'active'],
      [u.userId, 'viewer', 'active'],
    ],
    'the default workspace is the caller’s owned one',
  );

  const again = await call('POST', `/api/advertiser/members${q}`, owner.session, {
    email: u.email,
    role: 'admin',
  });
  t.same([again.status, again.body], [409, { error: 'User is already an active member of this workspace' }]);

  const unknown = await call('POST', '/api/advertiser/members', owner.session, {
    email: 'nobody-here@example.com',
    role: 'viewer',
  });
  t.same([unknown.status, unknown.body], [404, { error: 'User not found' }]);

  const promoted = await call('PUT', `/api/advertiser/members/${u.userId}${q}`, owner.session, {
    role: 'admin',
  });
  t.equal(promoted.status, 200);
  t.match(promoted.body.data, { user_id: u.userId, role: 'admin', status: 'active' });
  t.equal((await call('GET', `/api/advertiser/members${q}`, u.session)).status, 200, 'the new admin manages');

  const removed = await call('DELETE', `/api/advertiser/members/${u.userId}${q}`, owner.session);
  t.equal(removed.status, 200);
  t.match(removed.body.data, { user_id: u.userId, role: 'admin', status: 'inactive' });
  t.same(await sql`select status from memberships where user_id = ${u.userId} and workspace_id = ${ws}`, [
    { status: 'inactive' },
  ]);
  t.same(
    (await call('GET', `/api/advertiser/members${q}`, u.session)).body,
    { error: INACTIVE },
    'removed at once',
  );
  const twice = await call('DELETE', `/api/advertiser/members/${u.userId}${q}`, owner.session);
  t.same([twice.status, (twice.body.data as { status: string }).status], [200, 'inactive'], 'idempotent');
  t.equal(
    (await call('PUT', `/api/advertiser/members/${u.userId}${q}`, owner.session, { role: 'member' })).body
      .error,
    'Member is inactive; add them again with POST /api/advertiser/members',
  );

  const back = await call('POST', '/api/advertiser/members', owner.session, {
    email: u.email,
    role: 'member',
    workspace_id: ws,
  });
  t.equal(back.status, 201, 'an inactive member is reactivated');
  t.match(back.body.data, { user_id: u.userId, role: 'member', status: 'active' });
  t.equal(
    (
      await sql`select count(*)::int as n from memberships where user_id = ${u.userId} and workspace_id = ${ws}`
    )[0]!.n,
    1,
  );
  t.same((await call('GET', `/api/advertiser/members${q}`, u.session)).body, { error: MANAGE_DENIED });

  const other = await signup(svc);
  t.same(
    (await call('DELETE', `/api/advertiser/members/${other.userId}${q}`, owner.session)).body,
    { error: 'Member not found' },
    'not a member of this workspace',
  );
  t.same(
    (await call('PUT', `/api/advertiser/members/${u.userId}`, other.session, { role: 'viewer' })).body,
    { error: 'Member not found' },
    'another owner’s default workspace does not hold the user',
  );
});

t.test('members: input errors', async (t) => {
  const owner = await signup(svc);
  const cases: [Method, string, unknown, string][] = [
    ['POST', '/api/advertiser/members', { role: 'viewer' }, 'email is required'],
    ['POST', '/api/advertiser/members', { email: '  ', role: 'viewer' }, 'email is required'],
    ['POST', '/api/advertiser/members', { email: 42, role: 'viewer' }, 'email must be a string'],
    ['POST', '/api/advertiser/members', { email: owner.email }, 'role is required'],
    [
      'POST',
      '/api/advertiser/members',
      { email: owner.email, role: 'boss' },
      'role must be one of owner, admin, member, viewer',
    ],
    ['POST', '/api/advertiser/members', [1], 'Request body must be a JSON object'],
    [
      'POST',
      '/api/advertiser/members?workspace_id=abc',
      { email: owner.email, role: 'viewer' },
      'workspace_id must be a positive integer',
    ],
    [
      'POST',
      `/api/advertiser/members?workspace_id=${owner.workspaceId}`,
      { email: owner.email, role: 'viewer', workspace_id: owner.workspaceId + 1 },
      'workspace_id differs between the query string and the body',
    ],
    ['GET', '/api/advertiser/members?workspace_id=0', undefined, 'workspace_id must be a positive integer'],
    ['PUT', '/api/advertiser/members/abc', { role: 'viewer' }, 'userId must be a positive integer'],
    [
      'PUT',
      `/api/advertiser/members/${owner.userId}`,
      { role: 'superuser' },
      'role must be one of owner, admin, member, viewer',
    ],
    ['PUT', `/api/advertiser/members/${owner.userId}`, {}, 'role is required'],
    ['DELETE', '/api/advertiser/members/-1', undefined, 'userId must be a positive integer'],
    ['DELETE', '/api/advertiser/members/1.5', undefined, 'userId must be a positive integer'],
  ];
  for (const [method, path, body, error] of cases) {
    const r = await call(method, path, owner.session, body);
    t.same([r.status, r.body], [400, { error }], `${method} ${path} ${JSON.stringify(body)}`);
  }
  const bad = await send('POST', url('/api/advertiser/members'), undefined, {
    ...bearer(owner.session),
    'content-type': 'application/json',
  });
  t.equal(bad.status, 400, 'empty body');
});

t.test('owner rules: the last owner stays; only owners touch owners', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const q = `?workspace_id=${ws}`;
  const admin = await memberOf(svc, sql, ws, 'admin');

  for (const [method, body] of [
    ['PUT', { role: 'admin' }],
    ['DELETE', undefined],
  ] as const) {
    const r = await call(method, `/api/advertiser/members/${owner.userId}${q}`, owner.session, body);
    t.same([r.status, r.body], [409, { error: LAST_OWNER }], `the last owner cannot ${method} themself`);
  }
  const same = await call('PUT', `/api/advertiser/members/${owner.userId}${q}`, owner.session, {
    role: 'owner',
  });
  t.equal(same.status, 200, 'setting the same role is a no-op');

  for (const [method, path, body] of [
    ['PUT', `/api/advertiser/members/${admin.userId}${q}`, { role: 'owner' }],
    ['PUT', `/api/advertiser/members/${owner.userId}${q}`, { role: 'viewer' }],
    ['DELETE', `/api/advertiser/members/${owner.userId}${q}`, undefined],
    ['POST', `/api/advertiser/members${q}`, { email: (await signup(svc)).email, role: 'owner' }],
  ] as const) {
    const r = await call(method, path, admin.session, body);
    t.same(
      [r.status, r.body],
      [403, { error: OWNER_ONLY }],
      `admin: ${method} ${path} ${JSON.stringify(body)}`,
    );
  }
  t.same(
    await sql`select user_id::int, role from memberships where workspace_id = ${ws} order by user_id`,
    [
      { user_id: owner.userId, role: 'owner' },
      { user_id: admin.userId, role: 'admin' },
    ],
    'nothing changed',
  );
  const demoteSelf = await call('PUT', `/api/advertiser/members/${admin.userId}${q}`, admin.session, {
    role: 'member',
  });
  t.equal(demoteSelf.status, 200, 'an admin may step down');

  const second = await memberOf(svc, sql, ws, 'member');
  t.equal(
    (await call('PUT', `/api/advertiser/members/${second.userId}${q}`, owner.session, { role: 'owner' }))
      .status,
    200,
    'an owner grants owner',
  );
  // Both owners demote each other at once: exactly one wins; an owner always remains.
  const [a, b] = await Promise.all([
    call('PUT', `/api/advertiser/members/${second.userId}${q}`, owner.session, { role: 'admin' }),
    call('PUT', `/api/advertiser/members/${owner.userId}${q}`, second.session, { role: 'admin' }),
  ]);
  // The loser is refused as the last owner (409), or, if it was checked after losing its own owner role,
  // as an admin touching an owner (403).
  const outcomes = [a!.status, b!.status].sort();
  t.equal(outcomes[0], 200, 'one demotion wins');
  t.ok(outcomes[1] === 403 || outcomes[1] === 409, `the other is refused (${outcomes[1]})`);
  const owners =
    await sql`select user_id from memberships where workspace_id = ${ws} and role = 'owner' and status = 'active'`;
  t.equal(owners.length, 1, 'one active owner remains');

  const [lastOwnerRow] = owners as unknown as { user_id: string }[];
  const last = Number(lastOwnerRow!.user_id) === owner.userId ? owner : second;
  const nowAdmin = last === owner ? second : owner;
  const leave = await call('DELETE', `/api/advertiser/members/${last.userId}${q}`, last.session);
  t.same([leave.status, leave.body], [409, { error: LAST_OWNER }], 'the last owner cannot leave');
  t.equal(
    (await call('PUT', `/api/advertiser/members/${nowAdmin.userId}${q}`, last.session, { role: 'owner' }))
      .status,
    200,
  );
  const left = await call('DELETE', `/api/advertiser/members/${last.userId}${q}`, last.session);
  t.equal(left.status, 200, 'with another owner present, an owner may leave');
  t.same((await call('GET', `/api/advertiser/members${q}`, last.session)).body, { error: INACTIVE });
});

t.test('api keys: created once, stored hashed, masked everywhere else, revoked at once', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const p1 = await createProgram(sql, { workspaceId: ws });

  const created = await call('POST', '/api/advertiser/api-keys', owner.session, { name: '  CI deploys  ' });
  t.equal(created.status, 201, created.text);
  const k = created.body.data as KeyData & { key: string };
  t.match(k, {
    id: Number,
    name: 'CI deploys',
    scopes: ['*'],
    program_scope: null,
    status: 'active',
    expires_at: null,
    revoked_at: null,
  });
  t.match(k.key, /^affk_[A-Za-z0-9_-]{32}$/);
  t.equal(k.prefix, k.key.slice(0, 9), 'prefix: the first 9 characters');
  t.equal(k.key_masked, `affk_${k.key.slice(5, 9)}…${k.key.slice(-4)}`);
  t.ok(Math.abs(Date.parse(k.created_at) - Date.now()) < 60_000);

  const [stored] = await sql<{ n: number; row: string }[]>`
    select (key_hash = sha256(${k.key}::bytea))::int as n, row_to_json(api_keys)::text as row
    from api_keys where id = ${k.id}`;
  t.equal(stored!.n, 1, 'stored as the SHA-256 of the key');
  t.notOk(stored!.row.includes(k.key.slice(9)), 'the key itself is not stored');
  t.same(await sql`select workspace_id::int, created_by::int from api_keys where id = ${k.id}`, [
    { workspace_id: ws, created_by: owner.userId },
  ]);

  t.equal(await keyStatus(k.key), 403, 'the key authenticates');
  const [used] = await sql`select last_used_at from api_keys where id = ${k.id}`;
  t.ok(used!.last_used_at, 'last_used_at recorded');
  const byKey = await call('POST', '/api/advertiser/api-keys', k.key, { name: 'from a key' });
  t.same([byKey.status, byKey.body], [403, { error: KEY_DENIED }], 'a key cannot create keys');

  const second = await createKey(owner, { scopes: ['program:read', 'program:list'], program_scope: [p1.id] });
  t.same(second.scopes, ['program:read', 'program:list']);
  t.same(second.program_scope, [String(p1.id)], 'program ids come back as strings');

  const list = await call('GET', '/api/advertiser/api-keys', owner.session);
  t.equal(list.status, 200);
  const keys = list.body.data as KeyData[];
  t.same(
    keys.map((x) => x.id),
    [second.id, k.id],
    'newest first',
  );
  for (const x of keys) t.notOk('key' in x, 'no key field in the listing');
  t.match(keys[1], {
    id: k.id,
    name: 'CI deploys',
    prefix: k.prefix,
    key_masked: k.key_masked,
    status: 'active',
  });
  for (const secret of [k.key, second.key]) {
    t.notOk(list.text.includes(secret), 'the listing never carries the full key');
    t.notOk(list.text.includes(secret.slice(9)), 'nor its secret part');
  }

  const renamed = await call('PUT', `/api/advertiser/api-keys/${k.id}`, owner.session, {
    name: 'renamed',
    scopes: ['dashboard:view'],
    program_scope: [String(p1.id)],
  });
  t.equal(renamed.status, 200, renamed.text);
  t.match(renamed.body.data, {
    id: k.id,
    name: 'renamed',
    scopes: ['dashboard:view'],
    program_scope: [String(p1.id)],
    status: 'active',
    key_masked: k.key_masked,
  });
  t.notOk(renamed.text.includes(k.key), 'update answers carry no key');
  t.notOk('key' in (renamed.body.data as object));
  t.same(
    await sql`select scopes, program_scope::text[] from api_keys where key_hash = sha256(${k.key}::bytea)`,
    [{ scopes: ['dashboard:view'], program_scope: [String(p1.id)] }],
    'what authentication reads on the next request',
  );
  const cleared = await call('PUT', `/api/advertiser/api-keys/${k.id}`, owner.session, {
    program_scope: null,
  });
  t.match(
    cleared.body.data,
    { name: 'renamed', scopes: ['dashboard:view'], program_scope: null },
    'only what is sent changes',
  );

  const revoked = await call('DELETE', `/api/advertiser/api-keys/${k.id}`, owner.session);
  t.equal(revoked.status, 200);
  const r = revoked.body.data as KeyData;
  t.match(r, { id: k.id, status: 'revoked', name: 'renamed' });
  t.ok(r.revoked_at && Date.parse(r.revoked_at) > 0, 'revoked_at set');
  t.notOk(revoked.text.includes(k.key), 'revoke answers carry no key');
  t.equal(await keyStatus(k.key), 401, 'a revoked key is rejected at once');
  t.same((await getJson(url('/api/advertiser/members'), bearer(k.key))).body, { error: KEY_REJECTED });
  t.same(
    await sql`select status from api_keys where id = ${k.id}`,
    [{ status: 'revoked' }],
    'the row is kept',
  );

  const again = await call('DELETE', `/api/advertiser/api-keys/${k.id}`, owner.session);
  t.same([again.status, (again.body.data as KeyData).revoked_at], [200, r.revoked_at], 'idempotent');
  const upd = await call('PUT', `/api/advertiser/api-keys/${k.id}`, owner.session, { name: 'x' });
  t.same([upd.status, upd.body], [409, { error: 'API key is revoked' }]);
  const listed = (await call('GET', '/api/advertiser/api-keys', owner.session)).body.data as KeyData[];
  t.match(
    listed.find((x) => x.id === k.id),
    { status: 'revoked' },
    'revoked keys stay listed',
  );
  t.equal(await keyStatus(second.key), 403, 'the other key still works');
});

t.test('api keys: expiry is checked on every request', async (t) => {
  const owner = await signup(svc);
  const soon = new Date(Date.now() + 3600_000).toISOString();
  const k = await createKey(owner, { expires_at: soon });
  t.equal(k.expires_at, soon);
  t.equal(await keyStatus(k.key), 403, 'valid before expires_at');
  await sql`update api_keys set expires_at = now() - interval '1 second' where id = ${k.id}`;
  t.equal(await keyStatus(k.key), 401, 'rejected one second after expires_at');
  await sql`update api_keys set expires_at = now() + interval '2 seconds' where id = ${k.id}`;
  t.equal(await keyStatus(k.key), 403, 'accepted two seconds before');
  await sql`update api_keys set expires_at = now() - interval '1 second' where id = ${k.id}`;
  const listed = (await call('GET', '/api/advertiser/api-keys', owner.session)).body.data as KeyData[];
  t.match(
    listed.find((x) => x.id === k.id),
    { status: 'active' },
    'expiry leaves the status unchanged',
  );
});

t.test('api keys: input errors', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const mine = await createProgram(sql, { workspaceId: ws });
  const deleted = await createProgram(sql, { workspaceId: ws });
  await sql`update programs set deleted_at = now() where id = ${deleted.id}`;
  const foreign = await createProgram(sql);
  const k = await createKey(owner);
  const other = await signup(svc);
  const otherKey = await createKey(other);

  const post = (body: unknown) => call('POST', '/api/advertiser/api-keys', owner.session, body);
  const cases: [unknown, string][] = [
    [{}, 'name is required'],
    [{ name: '' }, 'name must be a string of 1 to 200 characters'],
    [{ name: '   ' }, 'name must be a string of 1 to 200 characters'],
    [{ name: 7 }, 'name must be a string of 1 to 200 characters'],
    [{ name: 'x'.repeat(201) }, 'name must be a string of 1 to 200 characters'],
    [{ name: 'k', scopes: [] }, 'scopes must be a non-empty array of strings'],
    [{ name: 'k', scopes: 'program:read' }, 'scopes must be a non-empty array of strings'],
    [{ name: 'k', scopes: [1] }, 'scopes must be a non-empty array of strings'],
    [
      { name: 'k', scopes: ['program:read', 'program:destroy'] },
      'Unknown scope: program:destroy. Allowed: *, program:list, program:read, program:create, program:update, program:delete, program:go_live, program:regenerate-token, dashboard:view, partners:read, partners:write, payouts:read, payouts:write, webhooks:read, webhooks:write',
    ],
    [{ name: 'k', program_scope: [] }, 'program_scope must be null or a non-empty array of program ids'],
    [
      { name: 'k', program_scope: String(mine.id) },
      'program_scope must be null or a non-empty array of program ids',
    ],
    [{ name: 'k', program_scope: ['abc'] }, 'program_scope has an invalid program id: "abc"'],
    [{ name: 'k', program_scope: [1.5] }, 'program_scope has an invalid program id: 1.5'],
    [
      { name: 'k', program_scope: [mine.id, foreign.id] },
      `program_scope: program ${foreign.id} not found in this workspace`,
    ],
    [
      { name: 'k', program_scope: [String(deleted.id)] },
      `program_scope: program ${deleted.id} not found in this workspace`,
    ],
    [
      { name: 'k', expires_at: 'tomorrow' },
      'expires_at must be an ISO 8601 datetime with a time zone, or null',
    ],
    [
      { name: 'k', expires_at: '2999-01-01' },
      'expires_at must be an ISO 8601 datetime with a time zone, or null',
    ],
    [
      { name: 'k', expires_at: 1893456000 },
      'expires_at must be an ISO 8601 datetime with a time zone, or null',
    ],
    [
      { name: 'k', expires_at: new Date(Date.now() - 1000).toISOString() },
      'expires_at must be in the future',
    ],
    ['"just a string"', 'Request body must be a JSON object'],
  ];
  for (const [body, error] of cases) {
    const r = await post(typeof body === 'string' ? JSON.parse(body) : body);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body).slice(0, 80));
  }
  const ok = await post({
    name: 'x'.repeat(200),
    scopes: ['program:read', 'program:read'],
    program_scope: [mine.id, String(mine.id)],
    expires_at: null,
  });
  t.equal(ok.status, 201, 'limits are inclusive; duplicates collapse');
  t.match(ok.body.data, { scopes: ['program:read'], program_scope: [String(mine.id)], expires_at: null });
  t.equal(
    (await sql`select count(*)::int as n from api_keys where workspace_id = ${ws}`)[0]!.n,
    2,
    'no key made by a bad request',
  );

  const put = (id: number | string, body: unknown, token = owner.session) =>
    call('PUT', `/api/advertiser/api-keys/${id}`, token, body);
  const putCases: [number | string, unknown, number, string][] = [
    [k.id, {}, 400, 'Nothing to update: send name, scopes or program_scope'],
    [k.id, { nam: 'typo' }, 400, 'Nothing to update: send name, scopes or program_scope'],
    [k.id, { expires_at: null }, 400, 'expires_at cannot be changed; create a new key instead'],
    [k.id, { name: '' }, 400, 'name must be a string of 1 to 200 characters'],
    [
      k.id,
      { scopes: ['nope'] },
      400,
      `Unknown scope: nope. Allowed: *, program:list, program:read, program:create, program:update, program:delete, program:go_live, program:regenerate-token, dashboard:view, partners:read, partners:write, payouts:read, payouts:write, webhooks:read, webhooks:write`,
    ],
    [
      k.id,
      { program_scope: [foreign.id] },
      400,
      `program_scope: program ${foreign.id} not found in this workspace`,
    ],
    ['abc', { name: 'x' }, 400, 'id must be a positive integer'],
    [999_999_999, { name: 'x' }, 404, 'API key not found'],
    [otherKey.id, { name: 'x' }, 404, 'API key not found'],
  ];
  for (const [id, body, status, error] of putCases) {
    const r = await put(id, body);
    t.same([r.status, r.body], [status, { error }], `PUT ${id} ${JSON.stringify(body)}`);
  }
  const wrongWs = await call(
    'DELETE',
    `/api/advertiser/api-keys/${k.id}?workspace_id=${other.workspaceId}`,
    owner.session,
  );
  t.same(
    [wrongWs.status, wrongWs.body],
    [404, { error: 'API key not found' }],
    'workspace_id must match the key',
  );
  const foreignDelete = await call('DELETE', `/api/advertiser/api-keys/${otherKey.id}`, owner.session);
  t.same([foreignDelete.status, foreignDelete.body], [404, { error: 'API key not found' }]);
  t.same(await sql`select name, status from api_keys where id in (${k.id}, ${otherKey.id}) order by id`, [
    { name: 'test key', status: 'active' },
    { name: 'test key', status: 'active' },
  ]);
  const list = (await call('GET', '/api/advertiser/api-keys', owner.session)).body.data as KeyData[];
  t.notOk(
    list.some((x) => x.id === otherKey.id),
    'another workspace’s keys are not listed',
  );
});

t.test('removing or demoting a member revokes the keys they created', async (t) => {
  const owner = await signup(svc);
  const ws = owner.workspaceId;
  const q = `?workspace_id=${ws}`;
  const leaving = await memberOf(svc, sql, ws, 'admin');
  const demoted = await memberOf(svc, sql, ws, 'admin');
  const kLeaving = await createKey(leaving);
  const kDemoted = await createKey(demoted);
  const kOwner = await createKey(owner);
  for (const key of [kLeaving, kDemoted, kOwner]) t.equal(await keyStatus(key.key), 403);

  t.equal((await call('DELETE', `/api/advertiser/members/${leaving.userId}${q}`, owner.session)).status, 200);
  t.equal(await keyStatus(kLeaving.key), 401, 'the removed member’s key is dead');
  t.equal(
    (await call('PUT', `/api/advertiser/members/${demoted.userId}${q}`, owner.session, { role: 'viewer' }))
      .status,
    200,
  );
  t.equal(await keyStatus(kDemoted.key), 401, 'the demoted member’s key is dead');
  t.equal(await keyStatus(kOwner.key), 403, 'other keys are untouched');
  t.same(
    await sql`select id::int, status, revoked_at is not null as revoked from api_keys where workspace_id = ${ws} order by id`,
    [
      { id: kLeaving.id, status: 'revoked', revoked: true },
      { id: kDemoted.id, status: 'revoked', revoked: true },
      { id: kOwner.id, status: 'active', revoked: false },
    ],
  );
});

// The program routes are another module's; until they are registered this test is skipped (and says so).
const probe = await getJson(url('/api/advertiser/affiliate-programs'));
const programRoutes = !(probe.status === 404 && String(probe.body.error).startsWith('Route '));
t.test(
  'scopes take effect on the program routes',
  {
    skip: programRoutes ? false : 'GET /api/advertiser/affiliate-programs is not registered yet',
  },
  async (t) => {
    const owner = await signup(svc);
    const k = await createKey(owner, { scopes: ['program:read'] });
    const denied = await getJson(url('/api/advertiser/affiliate-programs'), bearer(k.key));
    t.same([denied.status, denied.body], [403, { error: 'API key lacks scope program:list' }]);
    t.equal(
      (await call('PUT', `/api/advertiser/api-keys/${k.id}`, owner.session, { scopes: ['program:list'] }))
        .status,
      200,
    );
    t.equal(
      (await getJson(url('/api/advertiser/affiliate-programs'), bearer(k.key))).status,
      200,
      'allowed after the update',
    );
  },
);

t.test('the routes are in the OpenAPI document', async (t) => {
  const doc = await getJson(url('/api/v1/openapi.json'));
  t.equal(doc.status, 200);
  const paths = doc.body.paths as Record<string, Record<string, unknown>>;
  t.same(Object.keys(paths['/api/advertiser/members'] ?? {}).sort(), ['get', 'post']);
  t.same(Object.keys(paths['/api/advertiser/members/{userId}'] ?? {}).sort(), ['delete', 'put']);
  t.same(Object.keys(paths['/api/advertiser/api-keys'] ?? {}).sort(), ['get', 'post']);
  t.same(Object.keys(paths['/api/advertiser/api-keys/{id}'] ?? {}).sort(), ['delete', 'put']);
});
