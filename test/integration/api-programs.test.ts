// Program management and the processor connection through the real API: create/read/update/delete,
// go-live, token regeneration seen by the ingress, every validation string, roles and key scopes, another
// workspace's program as 404, and the full tracking token only ever in create and regenerate answers.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const programs = url('/api/advertiser/affiliate-programs');

interface ProgramBody {
  id: number;
  workspace_id: number;
  name: string;
  slug: string;
  status: string;
  cookie_window_days: number;
  currency: string;
  commission: Record<string, unknown>;
  allowed_origins: string[];
  api_token_masked: string;
  created_at: string;
  api_token?: string;
}

async function create(u: User | string, body: Record<string, unknown>) {
  const r = await send('POST', programs, body, bearer(typeof u === 'string' ? u : u.session));
  return { ...r, data: r.body.data as ProgramBody };
}

async function apiKey(u: User, scopes: string[], programScope: number[] | null = null): Promise<string> {
  const key = generateSecret('affk_');
  await sql`
    insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes, program_scope)
    values (${u.workspaceId}, ${u.userId}, 'test key', ${key.slice(0, 9)}, ${hashSecret(key)}, ${maskSecret(key)},
            ${scopes}::text[], ${programScope}::bigint[])`;
  return key;
}

const owner = await signup(svc);

t.test('create: defaults, the token once (stored hashed), generated slug', async (t) => {
  const r = await create(owner, { name: 'Acme Pro Plan' });
  t.equal(r.status, 201, r.text);
  const p = r.data;
  t.match(p, {
    id: Number,
    workspace_id: owner.workspaceId,
    name: 'Acme Pro Plan',
    slug: /^acme-pro-plan(-[0-9a-f]{6})?$/,
    status: 'draft',
    cookie_window_days: 60,
    currency: 'USD',
    allowed_origins: [],
    api_token: /^aff_[A-Za-z0-9_-]{32}$/,
  });
  t.same(p.commission, {
    type: 'percentage',
    percent: 20,
    amount_cents: null,
    recurring: { mode: 'recurring', months: null, first: null },
    product_rules: [],
  });
  t.equal(p.api_token_masked, maskSecret(p.api_token!));
  t.ok(Date.parse(p.created_at) > Date.now() - 60_000);
  t.notOk('api_token_hash' in p);
  const [row] = await sql<{ ok: boolean; masked: string }[]>`
    select api_token_hash = sha256(${p.api_token!}::bytea) as ok, api_token_masked as masked
    from programs where id = ${p.id}`;
  t.same(row, { ok: true, masked: p.api_token_masked }, 'only the SHA-256 and the masked form are stored');

  // The new token works at the ingress at once (a new program's insert invalidates cached unknowns).
  const status = await waitFor('new token accepted', async () => {
    const s = await getJson(url('/api/v1/cli/status'), bearer(p.api_token!));
    return s.status === 200 ? s : null;
  });
  t.match(status.body, { success: true, program: { id: p.id, slug: p.slug, status: 'draft' } });

  const again = await create(owner, { name: 'Acme Pro Plan' });
  t.equal(again.status, 201);
  t.not(again.data.slug, p.slug, 'a taken generated slug gets a suffix');
  t.match(again.data.slug, /^acme-pro-plan-[0-9a-f]{6}$/);
  const accents = await create(owner, { name: '  Café Crème ™ 2024!  ' });
  t.equal(accents.data.name, 'Café Crème ™ 2024!', 'name trimmed');
  t.match(accents.data.slug, /^cafe-creme-tm-2024(-[0-9a-f]{6})?$/, 'accents dropped, ™ is TM');
  const symbols = await create(owner, { name: '!!!' });
  t.match(symbols.data.slug, /^program(-[0-9a-f]{6})?$/);
});

