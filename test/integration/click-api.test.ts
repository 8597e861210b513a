// The click endpoint against the real ingress, worker, Kafka and Postgres: every spec error string,
// test mode, inactive links, existing_click_id, cookie_window_days, CORS, and the cache seeing changes.
import t from 'tap';
import {
  DESKTOP_CHROME_UA,
  IPHONE_UA,
  createLink,
  createProgram,
  postJson,
  startServices,
  testSql,
  waitFor,
} from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const clickUrl = `${svc.baseUrl}/api/v1/track/click`;
const click = (body: unknown, headers?: Record<string, string>) => postJson(clickUrl, body, headers);
const affUrl = (aff: string) => `https://shop.example/landing?utm_source=x&aff=${aff}`;

const program = await createProgram(sql, { cookieWindowDays: 14, allowedOrigins: ['https://shop.example'] });
const link = await createLink(sql, program.id);

t.test('400s carry the exact spec error strings', async (t) => {
  const cases: [unknown, string][] = [
    [{}, 'affiliate_url is required'],
    [{ affiliate_url: '' }, 'affiliate_url is required'],
    [{ affiliate_url: 'shop.example/?aff=x' }, 'Invalid affiliate_url'],
    [{ affiliate_url: 12 }, 'Invalid affiliate_url'],
    [{ affiliate_url: 'https://shop.example/pricing' }, 'No aff parameter found in affiliate_url'],
    [{ affiliate_url: affUrl('no-such-link') }, 'Referral link not found'],
    [{ affiliate_url: affUrl('bad%20chars!') }, 'Referral link not found'],
  ];
  for (const [body, error] of cases) {
    const res = await click(body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.same(res.body, { error }, JSON.stringify(body));
  }
});

t.test('bad bodies are clear 4xx, never 500', async (t) => {
  const malformed = await click('{"affiliate_url": ');
  t.equal(malformed.status, 400);
  t.same(malformed.body, { error: 'Invalid JSON body' });
  const array = await click('[1,2]');
  t.equal(array.status, 400);
  t.same(array.body, { error: 'Request body must be a JSON object' });
  const wrongType = await click({ affiliate_url: affUrl(link.shortLink), page_url: 5 });
  t.equal(wrongType.status, 400);
  t.same(wrongType.body, { error: 'page_url must be a string' });
  const wrongAdditional = await click({ affiliate_url: affUrl(link.shortLink), additional_data: 'x' });
  t.same(wrongAdditional.body, { error: 'additional_data must be an object' });
  const wrongTestMode = await click({
    affiliate_url: affUrl(link.shortLink),
    additional_data: { test_mode: 'yes' },
  });
  t.same(wrongTestMode.body, { error: 'additional_data.test_mode must be a boolean' });
  const huge = await click({ affiliate_url: affUrl(link.shortLink), page_title: 'x'.repeat(200_000) });
  t.equal(huge.status, 413);
  t.same(huge.body, { error: 'Request body is too large' });
  const xml = await fetch(clickUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/xml' },
    body: '<a/>',
  });
  t.equal(xml.status, 415);
  t.match(await xml.json(), { error: String });
});

t.test(
  'a click answers click_id, partner_code and the program cookie window, and lands enriched',
  async (t) => {
    const res = await click(
      { affiliate_url: affUrl(link.shortLink), page_url: 'https://shop.example/landing', session_id: 's-1' },
      { 'user-agent': IPHONE_UA, 'x-forwarded-for': '8.8.8.8' },
    );
    t.equal(res.status, 200);
    t.equal(res.body.success, true);
    t.match(res.body.click_id, /^cust_\d+_\d+$/);
    t.equal(res.body.partner_code, link.shortLink);
    t.equal(res.body.cookie_window_days, 14);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const row = await waitFor('the click event', async () => {
      const [r] = await sql`select * from click_events where click_id = ${res.body.click_id as string}`;
      return r;
    });
    t.match(row, {
      program_id: String(program.id),
      link_id: String(link.id),
      is_test: false,
      session_id: 's-1',
      device_type: 'mobile',
      device_os: 'iOS',
      browser_name: 'Mobile Safari',
      geo_country: 'US',
    });
    const [customer] =
      await sql`select customer_status, program_id, partner_id from customers where click_id = ${res.body.click_id as string}`;
    t.same(customer, {
      customer_status: 'click',
      program_id: String(program.id),
      partner_id: String(link.partnerId),
    });
  },
);

