// The browser tracker script, run in a vm context with a minimal document/location and the real fetch
// against the real service: the click sets svc_click_id, the browser-mode lead uses it.
import t from 'tap';
import { runInNewContext } from 'node:vm';
import { createLink, createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const program = await createProgram(sql, { allowedOrigins: ['https://shop.example'] });
const link = await createLink(sql, program.id);

/** What the page's fetch does with the click's first attempt (the retry always goes through). */
type FirstAttempt = 'normal' | 'lost answer' | 'fake 503';

function browser(pageUrl: string, first: FirstAttempt = 'normal', attrs: Record<string, string> = {}) {
  const cookies = new Map<string, string>();
  const sent: { url: string; body: Record<string, unknown> }[] = [];
  const document = {
    title: 'Landing',
    referrer: 'https://blog.example/post',
    currentScript: {
      src: `${svc.baseUrl}/js/svc-tracker.js`,
      getAttribute: (n: string) => (n === 'data-program-id' ? String(program.id) : (attrs[n] ?? null)),
    },
    get cookie() {
      return [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    },
    set cookie(v: string) {
      const [pair, ...attrs] = v.split('; ');
      const [k, val] = pair!.split('=');
      cookies.set(k!, val!);
      (this as { lastAttrs?: string[] }).lastAttrs = attrs;
    },
  } as { title: string; referrer: string; cookie: string; lastAttrs?: string[]; currentScript: unknown };
  const fetchFromPage = async (url: string, init: { body: string; headers: Record<string, string> }) => {
    sent.push({ url, body: JSON.parse(init.body) as Record<string, unknown> });
    if (sent.length === 1 && first === 'fake 503')
      return new Response(JSON.stringify({ error: 'Click tracking failed' }), { status: 503 });
    const res = await fetch(url, { ...init, headers: { ...init.headers, origin: 'https://shop.example' } });
    // The click was accepted, but its answer never reached the page (a dropped connection).
    if (sent.length === 1 && first === 'lost answer') throw new TypeError('Failed to fetch');
    return res;
  };
  const window: Record<string, unknown> = {};
  const ctx = {
    window,
    document,
    location: new URL(pageUrl),
    navigator: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/126.0', language: 'en-GB' },
    screen: { width: 1920, height: 1080 },
    innerWidth: 1200,
    innerHeight: 800,
    fetch: fetchFromPage,
    URL,
    URLSearchParams,
    Intl,
    Promise,
    JSON,
    encodeURIComponent,
    decodeURIComponent,
    RegExp,
    Number,
    Math,
    Uint8Array,
    crypto,
    setTimeout,
  };
  return { ctx, cookies, sent, document, window };
}

t.test('GET /js/svc-tracker.js serves the script', async (t) => {
  const r = await fetch(`${svc.baseUrl}/js/svc-tracker.js`);
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /javascript/);
  t.match(await r.text(), /svc_click_id/);
});

t.test('a page with ?aff= records the click, sets the cookie, and the lead carries it', async (t) => {
  const code = await (await fetch(`${svc.baseUrl}/js/svc-tracker.js`)).text();
  const b = browser(`https://shop.example/pricing?aff=${link.shortLink}`);
  runInNewContext(code, b.ctx);
  const svcApi = b.window.svc as {
    clickId(): string | null;
    lead(o: unknown): Promise<Record<string, unknown>>;
  };
  const res = await svcApi.lead({ customer_key: 'tracker-user', email: 'u@example.com' });
  t.same(res, { success: true, message: 'Lead recorded' });
  const clickId = svcApi.clickId();
  t.match(clickId, /^cust_\d+_\d+$/);
  t.match(
    b.document.lastAttrs?.join('; '),
    /Max-Age=5184000; Path=\/; SameSite=Lax; Secure/,
    '60 days, Lax, Secure on https',
  );
  t.equal(b.sent[0]!.url, `${svc.baseUrl}/api/v1/track/click`);
  t.match(b.sent[0]!.body, {
    affiliate_url: `https://shop.example/pricing?aff=${link.shortLink}`,
    screen_resolution: '1920x1080',
    language: 'en-GB',
  });
  t.match(b.sent[1]!.body, {
    click_id: clickId,
    customer_key: 'tracker-user',
    additional_data: { program_id: program.id },
  });
  const row = await waitFor('the click', async () => {
    const [r] =
      await sql`select device_type, browser_name, page_title, timezone from click_events where click_id = ${clickId!}`;
    return r;
  });
  t.match(row, { device_type: 'desktop', browser_name: 'Firefox', page_title: 'Landing' });
  const [c] = await sql`select customer_status, customer_key from customers where click_id = ${clickId!}`;
  t.same(c, { customer_status: 'lead', customer_key: 'tracker-user' });
});

t.test('old links keep working: data-params names the parameters that carry a link code', async (t) => {
  // A link imported from Rewardful keeps its token as its code (docs/importing.md "Old links").
  const via = await createLink(sql, program.id);
  const other = await createLink(sql, program.id);
  const code = await (await fetch(`${svc.baseUrl}/js/svc-tracker.js`)).text();
  const params = { 'data-params': 'via, ref,fpr,aff' };
  const b = browser(`https://shop.example/?utm_source=x&via=${via.shortLink}`, 'normal', params);
  runInNewContext(code, b.ctx);
  const svcApi = b.window.svc as { clickId(): string | null; lead(o: unknown): Promise<unknown> };
  await svcApi.lead({ customer_key: `via-${via.shortLink}` });
  t.match(b.sent[0]!.body, {
    affiliate_url: `https://shop.example/?utm_source=x&via=${via.shortLink}&aff=${via.shortLink}`,
    page_url: `https://shop.example/?utm_source=x&via=${via.shortLink}`,
  });
  const [c] = await sql<
    { link_id: string }[]
  >`select link_id from customers where click_id = ${svcApi.clickId()!}`;
  t.equal(Number(c!.link_id), via.id, 'the click is the ?via= link’s');

  // The first of data-params present wins, in its order, whatever the URL's order.
  const both = browser(`https://shop.example/?fpr=${other.shortLink}&via=${via.shortLink}`, 'normal', params);
  runInNewContext(code, both.ctx);
  await waitFor('the click', async () => both.sent.length > 0);
  t.match(both.sent[0]!.body.affiliate_url, new RegExp(`aff=${via.shortLink}$`));

  // Without data-params only ?aff= counts, as before.
  const plain = browser(`https://shop.example/?via=${via.shortLink}`);
  runInNewContext(code, plain.ctx);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(plain.sent.length, 0);
});

t.test('a page without ?aff= sends nothing', async (t) => {
  const code = await (await fetch(`${svc.baseUrl}/js/svc-tracker.js`)).text();
  const b = browser('https://shop.example/');
  runInNewContext(code, b.ctx);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(b.sent.length, 0);
});

for (const first of ['lost answer', 'fake 503'] as const) {
  t.test(`the click is retried once with the same event_id after a ${first}, and counted once`, async (t) => {
    const l = await createLink(sql, program.id);
    const code = await (await fetch(`${svc.baseUrl}/js/svc-tracker.js`)).text();
    const b = browser(`https://shop.example/?aff=${l.shortLink}`, first);
    runInNewContext(code, b.ctx);
    const svcApi = b.window.svc as { clickId(): string | null; lead(o: unknown): Promise<unknown> };
    await svcApi.lead({ customer_key: `retry-${first}` });
    const clicks = b.sent.filter((s) => s.url.endsWith('/api/v1/track/click'));
    t.equal(clicks.length, 2, 'the click was sent twice');
    t.match(
      clicks[0]!.body.event_id,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    t.equal(clicks[1]!.body.event_id, clicks[0]!.body.event_id, 'with the same event_id');
    const clickId = svcApi.clickId();
    t.match(clickId, /^cust_\d+_\d+$/, 'the retry set the cookie');
    await waitFor('the click stored', async () => {
      const [r] = await sql`select 1 from click_events where click_id = ${clickId!}`;
      return r;
    });
    await waitFor('the lead applied', async () => {
      const [r] =
        await sql`select 1 from customers where click_id = ${clickId!} and customer_status = 'lead'`;
      return r;
    });
    const [n] = await sql<{ events: number; counter: number }[]>`
      select (select count(*)::int from click_events where link_id = ${l.id}) as events,
             (select clicks::int from referral_links where id = ${l.id}) as counter`;
    t.same(n, { events: 1, counter: 1 }, 'one stored click, counted once');
  });
}

t.test(
  'a click through a partner whose group has a discount: svc.discount, the cookie and svc:click',
  async (t) => {
    const discounted = await createLink(sql, program.id);
    const [group] = await sql<{ id: string }[]>`
    insert into program_groups (program_id, name, slug, discount)
    values (${program.id}, 'Creators', ${`creators-${discounted.partnerProgramId}`},
            ${sql.json({ type: 'percentage', percent: 15, duration: 'forever', processor_ids: { stripe: 'promo_1' } })})
    returning id`;
    await sql`update partner_programs set group_id = ${group!.id} where id = ${discounted.partnerProgramId}`;
    const code = await (await fetch(`${svc.baseUrl}/js/svc-tracker.js`)).text();
    const b = browser(`https://shop.example/?aff=${discounted.shortLink}`);
    const events: { type: string; detail: { click_id: string; discount: unknown } }[] = [];
    b.window.dispatchEvent = (e: { type: string; detail: { click_id: string; discount: unknown } }) =>
      void events.push(e);
    Object.assign(b.ctx, {
      CustomEvent: class {
        type: string;
        detail: unknown;
        constructor(type: string, init: { detail: unknown }) {
          this.type = type;
          this.detail = init.detail;
        }
      },
    });
    runInNewContext(code, b.ctx);
    await waitFor('the click answered', async () => events.length > 0, 30_000, 20);
    const want = { type: 'percentage', percent: 15, amount_cents: null, duration: 'forever', months: null };
    t.same(events[0]!.type, 'svc:click');
    t.same(events[0]!.detail.discount, want);
    t.match(events[0]!.detail.click_id, /^cust_/);
    const api = b.window.svc as { discount: unknown };
    t.same(api.discount, want, 'svc.discount');
    t.equal(b.window.svcAffiliate, b.window.svc, 'also window.svcAffiliate');
    t.same(
      JSON.parse(decodeURIComponent(b.cookies.get('svc_discount')!)),
      want,
      'kept in the svc_discount cookie',
    );
  },
);