t.test('create with every field; explicit slug conflicts are 409', async (t) => {
  const slug = `shop-${randomBytes(4).toString('hex')}`;
  const commission = {
    type: 'percentage',
    percent: 30,
    recurring: { mode: 'recurring', months: 12 },
    product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 500 }],
  };
  const r = await create(owner, {
    name: 'Shop',
    slug,
    cookie_window_days: 30,
    currency: 'eur',
    commission,
    allowed_origins: ['https://Shop.Example.com/', 'http://localhost:3000', 'https://shop.example.com:443'],
    workspace_id: owner.workspaceId,
    status: 'live',
  });
  t.equal(r.status, 201, r.text);
  t.match(r.data, {
    slug,
    cookie_window_days: 30,
    currency: 'EUR',
    status: 'draft',
    allowed_origins: ['https://shop.example.com', 'http://localhost:3000'],
  });
  t.same(r.data.commission, {
    type: 'percentage',
    percent: 30,
    amount_cents: null,
    recurring: { mode: 'recurring', months: 12, first: null },
    product_rules: [{ type: 'flat', percent: null, amount_cents: 500, product_id: 'pro' }],
  });
  const dup = await create(owner, { name: 'Other', slug });
  t.equal(dup.status, 409);
  t.same(dup.body, { error: 'slug is already taken' });
});

t.test('create: every validation string', async (t) => {
  const originError = (i: number) =>
    `allowed_origins[${i}] must be an origin such as https://shop.example.com (http or https, host and optional port; no path, query or wildcard)`;
  const cases: [unknown, string][] = [
    [{}, 'name is required and must be 1 to 200 characters'],
    [{ name: '   ' }, 'name is required and must be 1 to 200 characters'],
    [{ name: 'x'.repeat(201) }, 'name is required and must be 1 to 200 characters'],
    [{ name: 5 }, 'name is required and must be 1 to 200 characters'],
    [
      { name: 'A', slug: 'Upper' },
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    [
      { name: 'A', slug: '-lead' },
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    [
      { name: 'A', slug: 'a'.repeat(64) },
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    [{ name: 'A', cookie_window_days: 0 }, 'cookie_window_days must be an integer from 1 to 3650'],
    [{ name: 'A', cookie_window_days: 3651 }, 'cookie_window_days must be an integer from 1 to 3650'],
    [{ name: 'A', cookie_window_days: 1.5 }, 'cookie_window_days must be an integer from 1 to 3650'],
    [{ name: 'A', cookie_window_days: '30' }, 'cookie_window_days must be an integer from 1 to 3650'],
    [{ name: 'A', currency: 'XYZ' }, 'currency must be an ISO 4217 currency code'],
    [{ name: 'A', currency: 'US' }, 'currency must be an ISO 4217 currency code'],
    [{ name: 'A', currency: 840 }, 'currency must be an ISO 4217 currency code'],
    [{ name: 'A', commission: 'thirty' }, 'commission must be an object'],
    [{ name: 'A', commission: { type: 'tiered' } }, "type must be 'percentage' or 'flat'"],
    [
      { name: 'A', commission: { type: 'percentage', percent: 101 } },
      'percent must be a number from 0 to 100 (at most 4 decimals)',
    ],
    [
      { name: 'A', commission: { type: 'flat', amount_cents: -1 } },
      'amount_cents must be a non-negative integer',
    ],
    [
      { name: 'A', commission: { type: 'flat', amount_cents: 1, recurring: { mode: 'forever' } } },
      "recurring.mode must be 'one_time' or 'recurring'",
    ],
    [
      { name: 'A', allowed_origins: 'https://a.example' },
      'allowed_origins must be an array of at most 100 origins such as https://shop.example.com',
    ],
    [
      { name: 'A', allowed_origins: Array.from({ length: 101 }, (_, i) => `https://a${i}.example`) },
      'allowed_origins must be an array of at most 100 origins such as https://shop.example.com',
    ],
    [{ name: 'A', allowed_origins: ['https://a.example/path'] }, originError(0)],
    [{ name: 'A', allowed_origins: ['https://ok.example', 'a.example'] }, originError(1)],
    [{ name: 'A', allowed_origins: ['ftp://a.example'] }, originError(0)],
    [{ name: 'A', allowed_origins: ['https://*.a.example'] }, originError(0)],
    [{ name: 'A', allowed_origins: ['https://a.example?x=1'] }, originError(0)],
    [{ name: 'A', allowed_origins: ['https://user:pw@a.example'] }, originError(0)],
    [{ name: 'A', allowed_origins: [42] }, originError(0)],
    [{ name: 'A', workspace_id: 'one' }, 'workspace_id must be a positive integer'],
    [{ name: 'A', workspace_id: -1 }, 'workspace_id must be a positive integer'],
  ];
  for (const [body, error] of cases) {
    const r = await send('POST', programs, body, bearer(owner.session));
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 100));
    t.same(r.body, { error }, JSON.stringify(body).slice(0, 100));
  }
  const array = await send('POST', programs, [1], bearer(owner.session));
  t.same(array.body, { error: 'Request body must be a JSON object' });
  const res = await fetch(programs, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(owner.session) },
    body: '{"name": ',
  });
  t.equal(res.status, 400);
  t.same(await res.json(), { error: 'Invalid JSON body' });
});

