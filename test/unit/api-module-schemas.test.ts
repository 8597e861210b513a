// The management modules' schemas answer exactly the 400s the hand validation did, in the same order,
// with no Postgres: the routes run on a small Fastify app whose caller is a `*` key of workspace 1, and
// whose only SQL answer is "program 1 is in workspace 1" (what the access check asks).
import t from 'tap';
import Fastify from 'fastify';
import { installJsonHandling } from '../../shared/http/server.ts';
import { typeBoxValidator } from '../../shared/http/validation.ts';
import type { Sql } from '../../shared/db/sql.ts';
import { registerProgramRoutes } from '../../services/api/modules/programs/routes.ts';
import { registerPartnerRoutes } from '../../services/api/modules/partners/routes.ts';
import { registerLinkRoutes } from '../../services/api/modules/links/routes.ts';
import { registerCommissionRoutes } from '../../services/api/modules/commissions/routes.ts';
import { registerProcessorRoutes } from '../../services/api/modules/processor/routes.ts';

// A thenable: fragments (sql``) that are never awaited must not reject on their own.
const fakeSql = ((strings: TemplateStringsArray) => ({
  then(resolve: (rows: unknown[]) => void, reject: (err: Error) => void) {
    if (strings.join('?').includes('select workspace_id from programs')) resolve([{ workspace_id: '1' }]);
    else reject(new Error('no database in this test'));
  },
})) as unknown as Sql;

async function build() {
  const app = Fastify();
  installJsonHandling(app);
  app.setValidatorCompiler(typeBoxValidator);
  app.addHook('onRequest', async (req) => {
    req.principal = {
      kind: 'api_key',
      keyId: 1,
      workspaceId: 1,
      userId: 1,
      scopes: ['*'],
      programScope: null,
    };
  });
  const deps = { sql: fakeSql, sessionTtlHours: 1, kafkaPrefix: 'svc.', publicUrl: 'http://127.0.0.1:8080' };
  for (const register of [
    registerProgramRoutes,
    registerPartnerRoutes,
    registerLinkRoutes,
    registerCommissionRoutes,
    registerProcessorRoutes,
  ]) {
    register(app, deps);
  }
  await app.ready();
  return app;
}

const P = '/api/advertiser/affiliate-programs';
const origin = (i: number) =>
  `allowed_origins[${i}] must be an origin such as https://shop.example.com (http or https, host and optional port; no path, query or wildcard)`;

