// The Overview's "who and where" panels in a real browser (chromium through playwright-core) against the
// real pipeline: clicks sent through the API from two countries and two kinds of device for two partners
// show in Top partners, Top links, Countries and Devices; picking a partner narrows the tiles and the
// charts to it (a chip clears it); the Partners page shows each partner's figures for a period; Events
// shows click ids; at 390 px nothing scrolls sideways; no page logs a console error, logged out included.
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMmdb } from '../helpers/mmdb-writer.ts';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { launchBrowser, openPage, screenshot } from '../helpers/browser.ts';
import { USER_AGENTS, geoNetworks } from '../helpers/traffic-mix.ts';

const sql = testSql(t);
const dir = mkdtempSync(join(tmpdir(), 'dashboard-analytics-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const geoFile = join(dir, 'geo.mmdb');
writeFileSync(geoFile, buildMmdb(geoNetworks));

const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker'], {
  GEOIP_IPV4_PATH: geoFile,
  GEOIP_IPV6_PATH: 'none',
});
const owner = await signup(svc);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
const partner = async (name: string) => {
  const [p] = await sql<{ id: string }[]>`
    insert into partners (name, email) values (${name}, ${`${name.toLowerCase()}-${Date.now()}@example.com`})
    returning id`;
  return Number(p!.id);
};
const acme = await createLink(sql, program.id, {
  partnerId: await partner('Acme'),
  shortLink: `acme-${Date.now()}`,
});
const beta = await createLink(sql, program.id, {
  partnerId: await partner('Beta'),
  shortLink: `beta-${Date.now()}`,
});

// A request answered 503 (the machine too busy for Kafka's acknowledgement in time) is sent again, as a
// client would: the same event id or Idempotency-Key, so it counts once.
async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  for (let attempt = 0; ; attempt++) {
    const r = await postJson(`${svc.baseUrl}${path}`, body, headers);
    if (r.status !== 503 || attempt >= 60) {
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    }
    await new Promise((res) => setTimeout(res, 500));
  }
}

// Acme: 6 clicks from Germany on iPhones, one of them buys; Beta: 3 from France on desktop Chrome.
const click = async (link: typeof acme, ip: string, ua: string) => {
  const b = await post(
    '/api/v1/track/click',
    {
      affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
      page_url: 'https://shop.example/pricing?x=1',
      event_id: crypto.randomUUID(),
    },
    { 'user-agent': ua, 'x-forwarded-for': ip },
  );
  return b.click_id as string;
};
const acmeClicks = [];
for (let i = 0; i < 6; i++) acmeClicks.push(await click(acme, '5.1.2.3', USER_AGENTS.iphone));
for (let i = 0; i < 3; i++) await click(beta, '2.2.3.4', USER_AGENTS.chrome);
const buyer = acmeClicks[0]!;
const auth = { authorization: `Bearer ${program.token}` };
await post(
  '/api/v1/track/lead',
  { click_id: buyer, customer_key: 'buyer' },
  { ...auth, 'idempotency-key': 'lead-buyer' },
);
const txn = `t-${Date.now()}`;
await post(
  '/api/v1/track/sale',
  { transaction_id: txn, amount_cents: 12_345, customer_key: 'buyer' },
  { ...auth, 'idempotency-key': txn },
);
await waitFor(
  'nine clicks counted',
  async () =>
    (
      await sql<{ n: number }[]>`
        select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`
    )[0]!.n === 9,
  60_000,
);

const browser = await launchBrowser(t);

t.test('logged out, the first load logs no console error', async (t) => {
  const p = await openPage(t, browser, svc.baseUrl);
  await p.goto('/');
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  await p.goto(`/programs/${program.id}/overview`);
  await p.page.getByRole('heading', { name: 'Log in' }).waitFor();
  p.assertNoErrors(t);
});