t.test('create in a workspace: membership and role decide', async (t) => {
  const stranger = await signup(svc);
  const r = await create(stranger, { name: 'Nope', workspace_id: owner.workspaceId });
  t.equal(r.status, 404);
  t.same(r.body, { error: 'Workspace not found' });
  const admin = await memberOf(svc, sql, owner.workspaceId, 'admin');
  const byAdmin = await create(admin, { name: 'By admin', workspace_id: owner.workspaceId });
  t.equal(byAdmin.status, 201);
  t.equal(byAdmin.data.workspace_id, owner.workspaceId);
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  const byViewer = await create(viewer, { name: 'By viewer', workspace_id: owner.workspaceId });
  t.equal(byViewer.status, 403);
  t.same(byViewer.body, { error: 'Your role (viewer) lacks permission program:create' });
});

t.test('read and list: masked token only; other workspaces hidden; roles and key scopes', async (t) => {
  const u = await signup(svc);
  const a = (await create(u, { name: 'Alpha' })).data;
  const b = (await create(u, { name: 'Beta' })).data;
  // A second workspace where u is a viewer: its programs are listed too.
  const other = await signup(svc);
  const o = (await create(other, { name: 'Other co' })).data;
  await sql`insert into memberships (user_id, workspace_id, role) values (${u.userId}, ${other.workspaceId}, 'viewer')`;
  const stranger = await signup(svc);
  const hidden = (await create(stranger, { name: 'Hidden' })).data;

  const list = await getJson(programs, bearer(u.session));
  t.equal(list.status, 200);
  const ids = (list.body.data as ProgramBody[]).map((p) => p.id);
  t.same(ids, [a.id, b.id, o.id], 'own and member workspaces, by id; not the stranger’s');
  for (const p of [a, b, o]) {
    t.notOk(list.text.includes(p.api_token!), 'no full token in the list');
    t.ok(list.text.includes(p.api_token_masked), 'masked token in the list');
  }
  t.notOk(list.text.includes('api_token_hash'));
  t.notOk(list.text.includes('"api_token"'));

  const one = await getJson(`${programs}/${a.id}`, bearer(u.session));
  t.equal(one.status, 200);
  const { api_token: _token, ...withoutToken } = a;
  t.same(one.body.data, withoutToken, 'GET returns the created program, without the token');
  t.notOk(one.text.includes(a.api_token!));

  // Another workspace's program is 404 everywhere, with the same answer as a program that does not exist.
  for (const [method, path] of [
    ['GET', ''],
    ['PUT', ''],
    ['DELETE', ''],
    ['POST', '/go-live'],
    ['POST', '/regenerate-api-token'],
  ] as const) {
    const r =
      method === 'GET'
        ? await getJson(`${programs}/${hidden.id}${path}`, bearer(u.session))
        : await send(
            method,
            `${programs}/${hidden.id}${path}`,
            method === 'PUT' ? { name: 'x' } : undefined,
            {
              ...bearer(u.session),
            },
          );
    t.equal(r.status, 404, `${method} ${path}`);
    t.same(r.body, { error: 'Program not found' }, `${method} ${path}`);
  }
  for (const id of ['999999999', 'abc', '0', '-1', '1.5']) {
    const r = await getJson(`${programs}/${id}`, bearer(u.session));
    t.equal(r.status, 404, id);
    t.same(r.body, { error: 'Program not found' });
  }
  const hiddenRow = await sql`select name from programs where id = ${hidden.id}`;
  t.equal(hiddenRow[0]!.name, 'Hidden', 'the stranger’s program is untouched');

  // In the viewer workspace: reads are allowed, writes are 403.
  t.equal((await getJson(`${programs}/${o.id}`, bearer(u.session))).status, 200);
  const viewerPut = await send('PUT', `${programs}/${o.id}`, { name: 'x' }, bearer(u.session));
  t.equal(viewerPut.status, 403);
  t.same(viewerPut.body, { error: 'Your role (viewer) lacks permission program:update' });

  // Keys: its workspace only, filtered by program_scope; the scope decides the operation.
  const all = await apiKey(u, ['*']);
  t.same(
    ((await getJson(programs, bearer(all))).body.data as ProgramBody[]).map((p) => p.id),
    [a.id, b.id],
    'a key sees its own workspace only',
  );
  const scoped = await apiKey(u, ['program:list', 'program:read'], [b.id]);
  t.same(
    ((await getJson(programs, bearer(scoped))).body.data as ProgramBody[]).map((p) => p.id),
    [b.id],
  );
  t.equal((await getJson(`${programs}/${b.id}`, bearer(scoped))).status, 200);
  const outOfScope = await getJson(`${programs}/${a.id}`, bearer(scoped));
  t.equal(outOfScope.status, 403);
  t.same(outOfScope.body, { error: 'API key is not scoped to this program' });
  const readOnlyPut = await send('PUT', `${programs}/${b.id}`, { name: 'x' }, bearer(scoped));
  t.same(readOnlyPut.body, { error: 'API key lacks scope program:update' });
  t.equal(readOnlyPut.status, 403);
  const noList = await apiKey(u, ['program:read']);
  const noListRes = await getJson(programs, bearer(noList));
  t.equal(noListRes.status, 403);
  t.same(noListRes.body, { error: 'API key lacks scope program:list' });
  t.equal((await getJson(`${programs}/${o.id}`, bearer(all))).status, 404, 'key: other workspace is 404');
  const keyCreate = await create(all, { name: 'Via key' });
  t.equal(keyCreate.status, 201);
  t.equal(keyCreate.data.workspace_id, u.workspaceId);
  const keyElsewhere = await create(all, { name: 'Via key', workspace_id: other.workspaceId });
  t.equal(keyElsewhere.status, 404);

  t.equal((await getJson(programs)).status, 401, 'no credential');
  t.equal((await getJson(programs, bearer(a.api_token!))).status, 401, 'a tracking token is the wrong kind');
});

