// Issue 11 item 2: a click's optional event_id makes retries safe. The same event_id for the same program,
// sent again one after the other or many at once, is answered with the same click_id and stored and
// counted once (link and partner counters, daily rollup); without one, every click is its own.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import type { LinkFixture } from '../helpers/stack.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker']);
const click = (link: LinkFixture, extra: Record<string, unknown> = {}) =>
  postJson(`${svc.baseUrl}/api/v1/track/click`, {
    affiliate_url: `https://shop.example/?aff=${link.shortLink}`,
    ...extra,
  });

/**
 * Waits until the worker has stored `n` clicks of the link besides the marker (a full run once counted the
 * marker among them: it has a partition of its own and was stored before the last click), then reads every
 * count of it.
 */
async function counts(link: LinkFixture, n: number) {
  await waitFor(`${n} stored clicks of ${link.shortLink}`, async () => {
    const [r] = await sql<
      { n: number }[]
    >`select count(*)::int as n from click_events where link_id = ${link.id} and page_title is distinct from 'marker'`;
    return r!.n >= n;
  });
  // A duplicate still in the pipeline would land right behind: a marker click through the same
  // partition order is not available, so read after the consumer caught up with everything produced.
  await waitFor('the click worker caught up', async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from click_events where link_id = ${link.id} and page_title = 'marker'`;
    return r!.n >= 1;
  });
  const [r] = await sql<{ events: number; link: number; pp: number; daily: number }[]>`
    select (select count(*)::int from click_events where link_id = ${link.id} and page_title is distinct from 'marker') as events,
           (select clicks::int - 1 from referral_links where id = ${link.id}) as link,
           (select clicks::int - 1 from partner_programs where id = ${link.partnerProgramId}) as pp,
           (select coalesce(sum(clicks), 0)::int - 1 from program_daily_stats where program_id = ${link.programId}) as daily`;
  return r!;
}

t.test('the same event_id twice, one after the other: one click_id, one stored click', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const eventId = randomUUID();
  const a = await click(link, { event_id: eventId });
  const b = await click(link, { event_id: eventId.toUpperCase() });
  t.equal(a.status, 200);
  t.equal(b.status, 200);
  t.equal(b.body.click_id, a.body.click_id, 'the retry gets the same click_id');
  // Same partition as the clicks (same click id key): behind both of them.
  await click(link, { event_id: eventId, page_title: 'unused' });
  await click(link, { page_title: 'marker', existing_click_id: a.body.click_id });
  t.same(await counts(link, 1), { events: 1, link: 1, pp: 1, daily: 1 }, 'stored and counted once');
});

t.test('the same event_id 12 times at once: one click_id, one stored click', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const eventId = randomUUID();
  const answers = await Promise.all(Array.from({ length: 12 }, () => click(link, { event_id: eventId })));
  t.same(
    answers.map((a) => a.status),
    Array(12).fill(200),
  );
  const ids = new Set(answers.map((a) => a.body.click_id));
  t.equal(ids.size, 1, 'every concurrent retry got the same click_id');
  await click(link, { page_title: 'marker', existing_click_id: answers[0]!.body.click_id });
  t.same(await counts(link, 1), { events: 1, link: 1, pp: 1, daily: 1 }, 'stored and counted once');
});

t.test('different event_ids, or none, are different clicks; the event_id is per program', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const other = await createLink(sql, (await createProgram(sql)).id);
  const shared = randomUUID();
  const a = await click(link, { event_id: shared });
  const b = await click(link, { event_id: randomUUID() });
  const c = await click(link);
  const d = await click(link);
  const e = await click(other, { event_id: shared });
  const ids = [a, b, c, d].map((r) => r.body.click_id);
  t.equal(new Set(ids).size, 4, 'four clicks, four click ids');
  t.equal(e.status, 200);
  t.not(e.body.click_id, a.body.click_id, 'the same event_id in another program is another click');
  await click(link, { page_title: 'marker' });
  t.same(await counts(link, 4), { events: 4, link: 4, pp: 4, daily: 4 });
});

t.test('an event_id that is not a UUID: 400 with a clear error', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  for (const bad of ['abc', 12, { id: 1 }, '']) {
    const r = await click(link, { event_id: bad });
    t.same({ status: r.status, body: r.body }, { status: 400, body: { error: 'event_id must be a UUID' } });
  }
});