t.test('user_agent in the body wins over the header; text/plain JSON is accepted (sendBeacon)', async (t) => {
  const res = await fetch(clickUrl, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', 'user-agent': IPHONE_UA },
    body: JSON.stringify({ affiliate_url: affUrl(link.shortLink), user_agent: DESKTOP_CHROME_UA }),
  });
  const body = (await res.json()) as { click_id: string };
  t.equal(res.status, 200);
  const row = await waitFor('the click event', async () => {
    const [r] =
      await sql`select device_type, browser_name, device_os from click_events where click_id = ${body.click_id}`;
    return r;
  });
  t.same(row, { device_type: 'desktop', browser_name: 'Chrome', device_os: 'Windows' });
});

t.test('the /api/tracking/click alias behaves the same', async (t) => {
  const res = await postJson(`${svc.baseUrl}/api/tracking/click`, { affiliate_url: affUrl(link.shortLink) });
  t.equal(res.status, 200);
  t.equal(res.body.success, true);
  const bad = await postJson(`${svc.baseUrl}/api/tracking/click`, {});
  t.same(bad.body, { error: 'affiliate_url is required' });
});

t.test('an inactive link answers 200 with success false and records nothing', async (t) => {
  const inactive = await createLink(sql, program.id, { status: 'inactive' });
  const res = await click({ affiliate_url: affUrl(inactive.shortLink) });
  t.equal(res.status, 200);
  t.same(res.body, { success: false, error: 'Referral link is inactive' });
  await new Promise((r) => setTimeout(r, 500));
  const [{ n }] =
    (await sql`select count(*)::int as n from click_events where link_id = ${inactive.id}`) as unknown as [
      { n: number },
    ];
  t.equal(n, 0);
});

t.test(
  'a link without partner or program, or of a deleted program, is an invalid configuration',
  async (t) => {
    const orphan = await createLink(sql, program.id);
    await sql`update referral_links set partner_id = null, partner_program_id = null where id = ${orphan.id}`;
    await waitFor(
      'cache to see the change',
      async () => {
        const r = await click({ affiliate_url: affUrl(orphan.shortLink) });
        return r.status === 400 && r.body.error === 'Invalid referral link configuration';
      },
      5000,
    );
    const other = await createProgram(sql);
    const otherLink = await createLink(sql, other.id);
    t.equal((await click({ affiliate_url: affUrl(otherLink.shortLink) })).status, 200);
    await sql`update programs set deleted_at = now() where id = ${other.id}`;
    await waitFor(
      'cache to see the deletion',
      async () => {
        const r = await click({ affiliate_url: affUrl(otherLink.shortLink) });
        return r.status === 400 && r.body.error === 'Invalid referral link configuration';
      },
      5000,
    );
    t.pass('both answered Invalid referral link configuration');
  },
);

t.test(
  'test mode: is_test event, data {eventId, programId, test_mode}, no customer, no counter',
  async (t) => {
    const testLink = await createLink(sql, program.id);
    const res = await click({
      affiliate_url: affUrl(testLink.shortLink),
      additional_data: { test_mode: true },
    });
    t.equal(res.status, 200);
    t.equal(res.body.success, true);
    t.type(res.body.message, 'string');
    const data = res.body.data as { eventId: string; programId: number; test_mode: boolean };
    t.equal(data.programId, program.id);
    t.equal(data.test_mode, true);
    t.match(data.eventId, /^\d+$/);
    const row = await waitFor('the test event', async () => {
      const [r] =
        await sql`select is_test, click_id, program_id from click_events where event_id = ${data.eventId}`;
      return r;
    });
    t.same(row, { is_test: true, click_id: null, program_id: String(program.id) });
    const [l] = await sql`select clicks, last_clicked from referral_links where id = ${testLink.id}`;
    t.same(l, { clicks: '0', last_clicked: null }, 'the link counters are untouched');
    const [pp] = await sql`select clicks from partner_programs where id = ${testLink.partnerProgramId}`;
    t.equal(pp!.clicks, '0');

    // A page without a real partner link yet: additional_data.program_id names the program.
    const byProgram = await click({
      affiliate_url: affUrl('not-a-link'),
      additional_data: { test_mode: true, program_id: program.id },
    });
    t.equal(byProgram.status, 200);
    t.equal((byProgram.body.data as { programId: number }).programId, program.id);
    const unknown = await click({
      affiliate_url: affUrl('not-a-link'),
      additional_data: { test_mode: true, program_id: 999999999 },
    });
    t.same(unknown.body, { error: 'Referral link not found' });
  },
);