t.test('member and viewer: reads allowed, every write 403', async (t) => {
  const p = (await create(owner, { name: 'Roles' })).data;
  for (const role of ['member', 'viewer'] as const) {
    const u = await memberOf(svc, sql, owner.workspaceId, role);
    t.equal((await getJson(programs, bearer(u.session))).status, 200, `${role} lists`);
    t.equal((await getJson(`${programs}/${p.id}`, bearer(u.session))).status, 200, `${role} reads`);
    const writes: [string, number, string][] = [
      ['PUT', (await send('PUT', `${programs}/${p.id}`, { name: 'x' }, bearer(u.session))).status, 'update'],
      [
        'DELETE',
        (await send('DELETE', `${programs}/${p.id}`, undefined, bearer(u.session))).status,
        'delete',
      ],
      [
        'go-live',
        (await send('POST', `${programs}/${p.id}/go-live`, undefined, bearer(u.session))).status,
        'go_live',
      ],
      [
        'regenerate',
        (await send('POST', `${programs}/${p.id}/regenerate-api-token`, undefined, bearer(u.session))).status,
        'regenerate-token',
      ],
      ['create', (await create(u, { name: 'x', workspace_id: owner.workspaceId })).status, 'create'],
    ];
    for (const [what, status] of writes) t.equal(status, 403, `${role} ${what}`);
    const r = await send('PUT', `${programs}/${p.id}`, { name: 'x' }, bearer(u.session));
    t.same(r.body, { error: `Your role (${role}) lacks permission program:update` });
  }
  const [row] = await sql`select name, status, deleted_at from programs where id = ${p.id}`;
  t.same(row, { name: 'Roles', status: 'draft', deleted_at: null }, 'nothing changed');
  // A deactivated membership is 403, not 404.
  const gone = await memberOf(svc, sql, owner.workspaceId, 'admin');
  await sql`update memberships set status = 'inactive' where user_id = ${gone.userId}`;
  const r = await getJson(`${programs}/${p.id}`, bearer(gone.session));
  t.equal(r.status, 403);
  t.same(r.body, { error: 'Your membership of this workspace is inactive' });
  t.same((await getJson(programs, bearer(gone.session))).body, { data: [] }, 'inactive: nothing listed');
});

