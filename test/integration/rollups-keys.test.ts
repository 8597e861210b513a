// The keys of the dimensional rollup and its bound, on Postgres without the services: the workers'
// TypeScript key rules equal the SQL ones of the rebuild and the check on awkward values; a visit dimension
// keeps KEYS_PER_DAY keys a day and counts the rest under `other`, across transactions; the check finds a
// corrupted row; the rebuild restores it, also while the rows are being written.
import t from 'tap';
import { createLink, createProgram, testSql } from '../helpers/stack.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { KEYS_PER_DAY, landingPageKey, referrerKey, visitKeys } from '../../shared/rollups/rules.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';
import { rawBreakdown } from '../../shared/rollups/raw.ts';
import { rebuildDay, rebuildProgram } from '../../shared/rollups/operations.ts';

const sql = testSql(t);
const DAY = '2026-01-15';
const at = (h: number) => Date.parse(`${DAY}T${String(h).padStart(2, '0')}:00:00Z`);

let nextEvent = 1n;
/** A stored non-test click, its customer and the rollups, as the click worker writes them. */
async function storeClick(
  programId: number,
  link: { id: number; partnerId: number; partnerProgramId: number },
  c: { ts: number; referrer?: string | null; page?: string | null; country?: string | null },
) {
  const eventId = String(nextEvent++ + 10_000_000n);
  const click = {
    geo_country: c.country ?? null,
    device_type: 'desktop',
    browser_name: 'Chrome',
    device_os: 'Linux',
    referrer_url: c.referrer ?? null,
    page_url: c.page ?? null,
  };
  const clickId = `cust_${link.partnerProgramId}_${eventId}`;
  await sql.begin(async (tx) => {
    await tx`select ensure_click_event_partitions(${new Date(c.ts)}, ${new Date(c.ts)})`;
    await tx`
      insert into click_events (event_id, click_timestamp, program_id, link_id, partner_id, partner_program_id,
                                click_id, is_test, geo_country, device_type, browser_name, device_os, referrer_url, page_url)
      values (${eventId}, ${new Date(c.ts)}, ${programId}, ${link.id}, ${link.partnerId}, ${link.partnerProgramId},
              ${clickId}, false, ${click.geo_country}, ${click.device_type}, ${click.browser_name}, ${click.device_os},
              ${click.referrer_url}, ${click.page_url})`;
    const k = visitKeys(click);
    await tx`
      insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                             first_click_at, last_click_at, attr_country, attr_device, attr_browser, attr_os,
                             attr_referrer, attr_landing_page)
      values (${programId}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${clickId}, 'click',
              ${new Date(c.ts)}, ${new Date(c.ts)}, ${k.country}, ${k.device}, ${k.browser}, ${k.os}, ${k.referrer},
              ${k.landing_page})`;
    const r = new RollupBuffer();
    r.add(programId, c.ts, { clicks: 1 }, { partner: String(link.partnerId), link: String(link.id), ...k });
    await r.flush(tx);
  });
}