t.test('existing_click_id is reused only for the same program and partner', async (t) => {
  const first = await click({ affiliate_url: affUrl(link.shortLink) });
  const clickId = first.body.click_id as string;
  const again = await click({ affiliate_url: affUrl(link.shortLink), existing_click_id: clickId });
  t.equal(again.body.click_id, clickId, 'same partner and program: same customer');

  const samePartnerOtherLink = await createLink(sql, program.id, { partnerId: link.partnerId });
  const viaOtherLink = await click({
    affiliate_url: affUrl(samePartnerOtherLink.shortLink),
    existing_click_id: clickId,
  });
  t.equal(
    viaOtherLink.body.click_id,
    clickId,
    'another link of the same partner in the same program: same customer',
  );

  const otherPartner = await createLink(sql, program.id);
  const lastTouch = await click({
    affiliate_url: affUrl(otherPartner.shortLink),
    existing_click_id: clickId,
  });
  t.not(lastTouch.body.click_id, clickId, 'another partner: a new customer (last touch)');
  t.match(lastTouch.body.click_id, /^cust_\d+_\d+$/);

  const otherProgram = await createProgram(sql);
  const otherProgramLink = await createLink(sql, otherProgram.id, { partnerId: link.partnerId });
  const crossProgram = await click({
    affiliate_url: affUrl(otherProgramLink.shortLink),
    existing_click_id: clickId,
  });
  t.not(crossProgram.body.click_id, clickId, 'the same partner in another program: a new customer');

  const garbage = await click({ affiliate_url: affUrl(link.shortLink), existing_click_id: 'cust_nope' });
  t.not(garbage.body.click_id, 'cust_nope');

  await waitFor('3 events on the reused customer', async () => {
    const [r] = await sql`select count(*)::int as n from click_events where click_id = ${clickId}`;
    return r!.n === 3;
  });
  const customers = await sql`select customer_status from customers where click_id = ${clickId}`;
  t.equal(customers.length, 1, 'one customer for the reused click id');
});

t.test('CORS: only origins on the program allowed_origins, preflight included', async (t) => {
  const ok = await click({ affiliate_url: affUrl(link.shortLink) }, { origin: 'https://shop.example' });
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.example');
  const evil = await click({ affiliate_url: affUrl(link.shortLink) }, { origin: 'https://evil.example' });
  t.equal(evil.status, 403);
  t.same(evil.body, { error: 'Origin not allowed for this program' });
  t.equal(evil.headers.get('access-control-allow-origin'), null);

  const preflight = await fetch(clickUrl, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
  });
  t.equal(preflight.status, 204);
  t.equal(preflight.headers.get('access-control-allow-origin'), 'https://shop.example');
  const badPreflight = await fetch(clickUrl, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
  });
  t.equal(badPreflight.status, 403);

  const noOrigins = await createProgram(sql);
  const noOriginsLink = await createLink(sql, noOrigins.id);
  const refused = await click(
    { affiliate_url: affUrl(noOriginsLink.shortLink) },
    { origin: 'https://shop.example' },
  );
  t.equal(refused.status, 403, 'an empty list allows no browser origin');
  const server = await click({ affiliate_url: affUrl(noOriginsLink.shortLink) });
  t.equal(server.status, 200, 'calls without Origin are not browser calls');
});

t.test(
  'the link cache sees deactivation, reactivation and cookie-window changes within seconds',
  async (t) => {
    const l = await createLink(sql, program.id);
    t.equal((await click({ affiliate_url: affUrl(l.shortLink) })).body.success, true);
    await sql`update referral_links set status = 'inactive' where id = ${l.id}`;
    await waitFor(
      'inactive',
      async () => (await click({ affiliate_url: affUrl(l.shortLink) })).body.success === false,
      3000,
      50,
    );
    await sql`update referral_links set status = 'active' where id = ${l.id}`;
    await waitFor(
      'active',
      async () => (await click({ affiliate_url: affUrl(l.shortLink) })).body.success === true,
      3000,
      50,
    );
    await sql`update programs set cookie_window_days = 30 where id = ${program.id}`;
    await waitFor(
      '30 days',
      async () => (await click({ affiliate_url: affUrl(l.shortLink) })).body.cookie_window_days === 30,
      3000,
      50,
    );
    const created = await createLink(sql, program.id, { shortLink: `fresh-${Date.now()}` });
    t.equal(
      (await click({ affiliate_url: affUrl(created.shortLink) })).status,
      200,
      'a new link is found at once',
    );
  },
);

t.test('OpenAPI document describes the click endpoint', async (t) => {
  const res = await fetch(`${svc.baseUrl}/api/v1/openapi.json`);
  t.equal(res.status, 200);
  const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
  t.equal(doc.openapi, '3.1.0');
  t.ok(doc.paths['/api/v1/track/click'], 'click documented');
  t.ok(doc.paths['/api/tracking/click'], 'alias documented');
});

t.test('unknown routes are a 404 with an error string', async (t) => {
  const res = await fetch(`${svc.baseUrl}/api/v1/nope`);
  t.equal(res.status, 404);
  t.match(await res.json(), { error: String });
});
