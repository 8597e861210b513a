// The events paging plan: a date range becomes whole UTC days (counted by the daily rollup) and partial
// days at its edges (counted in SQL); a page number becomes the narrowest instant window to read, the
// event tables present in it, and the offset inside it.
import t from 'tap';
import { DAY_US } from '../../services/api/modules/dashboard/dates.ts';
import {
  daySegment,
  orderSegments,
  planPage,
  splitRange,
} from '../../services/api/modules/dashboard/events.ts';
import type { Segment } from '../../services/api/modules/dashboard/events.ts';

const HOUR_US = DAY_US / 24;
const day = (n: number) => n * DAY_US;

t.test('splitRange: whole days and partial edges, newest first', async (t) => {
  t.same(
    splitRange({ lo: null, hi: null }),
    { partial: [], whole: { first: null, last: null } },
    'unbounded',
  );
  t.same(splitRange({ lo: day(10), hi: day(13) }), { partial: [], whole: { first: 10, last: 12 } });
  t.same(
    splitRange({ lo: day(10), hi: day(11) }),
    { partial: [], whole: { first: 10, last: 10 } },
    'one day',
  );
  t.same(
    splitRange({ lo: day(10) + HOUR_US, hi: day(10) + 2 * HOUR_US }),
    { partial: [{ lo: day(10) + HOUR_US, hi: day(10) + 2 * HOUR_US }], whole: null },
    'inside one day: one partial, no whole day',
  );
  t.same(
    splitRange({ lo: day(10) + HOUR_US, hi: day(12) + HOUR_US }),
    {
      partial: [
        { lo: day(12), hi: day(12) + HOUR_US },
        { lo: day(10) + HOUR_US, hi: day(11) },
      ],
      whole: { first: 11, last: 11 },
    },
    'both edges partial, the newer first',
  );
  t.same(
    splitRange({ lo: day(10) + HOUR_US, hi: day(11) + HOUR_US }),
    {
      partial: [
        { lo: day(11), hi: day(11) + HOUR_US },
        { lo: day(10) + HOUR_US, hi: day(11) },
      ],
      whole: null,
    },
    'two adjacent partial days and no whole one',
  );
  t.same(
    splitRange({ lo: day(10) + HOUR_US, hi: null }),
    { partial: [{ lo: day(10) + HOUR_US, hi: day(11) }], whole: { first: 11, last: null } },
    'open upper bound',
  );
  t.same(
    splitRange({ lo: null, hi: day(10) + 1 }),
    { partial: [{ lo: day(10), hi: day(10) + 1 }], whole: { first: null, last: 9 } },
    'open lower bound, an instant into day 10',
  );
});

t.test('daySegment counts only the wanted kinds; orderSegments drops empty ones, newest first', async (t) => {
  const c = { clicks: 3, leads: 2, sales: 1 };
  t.same(daySegment(5, c, ['click', 'lead', 'conversion']).counts, { click: 3, lead: 2, conversion: 1 });
  t.same(daySegment(5, c, ['lead']), {
    lo: day(5),
    hi: day(6),
    counts: { click: 0, lead: 2, conversion: 0 },
  });
  const segs = orderSegments([
    daySegment(1, c, ['click']),
    daySegment(3, c, ['click']),
    daySegment(2, { clicks: 0, leads: 9, sales: 0 }, ['click']),
  ]);
  t.same(
    segs.map((s) => s.lo),
    [day(3), day(1)],
  );
});

t.test('planPage: the page reads only the segments it overlaps', async (t) => {
  const segs: Segment[] = [
    { lo: 20, hi: 30, counts: { click: 5, lead: 0, conversion: 0 } },
    { lo: 10, hi: 20, counts: { click: 0, lead: 3, conversion: 2 } },
    { lo: 0, hi: 10, counts: { click: 4, lead: 0, conversion: 0 } },
  ];
  t.same(planPage(segs, 1, 5), {
    total: 14,
    window: { lo: 20, hi: 30, counts: { click: 5, lead: 0, conversion: 0 }, offset: 0, limit: 5 },
  });
  t.same(
    planPage(segs, 2, 5).window,
    { lo: 10, hi: 20, counts: { click: 0, lead: 3, conversion: 2 }, offset: 0, limit: 5 },
    'a newer segment the page starts after is skipped',
  );
  t.same(
    planPage(segs, 2, 4).window,
    { lo: 10, hi: 30, counts: { click: 5, lead: 3, conversion: 2 }, offset: 4, limit: 8 },
    'a page across two segments reads both',
  );
  t.same(
    planPage(segs, 4, 4).window,
    { lo: 0, hi: 10, counts: { click: 4, lead: 0, conversion: 0 }, offset: 2, limit: 6 },
    'the last, short page',
  );
  t.same(planPage(segs, 5, 4), { total: 14, window: null }, 'beyond the last page');
  t.same(planPage([], 1, 10), { total: 0, window: null }, 'no events');
});