t.test('the TypeScript key rules equal the SQL ones', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const referrers = [
    null,
    '',
    'https://www.Google.com/search?q=1',
    'HTTP://EXAMPLE.COM',
    'https://user:pass@Host.Example:8080/x',
    'https://[2001:DB8::1]:443/path',
    'android-app://com.google.android.gm/',
    'www.example.com/no-scheme',
    '//example.com/protocol-relative',
    'https://ÜNÏ.example/ä',
    'https://example.com?x=1',
    'https://example.com#frag',
    'mailto:someone@example.com',
    'not a url at all',
    `https://${'a'.repeat(400)}.example/`,
  ];
  const pages = [
    null,
    '',
    'https://shop.example/p?utm=1#x',
    'https://shop.example/p#x?y',
    '?only-query',
    '#only-fragment',
    '/relative/path?x',
    `https://shop.example/${'é'.repeat(500)}`,
    'https://shop.example/😀?x',
  ];
  const n = Math.max(referrers.length, pages.length);
  for (let i = 0; i < n; i++) {
    await storeClick(program.id, link, {
      ts: at(1) + i,
      referrer: referrers[i % referrers.length]!,
      page: pages[i % pages.length]!,
    });
  }
  const raw = await rawBreakdown(sql, program.id, { first: DAY, last: DAY }, 'clicks');
  const keysOf = (d: string) => new Set(raw.filter((r) => r.dimension === d).map((r) => r.key));
  const want = (f: (v: string | null) => string, values: (string | null)[]) =>
    new Set(Array.from({ length: n }, (_, i) => f(values[i % values.length]!)));
  t.same(keysOf('referrer'), want(referrerKey, referrers), 'referrer hosts');
  t.same(keysOf('landing_page'), want(landingPageKey, pages), 'landing pages');
  t.ok(keysOf('referrer').has('www.google.com'), 'lower case');
  t.ok(keysOf('referrer').has('[2001:db8::1]'), 'an IPv6 host');
  t.ok(keysOf('referrer').has('unknown'), 'no referrer');
  t.equal(
    [...keysOf('landing_page')].find((k) => k.includes('é'))!.length,
    300,
    'a long page is cut to 300 characters',
  );
  t.same((await checkProgram(sql, program.id, { first: null, last: null })).map(describe), []);
});

t.test(`a visit dimension keeps ${KEYS_PER_DAY} keys a day; the rest count under other`, async (t) => {
  const program = await createProgram(sql);
  const page = (i: number) => `https://shop.example/page-${String(i).padStart(4, '0')}`;
  // One transaction with 260 pages, then two more with an admitted page and a new one.
  await sql.begin(async (tx) => {
    const r = new RollupBuffer();
    for (let i = 0; i < KEYS_PER_DAY + 10; i++)
      r.add(program.id, at(2), { clicks: 1 }, { landing_page: page(i), country: 'unknown' });
    await r.flush(tx);
  });
  const rows = async () =>
    new Map(
      (
        await sql<{ key: string; clicks: number }[]>`
          select key, clicks::int from program_daily_breakdown
          where program_id = ${program.id} and dimension = 'landing_page'`
      ).map((r) => [r.key, r.clicks]),
    );
  let got = await rows();
  t.equal(got.size, KEYS_PER_DAY + 1, `${KEYS_PER_DAY} pages and other`);
  t.equal(got.get('other'), 10, 'ten clicks under other');
  t.equal(got.get(page(0)), 1, 'the first pages (key order within a chunk) kept');
  t.notOk(got.has(page(KEYS_PER_DAY)), 'the last ones not');
  for (let i = 0; i < 2; i++) {
    await sql.begin(async (tx) => {
      const r = new RollupBuffer();
      r.add(program.id, at(3), { clicks: 1 }, { landing_page: page(5) });
      r.add(program.id, at(3), { clicks: 1 }, { landing_page: `https://shop.example/late-${i}` });
      r.add(program.id, at(3), { clicks: 1 }, { landing_page: 'unknown' });
      await r.flush(tx);
    });
  }
  got = await rows();
  t.equal(got.get(page(5)), 3, 'an admitted page keeps counting');
  t.equal(got.get('other'), 12, 'a new page of a full day counts under other');
  t.equal(got.get('unknown'), 2, 'unknown is always kept');
  // Another day starts empty.
  await sql.begin(async (tx) => {
    const r = new RollupBuffer();
    r.add(program.id, at(3) + 86_400_000, { clicks: 1 }, { landing_page: page(KEYS_PER_DAY + 5) });
    await r.flush(tx);
  });
  const [next] = await sql<{ key: string }[]>`
    select key from program_daily_breakdown where program_id = ${program.id} and day = '2026-01-16'`;
  t.equal(next!.key, page(KEYS_PER_DAY + 5), 'the next day admits new keys again');
});