t.test('module schemas: the exact 400 strings and their precedence', async (t) => {
  const app = await build();
  t.teardown(() => app.close());
  const call = async (method: 'POST' | 'PUT' | 'GET', url: string, body?: unknown) => {
    const r = await app.inject({
      method,
      url,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
    });
    return { status: r.statusCode, error: (r.json() as { error?: string }).error };
  };
  const cases: [string, 'POST' | 'PUT' | 'GET', string, unknown, number, string | undefined][] = [
    // programs: create
    ['no name', 'POST', P, {}, 400, 'name is required and must be 1 to 200 characters'],
    ['blank name', 'POST', P, { name: '  ' }, 400, 'name is required and must be 1 to 200 characters'],
    [
      'bad slug',
      'POST',
      P,
      { name: 'A', slug: 'Bad Slug' },
      400,
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    [
      'window',
      'POST',
      P,
      { name: 'A', cookie_window_days: 0 },
      400,
      'cookie_window_days must be an integer from 1 to 3650',
    ],
    [
      'currency',
      'POST',
      P,
      { name: 'A', currency: 'ABC' },
      400,
      'currency must be an ISO 4217 currency code',
    ],
    [
      'currency type',
      'POST',
      P,
      { name: 'A', currency: 5 },
      400,
      'currency must be an ISO 4217 currency code',
    ],
    [
      'policy',
      'POST',
      P,
      { name: 'A', commission: { type: 'percentage' } },
      400,
      'percent must be a number from 0 to 100 (at most 4 decimals)',
    ],
    ['policy type', 'POST', P, { name: 'A', commission: 'x' }, 400, 'commission must be an object'],
    [
      'origin',
      'POST',
      P,
      { name: 'A', allowed_origins: ['https://ok.example', 'a.example'] },
      400,
      origin(1),
    ],
    [
      'workspace',
      'POST',
      P,
      { name: 'A', workspace_id: 'one' },
      400,
      'workspace_id must be a positive integer',
    ],
    [
      'workspace query first',
      'POST',
      `${P}?workspace_id=x`,
      { name: '' },
      400,
      'workspace_id must be a positive integer',
    ],
    ['not an object', 'POST', P, [1], 400, 'Request body must be a JSON object'],
    [
      'name before currency',
      'POST',
      P,
      { currency: 'ABC', name: '' },
      400,
      'name is required and must be 1 to 200 characters',
    ],
    [
      'currency before origins',
      'POST',
      P,
      { allowed_origins: 'x', currency: 'ABC', name: 'A' },
      400,
      'currency must be an ISO 4217 currency code',
    ],
    // programs: update
    [
      'null in order',
      'PUT',
      `${P}/1`,
      { name: null, cookie_window_days: null },
      400,
      'cookie_window_days cannot be null',
    ],
    [
      'status',
      'PUT',
      `${P}/1`,
      { status: 'paused' },
      400,
      'status is changed with POST /api/advertiser/affiliate-programs/:id/go-live',
    ],
    [
      'fields before status',
      'PUT',
      `${P}/1`,
      { status: 'paused', slug: 'A' },
      400,
      'slug must be 1 to 63 lowercase letters, digits or dashes, starting with a letter or digit',
    ],
    ['malformed id is 404 first', 'PUT', `${P}/abc`, { slug: 'A' }, 404, 'Program not found'],
    // partners
    [
      'partner name',
      'POST',
      `${P}/1/partners`,
      { email: 'a@b.co' },
      400,
      'name is required and must be 1 to 200 characters',
    ],
    [
      'partner email',
      'POST',
      `${P}/1/partners`,
      { name: 'A', email: 'not-an-email' },
      400,
      'email must be a valid email address',
    ],
    [
      'partner long email',
      'POST',
      `${P}/1/partners`,
      { name: 'A', email: `${'x'.repeat(316)}@b.co` },
      400,
      'email must be a valid email address',
    ],
    [
      'partner status',
      'POST',
      `${P}/1/partners`,
      { name: 'A', email: 'a@b.co', status: 'active' },
      400,
      "status must be 'approved' or 'pending'",
    ],
    // links
    [
      'short link',
      'POST',
      `${P}/1/partners/2/links`,
      { short_link: 'a/b' },
      400,
      'short_link must be 1 to 64 characters: letters, digits, _ or -',
    ],
    ['link status', 'PUT', `${P}/1/partners/2/links/3`, {}, 400, "status must be 'active' or 'inactive'"],
    [
      'link status null',
      'PUT',
      `${P}/1/partners/2/links/3`,
      { status: null },
      400,
      "status must be 'active' or 'inactive'",
    ],
    ['link id', 'PUT', `${P}/1/partners/2/links/abc`, { status: 'active' }, 404, 'Referral link not found'],
    // commissions
    [
      'commission status',
      'GET',
      `${P}/1/commissions?status=`,
      undefined,
      400,
      'status must be one of pending, approved, paid, reversed, refunded, review',
    ],
    [
      'limit',
      'GET',
      `${P}/1/commissions?limit=1001`,
      undefined,
      400,
      'limit must be an integer from 1 to 1000',
    ],
    [
      'offset',
      'GET',
      `${P}/1/commissions?offset=-1`,
      undefined,
      400,
      'offset must be a non-negative integer',
    ],
    [
      'commission id',
      'POST',
      '/api/advertiser/commissions/abc/mark-paid',
      undefined,
      404,
      'Commission not found',
    ],
    // processor connection
    [
      'processor status',
      'PUT',
      '/api/advertiser/processor-connection',
      {},
      400,
      'status must be one of pending, connected, restricted, disconnected',
    ],
    [
      'account',
      'PUT',
      '/api/advertiser/processor-connection',
      { status: 'connected', account_id: ' ' },
      400,
      'account_id must be a string of 1 to 255 characters or null',
    ],
    [
      'flag',
      'PUT',
      '/api/advertiser/processor-connection',
      { status: 'connected', payouts_enabled: 1 },
      400,
      'payouts_enabled must be a boolean',
    ],
    [
      'processor workspace first',
      'PUT',
      '/api/advertiser/processor-connection',
      { workspace_id: 'x' },
      400,
      'workspace_id must be a positive integer',
    ],
    [
      'processor query',
      'GET',
      '/api/advertiser/processor-connection?workspace_id=0',
      undefined,
      400,
      'workspace_id must be a positive integer',
    ],
  ];
  for (const [name, method, url, body, status, error] of cases) {
    t.same(await call(method, url, body), { status, error }, name);
  }
  // Valid input passes the schemas and reaches the database (which this test does not have).
  t.equal((await call('POST', P, { name: 'A', currency: ' usd ', commission: null })).status, 500);
  t.equal((await call('GET', `${P}/1/commissions?status=paid&limit=5&offset=0`)).status, 500);
});

t.test('the OpenAPI document keeps every path and shows the constraints the schemas check', async (t) => {
  const { buildWebApp } = await import('../../services/web/app.ts');
  const { createLogger } = await import('../../shared/logger.ts');
  const app = await buildWebApp({ trustProxy: false, bodyLimit: 1 << 20 }, createLogger('test', 'error'), {
    api: { sql: fakeSql, sessionTtlHours: 1, kafkaPrefix: 'svc.', publicUrl: 'http://127.0.0.1:8080' },
  });
  t.teardown(() => app.close());
  const doc = (await app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const paths = doc.paths as Record<
    string,
    Record<string, { requestBody?: unknown; parameters?: unknown[] }>
  >;
  const ops = Object.entries(paths).flatMap(([p, v]) => Object.keys(v).map((m) => `${m} ${p}`));
  for (const op of [
    'get /api/advertiser/affiliate-programs',
    'post /api/advertiser/affiliate-programs',
    'get /api/advertiser/affiliate-programs/{id}',
    'put /api/advertiser/affiliate-programs/{id}',
    'delete /api/advertiser/affiliate-programs/{id}',
    'post /api/advertiser/affiliate-programs/{id}/go-live',
    'post /api/advertiser/affiliate-programs/{id}/regenerate-api-token',
    'post /api/advertiser/affiliate-programs/{id}/partners',
    'get /api/advertiser/affiliate-programs/{id}/partners',
    'post /api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links',
    'get /api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links',
    'put /api/advertiser/affiliate-programs/{id}/partners/{partnerId}/links/{linkId}',
    'get /api/advertiser/affiliate-programs/{id}/commissions',
    'post /api/advertiser/commissions/{id}/mark-paid',
    'put /api/advertiser/processor-connection',
    'get /api/advertiser/processor-connection',
    'get /api/advertiser/members',
    'post /api/advertiser/members',
    'put /api/advertiser/members/{userId}',
    'delete /api/advertiser/members/{userId}',
    'post /api/advertiser/api-keys',
    'get /api/advertiser/api-keys',
    'put /api/advertiser/api-keys/{id}',
    'delete /api/advertiser/api-keys/{id}',
    'post /api/auth/signup',
    'post /api/auth/login',
    'post /api/auth/logout',
    'get /api/tracking/status/{programId}',
    'get /api/tracking/events/{programId}',
    'get /api/tracking/performance/{programId}',
  ]) {
    t.ok(ops.includes(op), op);
  }
  const body = (op: { requestBody?: unknown }) =>
    (op.requestBody as { content: Record<string, { schema: Record<string, unknown> }> }).content[
      'application/json'
    ]!.schema;
  const create = body(paths['/api/advertiser/affiliate-programs']!.post!);
  t.same(create.required, ['name']);
  t.match(create.properties, {
    name: { type: 'string', pattern: String },
    slug: { anyOf: [{ pattern: String }] },
  });
  t.match(body(paths['/api/advertiser/affiliate-programs/{id}/partners']!.post!).properties, {
    status: { anyOf: [{ enum: ['approved', 'pending'] }] },
  });
  t.match(paths['/api/advertiser/affiliate-programs/{id}/commissions']!.get!.parameters, [
    { name: 'status', schema: { enum: ['pending', 'approved', 'paid', 'reversed', 'refunded'] } },
    { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
    { name: 'offset', schema: { type: 'integer', minimum: 0 } },
  ]);
  // Members, API keys and auth: the constraints their schemas check.
  const addMember = body(paths['/api/advertiser/members']!.post!);
  t.same(addMember.required, ['email', 'role']);
  t.match(addMember.properties, { role: { enum: ['owner', 'admin', 'member', 'viewer'] } });
  const createKey = body(paths['/api/advertiser/api-keys']!.post!);
  t.same(createKey.required, ['name']);
  t.match(createKey.properties, {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    scopes: { type: 'array', minItems: 1, items: { enum: Array } },
    expires_at: { format: 'date-time' },
  });
  const signup = body(paths['/api/auth/signup']!.post!);
  t.same(signup.required, ['email', 'password']);
  t.match(signup.properties, {
    email: { format: 'email', maxLength: 320 },
    password: { minLength: 10, maxLength: 1024 },
  });
});

// Members, API keys, auth and the dashboard reads: the caller is an owner's session of workspace 1 (and of
// its program 1); the only SQL answers are that membership and "key 5 is an active key of workspace 1".
const sessionSql = ((strings: TemplateStringsArray) => ({
  then(resolve: (rows: unknown[]) => void, reject: (err: Error) => void) {
    const text = strings.join('?');
    if (text.includes('from memberships') || text.includes('left join memberships'))
      resolve([{ workspace_id: '1', role: 'owner', status: 'active' }]);
    else if (text.includes('from api_keys where id ='))
      resolve([{ id: '5', workspace_id: '1', status: 'active' }]);
    else reject(new Error('no database in this test'));
  },
})) as unknown as Sql;

t.test('members, API keys, auth and dashboard: the exact 400 strings and their precedence', async (t) => {
  const { registerDashboardRoutes } = await import('../../services/api/modules/dashboard/routes.ts');
  const { registerMemberRoutes } = await import('../../services/api/modules/members/routes.ts');
  const { registerApiKeyRoutes } = await import('../../services/api/modules/api-keys/routes.ts');
  const { registerAuthRoutes } = await import('../../services/api/modules/auth/routes.ts');
  const app = Fastify();
  installJsonHandling(app);
  app.setValidatorCompiler(typeBoxValidator);
  app.addHook('onRequest', async (req) => {
    if (!req.url.startsWith('/api/auth/')) req.principal = { kind: 'session', userId: 1, sessionId: 1 };
  });
  const deps = {
    sql: sessionSql,
    sessionTtlHours: 1,
    kafkaPrefix: 'svc.',
    publicUrl: 'http://127.0.0.1:8080',
  };
  for (const register of [
    registerMemberRoutes,
    registerApiKeyRoutes,
    registerAuthRoutes,
    registerDashboardRoutes,
  ])
    register(app, deps);
  await app.ready();
  t.teardown(() => app.close());
  const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) => {
    const r = await app.inject({
      method,
      url,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) }),
    });
    return { status: r.statusCode, error: (r.json() as { error?: string }).error };
  };
  const M = '/api/advertiser/members';
  const K = '/api/advertiser/api-keys';
  const scopesList =
    '*, program:list, program:read, program:create, program:update, program:delete, program:go_live, program:regenerate-token, dashboard:view, ' +
    'partners:read, partners:write, payouts:read, payouts:write, webhooks:read, webhooks:write';
  const E = '/api/tracking/events/1';
  const PF = '/api/tracking/performance/1';
  const date = (name: string) =>
    `${name} must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)`;
  const cases: [string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown, string][] = [
    // dashboard: events
    ['events repeated first', 'GET', `${E}?page=0&x=1&x=2`, undefined, 'x must be given once'],
    [
      'events page first',
      'GET',
      `${E}?page=0&pageSize=0&eventType=sale`,
      undefined,
      'page must be an integer of at least 1',
    ],
    ['events page decimal', 'GET', `${E}?page=2.0`, undefined, 'page must be an integer of at least 1'],
    [
      'events page huge',
      'GET',
      `${E}?page=9999999999999999`,
      undefined,
      'page must be an integer of at least 1',
    ],
    [
      'events pageSize',
      'GET',
      `${E}?pageSize=101&eventType=sale`,
      undefined,
      'pageSize must be an integer between 1 and 100',
    ],
    [
      'events pageSize empty',
      'GET',
      `${E}?pageSize=`,
      undefined,
      'pageSize must be an integer between 1 and 100',
    ],
    [
      'events eventType',
      'GET',
      `${E}?eventType=CLICK&dateFrom=x`,
      undefined,
      'eventType must be one of click, lead, conversion (or all)',
    ],
    ['events dateFrom', 'GET', `${E}?dateTo=y&dateFrom=x`, undefined, date('dateFrom')],
    ['events dateTo', 'GET', `${E}?dateFrom=2025-01-02&dateTo=2025-13-01`, undefined, date('dateTo')],
    [
      'events order',
      'GET',
      `${E}?dateFrom=2025-01-02&dateTo=2025-01-01`,
      undefined,
      'dateFrom must not be after dateTo',
    ],
    // dashboard: performance
    ['performance repeated', 'GET', `${PF}?period=7d&period=30d`, undefined, 'period must be given once'],
    ['performance period', 'GET', `${PF}?period=14d`, undefined, 'period must be one of 7d, 30d, 90d, all'],
    [
      'performance together',
      'GET',
      `${PF}?dateFrom=x&period=14d`,
      undefined,
      'dateFrom and dateTo must be given together',
    ],
    ['performance dateFrom', 'GET', `${PF}?dateFrom=x&dateTo=y&period=14d`, undefined, date('dateFrom')],
    ['performance dateTo', 'GET', `${PF}?dateFrom=2025-01-01&dateTo=y`, undefined, date('dateTo')],
    [
      'performance order',
      'GET',
      `${PF}?dateFrom=2025-01-02&dateTo=2025-01-01`,
      undefined,
      'dateFrom must not be after dateTo',
    ],
    [
      'performance length',
      'GET',
      `${PF}?dateFrom=2015-01-01&dateTo=2025-01-08`,
      undefined,
      'The date range must not exceed 3660 days',
    ],
    // members
    ['member no body', 'POST', M, undefined, 'Request body must be a JSON object'],
    ['member null body', 'POST', M, null, 'Request body must be a JSON object'],
    ['member array body', 'POST', M, [], 'Request body must be a JSON object'],
    ['member no email', 'POST', M, { role: 'x' }, 'email is required'],
    ['member blank email', 'POST', M, { email: '  ', role: 'x' }, 'email is required'],
    ['member email type', 'POST', M, { email: 5, role: 'x' }, 'email must be a string'],
    ['member no role', 'POST', M, { email: 'a@b.co' }, 'role is required'],
    ['member null role', 'POST', M, { email: 'a@b.co', role: null }, 'role is required'],
    [
      'member bad role',
      'POST',
      M,
      { email: 'a@b.co', role: 'root' },
      'role must be one of owner, admin, member, viewer',
    ],
    ['member workspace first', 'POST', M, { workspace_id: 'x' }, 'workspace_id must be a positive integer'],
    ['member query first', 'POST', `${M}?workspace_id=0`, {}, 'workspace_id must be a positive integer'],
    ['member userId first', 'PUT', `${M}/abc`, { role: 'x' }, 'userId must be a positive integer'],
    ['member userId zero', 'DELETE', `${M}/0`, undefined, 'userId must be a positive integer'],
    ['member put no body', 'PUT', `${M}/2`, undefined, 'Request body must be a JSON object'],
    ['member put no role', 'PUT', `${M}/2`, {}, 'role is required'],
    [
      'member put bad role',
      'PUT',
      `${M}/007`,
      { role: 7 },
      'role must be one of owner, admin, member, viewer',
    ],
    // API keys: create
    ['key no body', 'POST', K, undefined, 'Request body must be a JSON object'],
    ['key string body', 'POST', K, 'x', 'Request body must be a JSON object'],
    ['key no name', 'POST', K, { scopes: [] }, 'name is required'],
    ['key blank name', 'POST', K, { name: ' ', scopes: [] }, 'name must be a string of 1 to 200 characters'],
    ['key long name', 'POST', K, { name: 'x'.repeat(201) }, 'name must be a string of 1 to 200 characters'],
    [
      'key scopes before expiry',
      'POST',
      K,
      { name: 'k', scopes: [], expires_at: 'x' },
      'scopes must be a non-empty array of strings',
    ],
    [
      'key unknown scope',
      'POST',
      K,
      { name: 'k', scopes: ['*', 'nope'] },
      `Unknown scope: nope. Allowed: ${scopesList}`,
    ],
    [
      'key expiry before program_scope',
      'POST',
      K,
      { name: 'k', expires_at: '2000-01-01T00:00:00Z', program_scope: [] },
      'expires_at must be in the future',
    ],
    [
      'key expiry format',
      'POST',
      K,
      { name: 'k', expires_at: '2999-01-01' },
      'expires_at must be an ISO 8601 datetime with a time zone, or null',
    ],
    [
      'key program_scope',
      'POST',
      K,
      { name: 'k', program_scope: 'all' },
      'program_scope must be null or a non-empty array of program ids',
    ],
    [
      'key program id',
      'POST',
      K,
      { name: 'k', program_scope: [1, '0'] },
      'program_scope has an invalid program id: "0"',
    ],
    [
      'key workspace first',
      'POST',
      K,
      { name: 7, workspace_id: 0 },
      'workspace_id must be a positive integer',
    ],
    // API keys: update
    ['key id first', 'PUT', `${K}/x`, {}, 'id must be a positive integer'],
    ['key put no body', 'PUT', `${K}/5`, undefined, 'Request body must be a JSON object'],
    [
      'key put expiry first',
      'PUT',
      `${K}/5`,
      { expires_at: null, name: 7 },
      'expires_at cannot be changed; create a new key instead',
    ],
    [
      'key put nothing',
      'PUT',
      `${K}/5`,
      { nam: 'typo' },
      'Nothing to update: send name, scopes or program_scope',
    ],
    ['key put name', 'PUT', `${K}/5`, { name: null, scopes: [] }, 'name is required'],
    [
      'key put scopes',
      'PUT',
      `${K}/5`,
      { scopes: [1], program_scope: [] },
      'scopes must be a non-empty array of strings',
    ],
    [
      'key put program id',
      'PUT',
      `${K}/5`,
      { program_scope: [1.5] },
      'program_scope has an invalid program id: 1.5',
    ],
    // auth
    ['signup no body', 'POST', '/api/auth/signup', undefined, 'Request body must be a JSON object'],
    ['signup array', 'POST', '/api/auth/signup', [], 'Request body must be a JSON object'],
    [
      'signup email',
      'POST',
      '/api/auth/signup',
      { email: 'a b@c.co', password: 1 },
      'email must be a valid email address',
    ],
    [
      'signup long email',
      'POST',
      '/api/auth/signup',
      { email: `${'a'.repeat(313)}@b.co.uk`, password: 'x'.repeat(10) },
      'email must be a valid email address',
    ],
    [
      'signup password',
      'POST',
      '/api/auth/signup',
      { email: ' a@b.co ', password: 'short', name: 5 },
      'password must be at least 10 characters',
    ],
    [
      'signup long password',
      'POST',
      '/api/auth/signup',
      { email: 'a@b.co', password: 'x'.repeat(1025) },
      'password must be at most 1024 characters',
    ],
    [
      'signup name',
      'POST',
      '/api/auth/signup',
      { email: 'a@b.co', password: 'x'.repeat(10), name: 5, workspace_name: 5 },
      'name must be a string of at most 200 characters',
    ],
    [
      'signup workspace name',
      'POST',
      '/api/auth/signup',
      { email: 'a@b.co', password: 'x'.repeat(10), name: null, workspace_name: 'x'.repeat(201) },
      'workspace_name must be a string of at most 200 characters',
    ],
    ['login no body', 'POST', '/api/auth/login', undefined, 'email and password are required'],
    ['login array', 'POST', '/api/auth/login', [], 'email and password are required'],
    ['login no password', 'POST', '/api/auth/login', { email: 'a@b.co' }, 'email and password are required'],
    [
      'login email type',
      'POST',
      '/api/auth/login',
      { email: 1, password: 'x' },
      'email and password are required',
    ],
  ];
  for (const [name, method, url, body, error] of cases) {
    t.same(await call(method, url, body), { status: 400, error }, name);
  }
  // Valid input passes the schemas and reaches the database (which this test does not have).
  t.equal((await call('POST', M, { email: ' a@b.co ', role: 'viewer' })).status, 500);
  t.equal((await call('PUT', `${K}/5`, { name: 'k', scopes: ['*'], program_scope: null })).status, 500);
  t.equal((await call('POST', '/api/auth/login', { email: 'a@b.co', password: '' })).status, 500);
  for (const q of ['?page=007&pageSize=100&eventType=all&dateFrom=2025-01-01&dateTo=2025-01-01', '?x=1']) {
    t.equal((await call('GET', `${E}${q}`)).status, 500, `events${q}`);
  }
  // With both dates, period is ignored (not validated); a repeated parameter on status is no 400.
  t.equal((await call('GET', `${PF}?dateFrom=2025-01-01&dateTo=2025-01-07&period=14d`)).status, 500);
  t.equal((await call('GET', '/api/tracking/status/1?a=1&a=2')).status, 500);
});