t.test('update: partial changes, validation, slug conflicts, status only via go-live', async (t) => {
  const p = (await create(owner, { name: 'Editable' })).data;
  const taken = (await create(owner, { name: 'Taken' })).data;
  const put = (body: unknown) => send('PUT', `${programs}/${p.id}`, body, bearer(owner.session));

  const r = await put({
    name: 'Edited',
    cookie_window_days: 7,
    currency: 'GBP',
    commission: { type: 'flat', amount_cents: 1500, recurring: { mode: 'one_time' } },
    allowed_origins: ['https://edit.example'],
    id: 12345,
    api_token_masked: 'ignored',
  });
  t.equal(r.status, 200, r.text);
  t.match(r.body.data, {
    id: p.id,
    name: 'Edited',
    slug: p.slug,
    cookie_window_days: 7,
    currency: 'GBP',
    commission: { type: 'flat', amount_cents: 1500, recurring: { mode: 'one_time', months: null } },
    allowed_origins: ['https://edit.example'],
    api_token_masked: p.api_token_masked,
    status: 'draft',
  });
  const slug = `edited-${randomBytes(3).toString('hex')}`;
  const s = await put({ slug, status: 'draft' });
  t.equal(s.status, 200, 'an unchanged status is accepted');
  t.match(s.body.data, { slug, name: 'Edited', cookie_window_days: 7 }, 'other fields kept');
  t.same((await put({})).body.data, s.body.data, 'an empty body changes nothing');
  t.same((await put({ allowed_origins: [] })).body.data, { ...(s.body.data as object), allowed_origins: [] });

  const conflict = await put({ slug: taken.slug });
  t.equal(conflict.status, 409);
  t.same(conflict.body, { error: 'slug is already taken' });
  const live = await put({ status: 'live' });
  t.equal(live.status, 400);
  t.same(live.body, { error: 'status is changed with POST /api/advertiser/affiliate-programs/:id/go-live' });
  for (const [body, error] of [
    [{ name: '' }, 'name is required and must be 1 to 200 characters'],
    [{ name: null }, 'name cannot be null'],
    [{ cookie_window_days: null }, 'cookie_window_days cannot be null'],
    [
      { slug: 'Bad Slug' },
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    [{ cookie_window_days: 4000 }, 'cookie_window_days must be an integer from 1 to 3650'],
    [{ currency: 'ABC' }, 'currency must be an ISO 4217 currency code'],
    [{ commission: { type: 'percentage' } }, 'percent must be a number from 0 to 100 (at most 4 decimals)'],
    [{ allowed_origins: ['https://x.example/a'] }, /^allowed_origins\[0\] must be an origin/],
  ] as [unknown, string | RegExp][]) {
    const res = await put(body);
    t.equal(res.status, 400, JSON.stringify(body));
    if (typeof error === 'string') t.same(res.body, { error }, JSON.stringify(body));
    else t.match(res.body.error, error);
  }
  const [row] = await sql`select name, slug from programs where id = ${p.id}`;
  t.same(row, { name: 'Edited', slug }, 'rejected updates changed nothing');
});

t.test('go-live: draft to live; again is 200 unchanged', async (t) => {
  const p = (await create(owner, { name: 'Launch' })).data;
  const first = await send('POST', `${programs}/${p.id}/go-live`, undefined, bearer(owner.session));
  t.equal(first.status, 200);
  t.match(first.body.data, { id: p.id, status: 'live' });
  const second = await send('POST', `${programs}/${p.id}/go-live`, {}, bearer(owner.session));
  t.equal(second.status, 200);
  t.same(second.body.data, first.body.data);
  const key = await apiKey(owner, ['program:read', 'program:update']);
  const noScope = await send('POST', `${programs}/${p.id}/go-live`, undefined, bearer(key));
  t.equal(noScope.status, 403);
  t.same(noScope.body, { error: 'API key lacks scope program:go_live' });
});

t.test('regenerate: the old token is dead at the ingress within seconds, the new one works', async (t) => {
  const p = (await create(owner, { name: 'Rotate' })).data;
  const oldToken = p.api_token!;
  const sale = (token: string) =>
    postJson(
      url('/api/v1/track/sale'),
      { transaction_id: `t-${randomBytes(4).toString('hex')}` },
      bearer(token),
    );
  // Warm the ingress cache with the old token.
  t.equal((await getJson(url('/api/v1/cli/status'), bearer(oldToken))).status, 200);
  t.equal((await sale(oldToken)).status, 400, 'old token accepted before (the body is what is wrong)');

  const r = await send('POST', `${programs}/${p.id}/regenerate-api-token`, undefined, bearer(owner.session));
  t.equal(r.status, 200, r.text);
  const data = r.body.data as { api_token: string; api_token_masked: string };
  t.same(Object.keys(data).sort(), ['api_token', 'api_token_masked']);
  t.match(data.api_token, /^aff_/);
  t.not(data.api_token, oldToken);
  t.equal(data.api_token_masked, maskSecret(data.api_token));
  const started = Date.now();
  await waitFor(
    'old token rejected by the sale endpoint',
    async () => (await sale(oldToken)).status === 401,
    5000,
    50,
  );
  t.ok(Date.now() - started < 5000, `old token dead after ${Date.now() - started} ms`);
  t.equal((await getJson(url('/api/v1/cli/status'), bearer(oldToken))).status, 401);
  const now = await getJson(url('/api/v1/cli/status'), bearer(data.api_token));
  t.equal(now.status, 200);
  t.equal(now.body.api_token_masked, data.api_token_masked);
  const got = await getJson(`${programs}/${p.id}`, bearer(owner.session));
  t.equal((got.body.data as ProgramBody).api_token_masked, data.api_token_masked);
  t.notOk(got.text.includes(data.api_token), 'GET shows only the masked new token');
  t.notOk((await getJson(programs, bearer(owner.session))).text.includes(data.api_token));
  const key = await apiKey(owner, ['program:update']);
  const noScope = await send('POST', `${programs}/${p.id}/regenerate-api-token`, undefined, bearer(key));
  t.same(noScope.body, { error: 'API key lacks scope program:regenerate-token' });
});

t.test('delete: soft; the program is gone from the API and its token is 401 at the ingress', async (t) => {
  const p = (await create(owner, { name: 'Doomed' })).data;
  t.equal((await getJson(url('/api/v1/cli/status'), bearer(p.api_token!))).status, 200, 'cached as live');
  const r = await send('DELETE', `${programs}/${p.id}`, undefined, bearer(owner.session));
  t.equal(r.status, 204);
  t.equal(r.text, '');
  const [row] = await sql<{ deleted: boolean }[]>`
    select deleted_at is not null as deleted from programs where id = ${p.id}`;
  t.same(row, { deleted: true }, 'the row is kept, marked deleted');
  t.equal(
    (await getJson(url('/api/v1/cli/status'), bearer(p.api_token!))).status,
    401,
    'status: dead at once',
  );
  // A command is refused by its worker at once (token-regenerate.test.ts); the ingress's own 401, before the
  // body's 400, comes with its cache's next poll.
  await waitFor(
    'deleted token rejected by the ingress',
    async () =>
      (
        await postJson(
          url('/api/v1/track/sale'),
          { transaction_id: 'x', amount_cents: 100 },
          bearer(p.api_token!),
        )
      ).status === 401,
    5000,
    50,
  );
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: 'x', amount_cents: 100 },
    bearer(p.api_token!),
  );
  t.equal(s.status, 401);
  t.equal((await getJson(`${programs}/${p.id}`, bearer(owner.session))).status, 404);
  t.notOk(
    ((await getJson(programs, bearer(owner.session))).body.data as ProgramBody[]).some((x) => x.id === p.id),
    'not listed',
  );
  const again = await send('DELETE', `${programs}/${p.id}`, undefined, bearer(owner.session));
  t.equal(again.status, 404);
  t.same(again.body, { error: 'Program not found' });
});