t.test('concurrent writers of one day never admit more than the cap', async (t) => {
  const program = await createProgram(sql);
  await Promise.all(
    Array.from({ length: 8 }, (_, w) =>
      sql.begin(async (tx) => {
        const r = new RollupBuffer();
        for (let i = 0; i < 40; i++)
          r.add(program.id, at(4), { clicks: 1 }, { referrer: `w${w}-${i}.example` });
        await r.flush(tx);
      }),
    ),
  );
  const [r] = await sql<{ keys: number; clicks: number; other: number }[]>`
    select count(*) filter (where key <> 'other')::int as keys, sum(clicks)::int as clicks,
           coalesce(sum(clicks) filter (where key = 'other'), 0)::int as other
    from program_daily_breakdown where program_id = ${program.id} and dimension = 'referrer'`;
  t.equal(r!.keys, KEYS_PER_DAY, 'exactly the cap');
  t.equal(r!.clicks, 320, 'every click counted');
  t.equal(r!.other, 320 - KEYS_PER_DAY, 'the rest under other');
});

t.test('the check finds a wrong row; the rebuild writes the raw events back, capped', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  for (let i = 0; i < KEYS_PER_DAY + 20; i++) {
    await storeClick(program.id, link, {
      ts: at(5) + i,
      page: `https://shop.example/${i}`,
      country: i % 3 === 0 ? 'DE' : null,
    });
  }
  const all = { first: null, last: null };
  t.same((await checkProgram(sql, program.id, all)).map(describe), [], 'as the workers wrote it: equal');
  await sql`update program_daily_breakdown set clicks = clicks + 1
            where program_id = ${program.id} and dimension = 'country' and key = 'DE'`;
  await sql`update program_daily_breakdown set leads = 1
            where program_id = ${program.id} and dimension = 'landing_page' and key = 'other'`;
  const diffs = (await checkProgram(sql, program.id, all)).map(describe);
  // Each wrong day row, and its week's row, which no longer is the sum of its days.
  t.equal(diffs.length, 4, 'both found, and their weeks');
  t.match(
    diffs.join('\n'),
    /country "DE": weekly row differs from the sum of its days: clicks \d+ \(raw \d+\)/,
  );
  t.match(diffs.join('\n'), /country "DE": key row differs from the raw events: clicks \d+ \(raw \d+\)/);
  t.match(diffs.join('\n'), /landing_page "other": `other` differs/);
  await rebuildDay(sql, program.id, DAY);
  t.same((await checkProgram(sql, program.id, all)).map(describe), [], 'rebuilt: equal');
  const [pages] = await sql<{ n: number }[]>`
    select count(*)::int as n from program_daily_breakdown
    where program_id = ${program.id} and dimension = 'landing_page' and key not in ('other', 'unknown')`;
  t.equal(pages!.n, KEYS_PER_DAY, 'the rebuild keeps the cap');
});

t.test('the rebuild fills the keys of customers created before the migration', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  await storeClick(program.id, link, { ts: at(6), country: 'FR', referrer: 'https://ref.example/' });
  const [c] = await sql<{ id: string }[]>`select id from customers where program_id = ${program.id}`;
  await sql`update customers set attr_country = null, attr_device = null, attr_browser = null, attr_os = null,
                                 attr_referrer = null, attr_landing_page = null where id = ${c!.id}`;
  await sql`insert into lead_events (request_id, program_id, customer_id, is_test, lead_timestamp)
            values (${`old-lead-${c!.id}`}, ${program.id}, ${c!.id}, false, ${new Date(at(7))})`;
  await sql`update program_daily_stats set leads = leads + 1 where program_id = ${program.id}`;
  const diffs = await checkProgram(sql, program.id, { first: null, last: null });
  t.ok(diffs.length > 0, 'an old lead the workers never counted by dimension: the check sees it');
  await rebuildProgram(sql, program.id);
  t.same((await checkProgram(sql, program.id, { first: null, last: null })).map(describe), []);
  const [filled] = await sql<{ attr_country: string; attr_referrer: string }[]>`
    select attr_country, attr_referrer from customers where id = ${c!.id}`;
  t.same(filled, { attr_country: 'FR', attr_referrer: 'ref.example' });
});
