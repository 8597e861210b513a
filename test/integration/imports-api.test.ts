// The import routes (CONTRACT part five; docs/importing.md, docs/security.md): bad input is a 400 naming the
// field (never a 500), an api_base_url must be http(s) and, without WEBHOOK_ALLOW_PRIVATE, a public address;
// an import answers 202 queued with its shape and never its credentials; reads, errors and cancel; what each
// credential reaches (a viewer reads but does not start one, another workspace's session and ids are 404, a
// key scoped to another program 403, a partner session 401); without IMPORT_SECRET_KEY an import with
// credentials is 503 and a CSV import still works; the campaign picker reads the source's campaigns.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { apiProgram, invitedPartner } from '../helpers/partners.ts';
import { TEST_IMPORT_KEY, postCsv, postImport } from '../helpers/imports.ts';
import type { Import } from '../helpers/imports.ts';
import { rewardfulFixture, startRewardful } from '../../scripts/lib/seed/source-doubles.ts';

const sql = testSql(t);
// No import worker: imports stay queued (nothing reads a source here but the campaign picker).
const svc = await startServices(t, ['web'], { IMPORT_SECRET_KEY: TEST_IMPORT_KEY });
const owner = await signup(svc);
const own = bearer(owner.session);
const program = await apiProgram(svc, owner);
const other = await apiProgram(svc, owner);
const url = (p: number, rest = '') => `${svc.baseUrl}/api/advertiser/affiliate-programs/${p}/imports${rest}`;
const SECRET = `rw_${randomBytes(4).toString('hex')}`;
const good = { source: 'rewardful', credentials: { api_secret: SECRET } };

t.test('bad input is a 400 naming the field', async (t) => {
  const cases: [unknown, string | RegExp][] = [
    [{}, 'source must be one of rewardful, dub, csv'],
    [{ source: 'tolt' }, 'source must be one of rewardful, dub, csv'],
    [{ source: 'rewardful' }, /^credentials\.api_secret is required/],
    [{ source: 'rewardful', credentials: { api_secret: '  ' } }, /^credentials\.api_secret is required/],
    [{ source: 'dub', credentials: { api_secret: 'x' } }, /^credentials\.api_key is required/],
    [{ source: 'rewardful', credentials: 'x' }, 'credentials must be an object'],
    [{ ...good, options: 5 }, 'options must be an object'],
    [
      { ...good, options: { api_base_url: 'ftp://x.example' } },
      'options.api_base_url must be an absolute http:// or https:// URL',
    ],
    [
      { ...good, options: { api_base_url: 7 } },
      'options.api_base_url must be an absolute http:// or https:// URL',
    ],
    [
      { ...good, options: { api_base_url: 'https://u:p@x.example' } },
      'options.api_base_url must not contain a user name or password',
    ],
    [
      { ...good, options: { api_base_url: 'http://127.0.0.1:9/v1' } },
      /^options\.api_base_url: host 127\.0\.0\.1 is a loopback address/,
    ],
    [{ ...good, options: { api_base_url: 'http://169.254.169.254/' } }, /cloud metadata address/],
    [{ ...good, options: { campaign_ids: [] } }, /^options\.campaign_ids must be a list/],
    [{ ...good, options: { campaign_ids: [5] } }, /^options\.campaign_ids must be a list/],
    [{ ...good, options: { include_inactive: 'yes' } }, 'options.include_inactive must be true or false'],
    [{ ...good, options: { dry_run: 1 } }, 'options.dry_run must be true or false'],
    [{ source: 'csv' }, /A CSV import sends its file/],
  ];
  for (const [body, error] of cases) {
    const r = await postImport(svc, owner, program.id, body);
    t.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    t.match(r.body.error, error);
  }
  const bad = await fetch(url(program.id), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...own },
    body: '{"source":',
  });
  t.same([bad.status, ((await bad.json()) as { error: string }).error], [400, 'Invalid JSON body']);
  let r = await send('POST', url(program.id), '"a string"', own);
  t.same([r.status, r.body.error], [400, 'Request body must be a JSON object']);
  const res = await fetch(url(program.id), {
    method: 'POST',
    headers: { 'content-type': 'text/plain', ...own },
    body: 'email\nx@example.com',
  });
  t.equal(res.status, 415, 'text/plain is not a CSV upload');
  r = await send('POST', url(program.id), undefined, own);
  t.same([r.status, r.body.error], [400, 'Request body must be a JSON object']);
  const [n] = await sql<
    { n: number }[]
  >`select count(*)::int as n from imports where program_id = ${program.id}`;
  t.equal(n!.n, 0, 'nothing was created');
});