t.test('the panels show the traffic; a partner filters the tiles and charts', async (t) => {
  const p = await openPage(t, browser, svc.baseUrl, { user: owner, viewport: { width: 1280, height: 900 } });
  const { page } = p;
  await p.goto(`/programs/${program.id}/overview`);
  const panel = (title: string) => page.getByTestId(`panel-${title}`);
  const row = (title: string, label: string) => panel(title).locator('tr', { hasText: label });
  const clicksOf = async (title: string, label: string) =>
    (await row(title, label).locator('td').first().textContent())!.trim().split(/\s/)[0];

  await row('Top partners', 'Acme').waitFor();
  t.equal(await clicksOf('Top partners', 'Acme'), '6', 'Acme: 6 clicks');
  t.equal(await clicksOf('Top partners', 'Beta'), '3', 'Beta: 3 clicks');
  t.match(await row('Top partners', 'Acme').textContent(), /66\.7%/, 'its share');
  t.equal(await clicksOf('Top links', acme.shortLink), '6', 'the links, by short link');
  t.equal(await clicksOf('Countries', 'Germany'), '6', 'Germany: 6');
  t.equal(await clicksOf('Countries', 'France'), '3', 'France: 3');
  t.ok(await panel('Countries').getByText('IP Geolocation by DB-IP').isVisible(), 'the geo credit');
  t.equal(await clicksOf('Devices', 'Mobile'), '6', 'mobile: 6');
  t.equal(await clicksOf('Devices', 'Desktop'), '3', 'desktop: 3');
  await panel('Devices').getByRole('tab', { name: 'Browser' }).click();
  t.equal(await clicksOf('Devices', 'Chrome'), '3', 'the browser tab');
  await panel('Devices').getByRole('tab', { name: 'OS' }).click();
  t.equal(await clicksOf('Devices', 'iOS'), '6', 'the OS tab');
  t.equal(await clicksOf('Landing pages', 'https://shop.example/pricing'), '9', 'pages without their query');
  t.equal(await clicksOf('Referrers', 'Direct or unknown'), '9', 'no referrer');
  t.match(await row('Top partners', 'Acme').textContent(), /\$123\.45/, "Acme's revenue");
  const tile = page.getByTestId('tile-clicks');
  t.equal((await tile.textContent())!.trim(), '9', 'the whole program: 9 clicks');
  await screenshot(page, 'dashboard-overview-panels');

  await row('Top partners', 'Acme').getByRole('button', { name: 'Acme' }).click();
  await page.getByTestId('filter-chip').waitFor();
  t.match(await page.getByTestId('filter-chip').textContent(), /partner Acme only/);
  await waitFor('the tiles of Acme', async () => (await tile.textContent())!.trim() === '6', 20_000);
  t.equal((await page.getByTestId('tile-revenue').textContent())!.trim(), '$123.45', "Acme's revenue tile");
  await page.getByText('Daily figures as a table').click();
  const today = new Date().toISOString().slice(0, 10);
  const day = page.locator('details.daily tr', { hasText: today });
  t.equal((await day.locator('td').first().textContent())!.trim(), '6', "the chart's figures: Acme's day");
  t.equal(await clicksOf('Top partners', 'Beta'), '3', 'the panels still show the whole program');

  await page.getByRole('button', { name: /Clear the partner filter/ }).click();
  await waitFor('the whole program again', async () => (await tile.textContent())!.trim() === '9', 20_000);
  t.equal(await page.getByTestId('filter-chip').count(), 0, 'the chip is gone');
  await row('Top links', beta.shortLink).getByRole('button').click();
  await waitFor('the tiles of the Beta link', async () => (await tile.textContent())!.trim() === '3', 20_000);
  t.match(await page.getByTestId('filter-chip').textContent(), new RegExp(`link ${beta.shortLink} only`));
  p.assertNoErrors(t);
});

t.test('at 390 px the Overview does not scroll sideways', async (t) => {
  const p = await openPage(t, browser, svc.baseUrl, { user: owner, viewport: { width: 390, height: 844 } });
  await p.goto(`/programs/${program.id}/overview`);
  await p.page.getByTestId('panel-Top partners').locator('tr', { hasText: 'Acme' }).waitFor();
  const overflow = await p.page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  t.ok(overflow <= 0, `no sideways scroll (${overflow}px)`);
  await screenshot(p.page, 'dashboard-overview-panels-390');
  p.assertNoErrors(t);
});

t.test("Partners shows each partner's figures for a period; Events shows click ids", async (t) => {
  const p = await openPage(t, browser, svc.baseUrl, { user: owner });
  await p.goto(`/programs/${program.id}/partners`);
  const acmeRow = p.page.locator('tr', { hasText: 'Acme' });
  await waitFor(
    'the figures',
    async () => (await acmeRow.getByTestId('partner-clicks').textContent()) === '6',
    20_000,
  );
  t.match(await acmeRow.textContent(), /\$123\.45/, 'its revenue');
  await p.page.getByRole('button', { name: '7 days' }).click();
  t.equal(await acmeRow.getByTestId('partner-clicks').textContent(), '6', 'today is in every period');
  await p.goto(`/programs/${program.id}/events`);
  await p.page.locator('table.events').waitFor();
  t.ok(await p.page.getByText(buyer).first().isVisible(), 'a click id is shown');
  p.assertNoErrors(t);
});
