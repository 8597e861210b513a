// Bots and prefetches are data, not clicks (CONTRACT part three "Traffic quality and fraud"): people,
// crawlers, link expanders, scripted clients and both prefetch headers sent through the real API are all
// answered alike, stored with their quality, and left out of every counter, rollup and breakdown, which
// are checked against the rows; the status, performance and events answers say how many were filtered;
// a redelivered chunk and a message delivered twice still count once.
import t from 'tap';
import { createKafka } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import { Snowflake, formatClickId } from '../../shared/domain/ids.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import { createPersistClicksStep } from '../../services/workers/clicks/steps/persist-clicks.ts';
import type { EnrichedClick } from '../../services/workers/clicks/steps/enrich-click.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { partnerAccount } from '../helpers/portal.ts';
import {
  DESKTOP_CHROME_UA,
  IPHONE_UA,
  createLink,
  createProgram,
  postJson,
  stackEnv,
  startServices,
  testSql,
  waitFor,
} from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const owner = await signup(svc);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
// Partner a has an account: its portal's events list shows its own clicks that count, and no others.
const aAccount = await partnerAccount(svc.baseUrl, owner.session, program.id);
const a = await createLink(sql, program.id, { partnerId: aAccount.partnerId });
const b = await createLink(sql, program.id);

const CUBOT =
  'Mozilla/5.0 (Linux; Android 9; CUBOT P30 Build/PPR1.180610.011) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

