// The webhook endpoints API (CONTRACT "Webhooks to integrators"): every bad input a clear 400, the SSRF rules
// at registration for each refused address class (names pinned with WEBHOOK_RESOLVE, IP literals as they
// are), the scopes and roles (member and viewer have no webhooks:read), updates, disabling and enabling,
// deletion. Delivery-time SSRF and the worker are in webhooks-ssrf.test.ts and webhooks-faults.test.ts.
import t from 'tap';
import { createProgram, postJson, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';

const sql = testSql(t);
const resolve = {
  'public.test': '93.184.216.34',
  'loop.test': '127.0.0.1',
  'private.test': '10.1.2.3',
  'private6.test': 'fd12::1',
  'linklocal.test': '169.254.10.10',
  'cgnat.test': '100.64.1.1',
  'meta.test': '169.254.169.254',
  'zero.test': '0.0.0.0',
  'mapped.test': '::ffff:192.168.0.1',
};
const svc = await startServices(t, ['web'], {
  WEBHOOK_RESOLVE: Object.entries(resolve)
    .map(([k, v]) => `${k}=${v}`)
    .join(','),
});
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const auth = bearer(owner.session);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
const elsewhere = await createProgram(sql);
const create = (body: unknown, headers = auth) => postJson(url('/api/advertiser/webhooks'), body, headers);
const error = async (body: unknown) => {
  const r = await create(body);
  return [r.status, r.body.error];
};

t.test('registration: each bad input is a 400 with its message', async (t) => {
  t.same(await error({}), [400, 'url must be an absolute https:// URL of at most 2048 characters']);
  t.same(await error({ url: 5 }), [400, 'url must be an absolute https:// URL of at most 2048 characters']);
  t.same(await error({ url: 'nope' }), [400, 'url must be an absolute https:// URL']);
  t.same(await error({ url: 'http://public.test/hook' }), [400, 'url must be an https:// URL']);
  t.same(await error({ url: 'https://u:p@public.test/' }), [
    400,
    'url must not contain a user name or password',
  ]);
  t.same(await error({ url: `https://public.test/${'x'.repeat(2100)}` }), [
    400,
    'url must be an absolute https:// URL of at most 2048 characters',
  ]);
  t.same(await error({ url: 'https://public.test/', events: ['sale.deleted'] }), [
    400,
    'Unknown event type: sale.deleted. Allowed: *, lead.created, sale.created, sale.refunded, commission.created, commission.updated, partner.created, partner.applied, partner.approved, partner.group_changed, payout.created, payout.paid, webhook.test',
  ]);
  t.same(await error({ url: 'https://public.test/', events: [] }), [
    400,
    'events must be a non-empty array of event types (or ["*"])',
  ]);
  t.same(await error({ url: 'https://public.test/', program_ids: [elsewhere.id] }), [
    400,
    `program_ids has a program not in this workspace: ${elsewhere.id}`,
  ]);
  t.same(await error({ url: 'https://public.test/', program_ids: ['x'] }), [
    400,
    'program_ids has an invalid program id: "x"',
  ]);
  t.same(await error({ url: 'https://public.test/', description: 'd'.repeat(501) }), [
    400,
    'description must be a string of at most 500 characters or null',
  ]);
  t.same(await error({ url: 'https://public.test/', workspace_id: 'abc' }), [
    400,
    'workspace_id must be a positive integer',
  ]);
  const notJson = await postJson(url('/api/advertiser/webhooks'), '{', auth);
  t.same([notJson.status, notJson.body.error], [400, 'Invalid JSON body']);
});

t.test('registration: every refused address class, by name and by literal', async (t) => {
  const classes: [string, string][] = [
    ['loop.test', 'loopback'],
    ['private.test', 'private'],
    ['private6.test', 'private'],
    ['linklocal.test', 'link-local'],
    ['cgnat.test', 'carrier-grade NAT'],
    ['meta.test', 'cloud metadata'],
    ['zero.test', 'unspecified'],
    ['mapped.test', 'private'],
  ];
  for (const [host, cls] of classes) {
    t.same(
      await error({ url: `https://${host}/hook` }),
      [
        400,
        `url host ${host} resolves to a ${cls} address (${resolve[host as keyof typeof resolve]}): webhooks are only sent to public addresses`,
      ],
      cls,
    );
  }
  for (const [literal, host, cls] of [
    ['127.0.0.1', '127.0.0.1', 'loopback'],
    ['[::1]', '::1', 'loopback'],
    ['10.0.0.1', '10.0.0.1', 'private'],
    ['192.168.1.10', '192.168.1.10', 'private'],
    ['172.20.0.1', '172.20.0.1', 'private'],
    ['169.254.169.254', '169.254.169.254', 'cloud metadata'],
    ['[fd00:ec2::254]', 'fd00:ec2::254', 'cloud metadata'],
    ['[fe80::1]', 'fe80::1', 'link-local'],
    ['100.100.0.1', '100.100.0.1', 'carrier-grade NAT'],
  ]) {
    t.same(
      await error({ url: `https://${literal}:8443/hook` }),
      [400, `url host ${host} is a ${cls} address: webhooks are only sent to public addresses`],
      literal!,
    );
  }
  t.same(await error({ url: 'https://metadata.google.internal/computeMetadata/v1/' }), [
    400,
    'url host metadata.google.internal is refused: webhooks are never sent to this machine or a metadata service',
  ]);
  t.same(await error({ url: 'https://localhost:8443/' }), [
    400,
    'url host localhost is refused: webhooks are never sent to this machine or a metadata service',
  ]);
  const ok = await create({
    url: 'https://public.test/hook',
    program_ids: [program.id],
    events: ['sale.created'],
  });
  t.equal(ok.status, 201, 'a public address is accepted');
  t.match(ok.body.data, {
    url: 'https://public.test/hook',
    program_ids: [program.id],
    events: ['sale.created'],
    status: 'enabled',
    secret: /^whsec_/,
  });
});

t.test('reads never show the secret; updates, disabling, enabling, deleting', async (t) => {
  const made = await create({ url: 'https://public.test/a', description: ' first ' });
  const ep = made.body.data as { id: number; secret: string };
  const list = await getJson(url('/api/advertiser/webhooks'), auth);
  t.notOk(list.text.includes('whsec_'), 'no secret in the list');
  const one = await getJson(url(`/api/advertiser/webhooks/${ep.id}`), auth);
  t.notOk(one.text.includes('whsec_'), 'nor in a read');
  t.match(one.body.data, { id: ep.id, description: 'first', events: ['*'], program_ids: null });

  const path = url(`/api/advertiser/webhooks/${ep.id}`);
  t.same((await send('PUT', path, { url: 'http://public.test/' }, auth)).body, {
    error: 'url must be an https:// URL',
  });
  t.same((await send('PUT', path, { url: 'https://loop.test/' }, auth)).status, 400);
  t.same((await send('PUT', path, { status: 'paused' }, auth)).body, {
    error: 'status must be enabled or disabled',
  });
  t.same((await send('PUT', path, { program_ids: [elsewhere.id] }, auth)).status, 400);
  const changed = await send(
    'PUT',
    path,
    { url: 'https://public.test/b', events: ['lead.created'], program_ids: [program.id], description: null },
    auth,
  );
  t.match(changed.body.data, {
    url: 'https://public.test/b',
    events: ['lead.created'],
    program_ids: [program.id],
    description: null,
  });
  t.match((await send('PUT', path, { program_ids: null }, auth)).body.data, {
    program_ids: null,
    events: ['lead.created'],
  });

  const off = await send('PUT', path, { status: 'disabled' }, auth);
  t.match(off.body.data, { status: 'disabled', disabled_reason: 'manual' });
  t.same((await send('POST', `${path}/test`, {}, auth)).body, {
    error: 'Webhook endpoint is disabled; enable it first',
  });
  const on = await send('POST', `${path}/enable`, {}, auth);
  t.match(on.body.data, { status: 'enabled', disabled_reason: null, disabled_at: null });
  t.equal((await send('POST', `${path}/test`, {}, auth)).status, 202, 'a test once enabled');

  t.same((await getJson(url(`/api/advertiser/webhooks/${ep.id}/deliveries?status=lost`), auth)).body, {
    error: 'status must be one of pending, delivered, failed',
  });
  t.same((await getJson(url(`/api/advertiser/webhooks/${ep.id}/deliveries?page=0`), auth)).body, {
    error: 'page must be a positive integer',
  });
  t.same((await getJson(url(`/api/advertiser/webhooks/${ep.id}/deliveries?pageSize=101`), auth)).body, {
    error: 'pageSize must be an integer from 1 to 100',
  });

  t.equal((await send('DELETE', path, undefined, auth)).status, 204);
  t.same((await getJson(path, auth)).body, { error: 'Webhook endpoint not found' });
  t.same((await getJson(url('/api/advertiser/webhooks/abc'), auth)).body, {
    error: 'Webhook endpoint not found',
  });
  t.same((await getJson(url('/api/advertiser/webhook-deliveries/999999999'), auth)).body, {
    error: 'Webhook delivery not found',
  });
});

t.test('scopes and roles: owner and admin yes; member and viewer no; keys by scope', async (t) => {
  const made = await create({ url: 'https://public.test/roles' });
  const id = (made.body.data as { id: number }).id;
  const admin = await memberOf(svc, sql, owner.workspaceId, 'admin');
  t.equal(
    (await getJson(url(`/api/advertiser/webhooks/${id}`), bearer(admin.session))).status,
    200,
    'admin reads',
  );
  for (const role of ['member', 'viewer'] as const) {
    const u = await memberOf(svc, sql, owner.workspaceId, role);
    t.same(
      (await getJson(url(`/api/advertiser/webhooks?workspace_id=${owner.workspaceId}`), bearer(u.session)))
        .body,
      { error: `Your role (${role}) lacks permission webhooks:read` },
      `${role}: no list`,
    );
    t.same(
      (await getJson(url(`/api/advertiser/webhooks/${id}`), bearer(u.session))).body,
      { error: `Your role (${role}) lacks permission webhooks:read` },
      `${role}: no read`,
    );
  }
  const key = async (scopes: string[]) => {
    const r = await postJson(url('/api/advertiser/api-keys'), { name: 'k', scopes }, auth);
    return bearer((r.body.data as { key: string }).key);
  };
  const reader = await key(['webhooks:read']);
  t.equal((await getJson(url('/api/advertiser/webhooks'), reader)).status, 200, 'webhooks:read lists');
  t.same((await create({ url: 'https://public.test/k' }, reader)).body, {
    error: 'API key lacks scope webhooks:write',
  });
  const other = await key(['program:read']);
  t.same((await getJson(url('/api/advertiser/webhooks'), other)).body, {
    error: 'API key lacks scope webhooks:read',
  });
  const writer = await key(['webhooks:write']);
  t.equal((await create({ url: 'https://public.test/k' }, writer)).status, 201, 'webhooks:write creates');
  const all = await key(['*']);
  t.equal(
    (await getJson(url(`/api/advertiser/webhooks/${id}/deliveries`), all)).status,
    200,
    '* reads the log',
  );
  t.equal((await getJson(url('/api/advertiser/webhooks'))).status, 401, 'no credential');
});

t.test('the endpoints are documented in the OpenAPI', async (t) => {
  const doc = (await getJson(url('/api/v1/openapi.json'))).body as { paths: Record<string, unknown> };
  for (const p of [
    '/api/advertiser/webhooks',
    '/api/advertiser/webhooks/{id}',
    '/api/advertiser/webhooks/{id}/rotate-secret',
    '/api/advertiser/webhooks/{id}/test',
    '/api/advertiser/webhooks/{id}/enable',
    '/api/advertiser/webhooks/{id}/deliveries',
    '/api/advertiser/webhook-deliveries/{id}',
    '/api/advertiser/webhook-deliveries/{id}/retry',
  ])
    t.ok(doc.paths[p], p);
});