t.test('the OpenAPI document lists the management routes', async (t) => {
  const doc = (await getJson(url('/api/v1/openapi.json'))).body as { paths: Record<string, unknown> };
  for (const path of [
    '/api/advertiser/affiliate-programs',
    '/api/advertiser/affiliate-programs/{id}',
    '/api/advertiser/affiliate-programs/{id}/go-live',
    '/api/advertiser/affiliate-programs/{id}/regenerate-api-token',
    '/api/advertiser/processor-connection',
  ]) {
    t.ok(doc.paths[path], path);
  }
});

// ---- processor connection (workspace level) ----

t.test('processor connection: secret on connect, connected_at once, GET without the secret', async (t) => {
  const u = await signup(svc);
  const path = url('/api/advertiser/processor-connection');
  const empty = await getJson(path, bearer(u.session));
  t.equal(empty.status, 200);
  t.same(empty.body.data, {
    status: 'pending',
    account_id: null,
    charges_enabled: false,
    payouts_enabled: false,
    details_submitted: false,
    connected_at: null,
    webhook_secret_masked: null,
  });

  const pending = await send('PUT', path, { status: 'pending', account_id: 'acct_123' }, bearer(u.session));
  t.equal(pending.status, 200, pending.text);
  const secret = (pending.body.data as { webhook_secret: string }).webhook_secret;
  t.match(secret, /^whsec_[A-Za-z0-9_-]{32}$/);
  t.match(pending.body.data, { status: 'pending', account_id: 'acct_123', connected_at: null });

  const connected = await send(
    'PUT',
    path,
    {
      status: 'connected',
      account_id: 'acct_123',
      charges_enabled: true,
      payouts_enabled: true,
      details_submitted: true,
    },
    bearer(u.session),
  );
  t.equal(connected.status, 200);
  const c = connected.body.data as Record<string, unknown>;
  t.match(c, {
    status: 'connected',
    account_id: 'acct_123',
    charges_enabled: true,
    payouts_enabled: true,
    details_submitted: true,
    webhook_secret: secret,
  });
  t.ok(Date.parse(c.connected_at as string) > Date.now() - 60_000, 'connected_at set');

  const restricted = await send(
    'PUT',
    path,
    { status: 'restricted', account_id: 'acct_123' },
    bearer(u.session),
  );
  t.match(restricted.body.data, {
    status: 'restricted',
    charges_enabled: false,
    connected_at: c.connected_at,
    webhook_secret: secret,
  });
  const reconnected = await send(
    'PUT',
    path,
    { status: 'connected', account_id: 'acct_123' },
    bearer(u.session),
  );
  t.equal(
    (reconnected.body.data as Record<string, unknown>).connected_at,
    c.connected_at,
    'first connection kept',
  );

  const got = await getJson(path, bearer(u.session));
  t.equal(got.status, 200);
  t.notOk(got.text.includes(secret), 'GET never carries the secret');
  t.match(got.body.data, { status: 'connected', webhook_secret_masked: maskSecret(secret) });
  t.notOk('webhook_secret' in (got.body.data as object));
  const [row] =
    await sql`select webhook_secret from processor_connections where workspace_id = ${u.workspaceId}`;
  t.equal(row!.webhook_secret, secret);

  for (const [body, error] of [
    [{}, 'status must be one of pending, connected, restricted, disconnected'],
    [{ status: 'live' }, 'status must be one of pending, connected, restricted, disconnected'],
    [{ status: 'connected', account_id: 5 }, 'account_id must be a string of 1 to 255 characters or null'],
    [{ status: 'connected', account_id: '' }, 'account_id must be a string of 1 to 255 characters or null'],
    [{ status: 'connected', charges_enabled: 'yes' }, 'charges_enabled must be a boolean'],
    [{ status: 'connected', payouts_enabled: 1 }, 'payouts_enabled must be a boolean'],
    [{ status: 'connected', details_submitted: 'true' }, 'details_submitted must be a boolean'],
    [{ status: 'connected', workspace_id: 'x' }, 'workspace_id must be a positive integer'],
  ] as [unknown, string][]) {
    const r = await send('PUT', path, body, bearer(u.session));
    t.equal(r.status, 400, JSON.stringify(body));
    t.same(r.body, { error }, JSON.stringify(body));
  }
  t.same((await getJson(`${path}?workspace_id=abc`, bearer(u.session))).body, {
    error: 'workspace_id must be a positive integer',
  });

  // Roles and keys: members read, only program:update writes; another workspace is 404.
  const member = await memberOf(svc, sql, u.workspaceId, 'member');
  t.equal((await getJson(`${path}?workspace_id=${u.workspaceId}`, bearer(member.session))).status, 200);
  const memberPut = await send(
    'PUT',
    path,
    { status: 'disconnected', workspace_id: u.workspaceId },
    bearer(member.session),
  );
  t.equal(memberPut.status, 403);
  t.same(memberPut.body, { error: 'Your role (member) lacks permission program:update' });
  const readKey = await apiKey(u, ['program:read']);
  t.equal((await getJson(path, bearer(readKey))).status, 200);
  const keyPut = await send('PUT', path, { status: 'disconnected' }, bearer(readKey));
  t.same(keyPut.body, { error: 'API key lacks scope program:update' });
  const writeKey = await apiKey(u, ['program:update']);
  const byKey = await send('PUT', path, { status: 'connected', account_id: 'acct_9' }, bearer(writeKey));
  t.equal(byKey.status, 200);
  t.equal(
    (byKey.body.data as Record<string, unknown>).webhook_secret,
    secret,
    'same secret for the workspace',
  );
  const stranger = await signup(svc);
  const foreign = await send(
    'PUT',
    path,
    { status: 'connected', workspace_id: u.workspaceId },
    bearer(stranger.session),
  );
  t.equal(foreign.status, 404);
  t.same(foreign.body, { error: 'Workspace not found' });
  const strangerOwn = await getJson(path, bearer(stranger.session));
  t.equal((strangerOwn.body.data as Record<string, unknown>).status, 'pending', 'each workspace its own');

  // The status endpoint's payments block reads this row (if the dashboard routes are present).
  const program = await createProgram(sql, { workspaceId: u.workspaceId });
  const status = await getJson(url(`/api/tracking/status/${program.id}`), bearer(u.session));
  if (status.status === 200) {
    t.match(status.body.data, {
      stepStatuses: { payments: 'complete' },
      statistics: { payments: { processorConnectionStatus: 'connected', processorAccountId: 'acct_9' } },
    });
  }
});