t.test('an import answers 202 queued, and never its credentials', async (t) => {
  const r = await postImport(svc, owner, program.id, {
    ...good,
    options: { campaign_ids: ['c1', 'c1', 'c2'], include_inactive: true, dry_run: true },
  });
  t.equal(r.status, 202, r.text);
  t.notOk(r.text.includes(SECRET));
  const imp = r.body.data as Import;
  t.match(imp, {
    program_id: program.id,
    source: 'rewardful',
    status: 'queued',
    step: 'campaigns',
    dry_run: true,
    options: { api_base_url: null, campaign_ids: ['c1', 'c2'], include_inactive: true },
    error: null,
    started_at: null,
    finished_at: null,
  });
  t.same(imp.counts.partners, { created: 0, updated: 0, skipped: 0, failed: 0 });
  t.same(Object.keys(imp.counts), ['groups', 'partners', 'links', 'codes', 'customers', 'commissions']);
  const [row] = await sql<{ credentials: Buffer }[]>`select credentials from imports where id = ${imp.id}`;
  t.notOk(row!.credentials.toString('latin1').includes(SECRET), 'sealed at rest');
  const list = await getJson(url(program.id), own);
  t.equal(list.status, 200);
  t.notOk(list.text.includes(SECRET));
  t.equal((list.body.data as Import[])[0]!.id, imp.id, 'newest first');
  const one = await getJson(url(program.id, `/${imp.id}`), own);
  t.same(one.body.data, imp);
  t.same((await getJson(url(program.id, `/${imp.id}/errors`), own)).body, { data: [] });
  const cancel = await send('POST', url(program.id, `/${imp.id}/cancel`), undefined, own);
  t.match([cancel.status, cancel.body.data], [200, { status: 'canceled' }]);
  const [gone] = await sql`select credentials from imports where id = ${imp.id}`;
  t.equal(gone!.credentials, null, 'a cancel deletes the credentials');
  const again = await send('POST', url(program.id, `/${imp.id}/cancel`), undefined, own);
  t.same([again.status, again.body], [409, { error: 'Import already canceled' }]);
  t.same((await getJson(url(other.id, `/${imp.id}`), own)).status, 404, "another program's path: 404");
});

t.test('who may start and read imports', async (t) => {
  const [mine] = await sql<{ id: string }[]>`
    insert into imports (program_id, source, step) values (${program.id}, 'csv', 'rows') returning id`;
  const id = Number(mine!.id);
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  t.equal((await postImport(svc, viewer, program.id, good)).status, 403, 'a viewer may not start one');
  t.equal((await getJson(url(program.id), bearer(viewer.session))).status, 200, 'a viewer reads them');
  t.equal(
    (await send('POST', url(program.id, `/${id}/cancel`), undefined, bearer(viewer.session))).status,
    403,
  );
  const stranger = await signup(svc);
  for (const r of [
    await postImport(svc, stranger, program.id, good),
    await getJson(url(program.id), bearer(stranger.session)),
    await getJson(url(program.id, `/${id}`), bearer(stranger.session)),
    await getJson(url(program.id, `/${id}/errors`), bearer(stranger.session)),
    await send('POST', url(program.id, `/${id}/cancel`), undefined, bearer(stranger.session)),
  ])
    t.same([r.status, r.body.error], [404, 'Program not found'], 'another workspace: 404');
  const strangers = await apiProgram(svc, stranger);
  t.same(
    (await getJson(url(strangers.id, `/${id}`), bearer(stranger.session))).status,
    404,
    "this import under one's own program: 404",
  );
  const key = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/api-keys`,
    { name: 'scoped', scopes: ['*'], program_scope: [other.id], workspace_id: owner.workspaceId },
    own,
  );
  t.equal(key.status, 201, key.text);
  const scoped = bearer((key.body.data as { key: string }).key);
  t.equal(
    (await send('POST', url(program.id), good, scoped)).status,
    403,
    'a key scoped to another program: 403',
  );
  t.equal((await getJson(url(program.id, `/${id}`), scoped)).status, 403);
  const partner = await invitedPartner(svc, owner, program.id);
  t.equal((await getJson(url(program.id), bearer(partner.session))).status, 401, 'a partner session: 401');
  t.equal(
    (await send('POST', url(program.id), good, bearer(program.token))).status,
    401,
    'a tracking token: 401',
  );
});

t.test(
  'without IMPORT_SECRET_KEY: credentials are refused (503), a CSV import works; the picker',
  async (t) => {
    const bare = await startServices(t, ['web'], { WEBHOOK_ALLOW_PRIVATE: 'true' });
    const o = await signup(bare);
    const p = await apiProgram(bare, o);
    const r = await postImport(bare, o, p.id, good);
    t.equal(r.status, 503);
    t.match(r.body.error, /need IMPORT_SECRET_KEY/);
    const csv = await postCsv(bare, o, p.id, 'email\r\nann@example.com\r\n');
    t.equal(csv.status, 202, csv.text);

    const data = rewardfulFixture({ affiliates: 1, commissions: 0, tag: 'pick' });
    const double = await startRewardful(data, SECRET);
    t.teardown(() => double.close());
    const pick = (secret: string) =>
      send(
        'POST',
        `${bare.baseUrl}/api/advertiser/affiliate-programs/${p.id}/imports/campaigns`,
        { source: 'rewardful', credentials: { api_secret: secret }, options: { api_base_url: double.url } },
        bearer(o.session),
      );
    const listed = await pick(SECRET);
    t.equal(listed.status, 200, listed.text);
    t.match(listed.body.data, [
      { id: data.campaigns[0]!.id, name: 'Friends pick', commission: { type: 'percentage', percent: 30 } },
      { id: data.campaigns[1]!.id, name: 'Agencies pick', commission: { type: 'flat', amount_cents: 2500 } },
    ]);
    const refused = await pick('wrong');
    t.same(
      [refused.status, refused.body.error],
      [400, 'Rewardful refused the credentials (401): check them and start again'],
    );
    const [n] = await sql<{ n: number }[]>`select count(*)::int as n from imports where program_id = ${p.id}`;
    t.equal(n!.n, 1, 'the picker creates no import and keeps no credentials');
  },
);