interface Sent {
  link: typeof a;
  quality: 'human' | 'bot' | 'prefetch';
  headers: Record<string, string>;
  body?: Record<string, unknown>;
  name: string;
}
const sent: Sent[] = [
  // People: browsers, a Cubot phone, and a backend reporting a visit with its own HTTP client's header.
  { name: 'iPhone', link: a, quality: 'human', headers: { 'user-agent': IPHONE_UA } },
  { name: 'Chrome', link: a, quality: 'human', headers: { 'user-agent': DESKTOP_CHROME_UA } },
  { name: 'Cubot', link: b, quality: 'human', headers: { 'user-agent': CUBOT } },
  { name: 'Firefox in the body', link: b, quality: 'human', headers: {}, body: { user_agent: FIREFOX } },
  { name: 'a backend (curl)', link: b, quality: 'human', headers: { 'user-agent': 'curl/8.5.0' } },
  // Crawlers and link expanders.
  {
    name: 'Googlebot',
    link: a,
    quality: 'bot',
    headers: { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  },
  {
    name: 'Slack',
    link: a,
    quality: 'bot',
    headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  },
  { name: 'WhatsApp', link: a, quality: 'bot', headers: { 'user-agent': 'WhatsApp/2.23.20.0 A' } },
  {
    name: 'Facebook',
    link: b,
    quality: 'bot',
    headers: { 'user-agent': 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)' },
  },
  { name: 'Telegram', link: b, quality: 'bot', headers: { 'user-agent': 'TelegramBot (like TwitterBot)' } },
  {
    name: 'iMessage',
    link: b,
    quality: 'bot',
    headers: { 'user-agent': 'facebookexternalhit/1.1 Facebot Twitterbot/1.0' },
  },
  {
    name: 'Discordbot relayed by a backend',
    link: a,
    quality: 'bot',
    headers: {},
    body: { user_agent: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)' },
  },
  // Prefetches, from browsers.
  {
    name: 'Sec-Purpose',
    link: a,
    quality: 'prefetch',
    headers: { 'user-agent': DESKTOP_CHROME_UA, 'sec-purpose': 'prefetch' },
  },
  { name: 'Purpose', link: b, quality: 'prefetch', headers: { 'user-agent': FIREFOX, purpose: 'prefetch' } },
];
const humans = sent.filter((s) => s.quality === 'human');
const clickIds = new Map<string, Sent>();

t.before(async () => {
  for (const s of sent) {
    const r = await postJson(
      `${svc.baseUrl}/api/v1/track/click`,
      {
        affiliate_url: `https://shop.example/?aff=${s.link.shortLink}`,
        page_url: 'https://shop.example/pricing',
        event_id: crypto.randomUUID(),
        ...s.body,
      },
      s.headers,
    );
    if (r.status !== 200) throw new Error(`${s.name}: ${r.status} ${JSON.stringify(r.body)}`);
    clickIds.set(r.body.click_id as string, s);
  }
  await waitFor(
    'every click stored',
    async () =>
      (await sql`select 1 from click_events where program_id = ${program.id}`).length === sent.length,
    60_000,
  );
});

t.test('bots and prefetches are answered exactly as people', async (t) => {
  t.equal(clickIds.size, sent.length, 'every click got its own click_id');
  for (const id of clickIds.keys()) t.match(id, /^cust_\d+_\d+$/);
});

t.test('each click is stored with its quality', async (t) => {
  const rows = await sql<{ click_id: string; quality: string; device_type: string }[]>`
    select click_id, quality, device_type from click_events where program_id = ${program.id}`;
  for (const r of rows) t.equal(r.quality, clickIds.get(r.click_id)!.quality, clickIds.get(r.click_id)!.name);
  t.equal(rows.find((r) => clickIds.get(r.click_id)!.name === 'Cubot')!.device_type, 'mobile');
  t.equal(rows.find((r) => clickIds.get(r.click_id)!.name === 'WhatsApp')!.device_type, 'bot');
});

t.test('every counter, rollup and breakdown counts the human rows only', async (t) => {
  for (const l of [a, b]) {
    const mine = humans.filter((s) => s.link === l).length;
    const [row] = await sql<{ counter: number; rows: number }[]>`
      select l.clicks::int as counter,
             (select count(*)::int from click_events e where e.link_id = l.id and e.quality = 'human') as rows
      from referral_links l where l.id = ${l.id}`;
    t.equal(row!.counter, mine, `link ${l.shortLink}: counter`);
    t.equal(row!.rows, mine, `link ${l.shortLink}: human rows`);
    const [pp] = await sql<
      { n: number }[]
    >`select clicks::int as n from partner_programs where id = ${l.partnerProgramId}`;
    t.equal(pp!.n, mine, 'partner-program counter');
    const keyed = await sql<{ dimension: string; n: number }[]>`
      select dimension, sum(clicks)::int as n from program_daily_breakdown
      where program_id = ${program.id} and ((dimension = 'link' and key = ${String(l.id)})
                                         or (dimension = 'partner' and key = ${String(l.partnerId)}))
      group by 1`;
    for (const k of keyed) t.equal(k.n, mine, `breakdown ${k.dimension}`);
    t.equal(keyed.length, 2);
  }
  const [daily] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_daily_stats where program_id = ${program.id}`;
  t.equal(daily!.n, humans.length, 'program_daily_stats');
  const dims = await sql<{ dimension: string; n: number }[]>`
    select dimension, sum(clicks)::int as n from program_daily_breakdown where program_id = ${program.id} group by 1`;
  t.equal(dims.length, 8, 'all eight dimensions');
  for (const d of dims) t.equal(d.n, humans.length, `every ${d.dimension} key sums to the people`);
  const [weekly] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_weekly_breakdown
    where program_id = ${program.id} and dimension = 'device'`;
  t.equal(weekly!.n, humans.length, 'weekly breakdown');
  const [bots] = await sql<{ n: number }[]>`
    select coalesce(sum(clicks), 0)::int as n from program_daily_breakdown
    where program_id = ${program.id} and dimension = 'device' and key = 'bot'`;
  // Only the backend's own curl header (counted as a person's visit, as before; its device reads `bot`).
  t.equal(bots!.n, 1, 'no crawler or expander in the device breakdown');
  const diffs = await checkProgram(sql, program.id, { first: null, last: null });
  t.same(diffs.map(describe), [], 'the rollups equal the plain SQL over the rows');
});

t.test('the status, performance, breakdown and events answers', async (t) => {
  const auth = bearer(owner.session);
  const filtered = sent.length - humans.length;
  const status = await getJson(`${svc.baseUrl}/api/tracking/status/${program.id}`, auth);
  t.equal(status.status, 200);
  t.equal(
    (status.body.data as { filteredClicks: number }).filteredClicks,
    filtered,
    'status: filteredClicks',
  );

  const perf = await getJson(`${svc.baseUrl}/api/tracking/performance/${program.id}?period=7d`, auth);
  const m = perf.body.metrics as { totalClicks: number; filteredClicks: number };
  t.equal(m.totalClicks, humans.length, 'performance: totalClicks are the people');
  t.equal(m.filteredClicks, filtered, 'performance: filteredClicks');
  const days = perf.body.data as { clicks: number; filteredClicks: number }[];
  t.equal(
    days.reduce((n, d) => n + d.filteredClicks, 0),
    filtered,
    'filteredClicks by day',
  );
  const partnerPerf = await getJson(
    `${svc.baseUrl}/api/tracking/performance/${program.id}?period=7d&partnerId=${a.partnerId}`,
    auth,
  );
  const pm = partnerPerf.body.metrics as { totalClicks: number; filteredClicks: number };
  t.equal(pm.totalClicks, humans.filter((s) => s.link === a).length, "a partner's clicks");
  t.equal(pm.filteredClicks, sent.filter((s) => s.link === a && s.quality !== 'human').length);

  const br = await getJson(
    `${svc.baseUrl}/api/tracking/breakdown/${program.id}?dimension=device&period=7d`,
    auth,
  );
  t.equal(br.status, 200);
  const rows = br.body.data as { key: string; clicks: number }[];
  t.equal(
    rows.reduce((n, r) => n + r.clicks, 0),
    humans.length,
    'the device breakdown answer counts people',
  );
  t.equal(rows.find((r) => r.key === 'bot')?.clicks, 1, 'and only the backend under bot');

  const ev = await getJson(
    `${svc.baseUrl}/api/tracking/events/${program.id}?eventType=click&pageSize=100`,
    auth,
  );
  t.equal(ev.status, 200);
  const events = ev.body.data as { click_id: string; quality: string }[];
  t.equal(events.length, sent.length, 'the events list shows every click');
  t.equal((ev.body.meta as { pagination: { total: number } }).pagination.total, sent.length, 'and its total');
  for (const e of events) t.equal(e.quality, clickIds.get(e.click_id)!.quality, `events: ${e.click_id}`);
  const page2 = await getJson(
    `${svc.baseUrl}/api/tracking/events/${program.id}?eventType=click&pageSize=5&page=2`,
    auth,
  );
  t.same(
    (page2.body.data as { click_id: string }[]).map((e) => e.click_id),
    events.slice(5, 10).map((e) => e.click_id),
    'pages cut the same list',
  );

  // The partner's own list in the portal: its clicks that count, never a bot or a prefetch.
  const mine = await getJson(
    `${svc.baseUrl}/api/partner/programs/${program.id}/events?eventType=click&pageSize=100`,
    bearer(aAccount.session),
  );
  t.equal(mine.status, 200);
  const own = mine.body.data as { click_id: string; quality: string }[];
  t.same(
    own.map((e) => clickIds.get(e.click_id)?.name).sort(),
    humans
      .filter((s) => s.link === a)
      .map((s) => s.name)
      .sort(),
    "the portal lists the partner's people only",
  );
  t.ok(
    own.every((e) => e.quality === 'human'),
    'each with quality human',
  );
  t.equal(
    (mine.body.meta as { pagination: { total: number } }).pagination.total,
    own.length,
    'and counts them',
  );
});

/** A click message as the ingress produces it, with `quality` when not a person's. */
function message(link: typeof a, sf: Snowflake, quality?: 'bot' | 'prefetch'): ClickMessage {
  const { id, ms } = sf.next();
  return {
    v: 1,
    type: 'click',
    event_id: id.toString(),
    ts: ms,
    program_id: link.programId,
    link_id: link.id,
    partner_id: link.partnerId,
    partner_program_id: link.partnerProgramId,
    click_id: formatClickId(link.partnerProgramId, id),
    is_test: false,
    ...(quality ? { quality } : {}),
    ip: '8.8.4.4',
    user_agent: null,
    page_url: null,
    page_title: null,
    referrer_url: null,
    session_id: null,
    screen_resolution: null,
    viewport_size: null,
    language: null,
    timezone: null,
  };
}

t.test('exactly once under redelivery: a chunk persisted twice, a message delivered twice', async (t) => {
  const p = await createProgram(sql);
  const link = await createLink(sql, p.id);
  const sf = new Snowflake(4011);
  const persist = createPersistClicksStep({ sql });
  const qualities = [undefined, 'bot', 'prefetch', undefined, 'bot'] as const;
  const chunk: EnrichedClick[] = Array.from({ length: 30 }, (_, i) => ({
    ...message(link, sf, qualities[i % qualities.length]),
    device_type: 'desktop',
    device_os: null,
    browser_name: null,
    geo_country: null,
    geo_region: null,
    geo_city: null,
  }));
  const humanN = chunk.filter((c) => c.quality === undefined).length;
  t.same(await persist(chunk), { inserted: 30, duplicates: 0, counted: humanN, filtered: 30 - humanN });
  t.same(await persist(chunk), { inserted: 0, duplicates: 30, counted: 0, filtered: 0 }, 'redelivered');
  const [l] = await sql<{ n: number }[]>`select clicks::int as n from referral_links where id = ${link.id}`;
  t.equal(l!.n, humanN);
  const [d] = await sql<
    { n: number }[]
  >`select clicks::int as n from program_daily_stats where program_id = ${p.id}`;
  t.equal(d!.n, humanN);
  t.equal(
    (await sql`select 1 from customers where link_id = ${link.id}`).length,
    30,
    'every stored click has its customer (a sale through a bot click is then held, not lost)',
  );
  t.same((await checkProgram(sql, p.id, { first: null, last: null })).map(describe), []);

  // Through Kafka: a bot's message twice, then a person's on the same key as the sentinel.
  const log = createLogger('test', 'warn');
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
    log,
  );
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const topic = topicName(svc.prefix, 'clicks');
  const bot = message(link, sf, 'bot');
  for (let i = 0; i < 2; i++)
    await producer.send({ topic, messages: [{ key: bot.click_id, value: JSON.stringify(bot) }] });
  const sentinel = { ...message(link, sf), click_id: bot.click_id };
  await producer.send({ topic, messages: [{ key: sentinel.click_id, value: JSON.stringify(sentinel) }] });
  await waitFor(
    'sentinel persisted',
    async () => (await sql`select 1 from click_events where event_id = ${sentinel.event_id}`).length === 1,
  );
  const [after] = await sql<{ n: number; bots: number }[]>`
    select (select clicks::int from referral_links where id = ${link.id}) as n,
           (select count(*)::int from click_events where link_id = ${link.id} and quality = 'bot') as bots`;
  t.equal(after!.n, humanN + 1, 'the bot counted nowhere, the person once');
  t.equal(after!.bots, chunk.filter((c) => c.quality === 'bot').length + 1, 'the bot stored once');
});
