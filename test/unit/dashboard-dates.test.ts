// The dashboard's date parser: ISO 8601 dates and date-times become inclusive ranges of epoch
// microseconds; malformed values and empty ranges are 400 with their exact messages.
import t from 'tap';
import {
  DAY_US,
  dayEndIso,
  dayNumber,
  dayStartIso,
  dayString,
  isoMicros,
  parseIsoDate,
  parseRange,
} from '../../services/api/modules/dashboard/dates.ts';

const us = (iso: string) => Date.parse(iso) * 1000;

t.test('dates and date-times, with and without offsets', async (t) => {
  t.same(parseIsoDate('2025-01-31'), { us: us('2025-01-31T00:00:00Z'), cut: false, dateOnly: true });
  t.same(parseIsoDate('2025-01-31T12:00:00Z'), {
    us: us('2025-01-31T12:00:00Z'),
    cut: false,
    dateOnly: false,
  });
  t.equal(parseIsoDate('2025-01-31T12:00')!.us, us('2025-01-31T12:00:00Z'), 'no offset = UTC');
  t.equal(parseIsoDate('2025-01-31T12:00:00+02:00')!.us, us('2025-01-31T10:00:00Z'));
  t.equal(parseIsoDate('2025-01-31T12:00:00-0130')!.us, us('2025-01-31T13:30:00Z'));
  t.equal(
    parseIsoDate('2025-01-31T12:00:00 02:00')!.us,
    us('2025-01-31T10:00:00Z'),
    'a decoded "+" is a space',
  );
  t.equal(parseIsoDate('2025-01-31 12:00:00Z')!.us, us('2025-01-31T12:00:00Z'), 'space as the separator');
});

t.test('fractions keep microseconds; digits beyond are cut and flagged', async (t) => {
  t.same(parseIsoDate('2025-01-31T12:00:00.123456Z'), {
    us: us('2025-01-31T12:00:00Z') + 123_456,
    cut: false,
    dateOnly: false,
  });
  t.same(parseIsoDate('2025-01-31T12:00:00.1234567Z'), {
    us: us('2025-01-31T12:00:00Z') + 123_456,
    cut: true,
    dateOnly: false,
  });
  t.equal(parseIsoDate('2025-01-31T12:00:00.123456000Z')!.cut, false, 'trailing zeros are not a cut');
});

t.test('what is not a date', async (t) => {
  for (const s of [
    '2025-02-30',
    '2025-13-01',
    '2025-00-10',
    '1899-12-31',
    '2200-01-01',
    '2025-01-31T24:00:00Z',
    '2025-01-31T12:60:00Z',
    '2025-01-31T12:00:60Z',
    '2025-01-31T12:00:00+24:00',
    '2025-01-31T12:00:00 Z',
    '31/01/2025',
    '2025-1-31',
    '',
  ]) {
    t.equal(parseIsoDate(s), null, s);
  }
  t.ok(parseIsoDate('2024-02-29'), 'leap day');
});

t.test('ranges: inclusive bounds as [lo, hi)', async (t) => {
  t.same(parseRange({}), { lo: null, hi: null });
  t.same(
    parseRange({ dateFrom: '2025-01-01', dateTo: '2025-01-01' }),
    {
      lo: us('2025-01-01T00:00:00Z'),
      hi: us('2025-01-01T00:00:00Z') + DAY_US,
    },
    'a date-only dateTo includes its whole day',
  );
  t.same(parseRange({ dateTo: '2025-01-01T10:00:00Z' }), { lo: null, hi: us('2025-01-01T10:00:00Z') + 1 });
  t.same(
    parseRange({ dateFrom: '2025-01-01T10:00:00.0000001Z' }),
    { lo: us('2025-01-01T10:00:00Z') + 1, hi: null },
    'a cut lower bound moves to the next microsecond',
  );
  t.same(
    parseRange({ dateFrom: '2025-01-01T10:00:00Z', dateTo: '2025-01-01T10:00:00Z' }).hi! -
      parseRange({ dateFrom: '2025-01-01T10:00:00Z', dateTo: '2025-01-01T10:00:00Z' }).lo!,
    1,
    'one instant',
  );
});

t.test('ranges: exact 400 messages', async (t) => {
  t.throws(() => parseRange({ dateFrom: '2025-01-02', dateTo: '2025-01-01' }), {
    statusCode: 400,
    message: 'dateFrom must not be after dateTo',
  });
  t.throws(() => parseRange({ dateTo: 'yesterday' }), {
    statusCode: 400,
    message: 'dateTo must be an ISO 8601 date or date-time (e.g. 2025-01-31 or 2025-01-31T12:00:00Z)',
  });
  t.throws(() => parseRange({ dateFrom: 5 }), { statusCode: 400, message: /^dateFrom must be an ISO 8601/ });
});

t.test('day helpers', async (t) => {
  const d = dayNumber('2025-03-04');
  t.equal(dayString(d), '2025-03-04');
  t.equal(dayStartIso(d), '2025-03-04T00:00:00.000Z');
  t.equal(dayEndIso(d), '2025-03-04T23:59:59.999Z');
  t.equal(isoMicros(us('2025-03-04T05:06:07.123Z') + 456), '2025-03-04T05:06:07.123456Z');
});
