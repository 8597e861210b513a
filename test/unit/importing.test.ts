// The importers' pure rules (docs/importing.md): an imported commission's state and ledger entries, the rate
// limit and the waits a 429 asks for, credentials sealed at rest, the CSV reader, and the sources' mappings
// of names and terms (Rewardful's "Unknown" last name, its campaigns, Dub's groups).
import t from 'tap';
import { createImported } from '../../shared/commissions/states.ts';
import {
  marginMs,
  parseRateLimit,
  remember,
  retryWaitMs,
  waitBeforeNext,
} from '../../shared/importing/rate-limit.ts';
import { parseSecretKey, seal, unseal } from '../../shared/importing/secrets.ts';
import { parseCsv } from '../../shared/csv.ts';
import { parseDuration } from '../../shared/config-mail.ts';
import { parsePolicy } from '../../shared/domain/commission-policy.ts';
import { affiliateName, campaignPolicy } from '../../shared/importing/sources/rewardful.ts';
import { groupPolicy } from '../../shared/importing/sources/dub.ts';
import { csvHeaderError } from '../../shared/importing/sources/csv.ts';
import { baseUrlError } from '../../shared/importing/http.ts';

const c = { id: 7, partner_id: 2, partner_program_id: 3, amount_cents: 1500 };

t.test('an imported commission arrives in its state with the entries that state means', async (t) => {
  const at = new Date('2026-01-02T03:04:05Z');
  const kinds = (d: ReturnType<typeof createImported>) => d.ledger.map((e) => [e.kind, e.amount_cents]);
  let d = createImported(c, 'pending', { name: 'Rewardful', paidAt: null });
  t.same([d.write, kinds(d), d.announce, d.notifications], [{}, [['commission_created', 1500]], false, []]);
  d = createImported(c, 'approved', { name: 'Rewardful', paidAt: null });
  t.same(d.write, { status: 'approved' });
  d = createImported(c, 'paid', { name: 'Rewardful', paidAt: at });
  t.same(d.write, { status: 'paid', paid_at: at }, 'paid at the source’s time, in no payout');
  t.same(kinds(d), [
    ['commission_created', 1500],
    ['commission_paid', -1500],
  ]);
  d = createImported(c, 'rejected', { name: 'Dub', paidAt: null });
  t.same(d.write, { status: 'reversed', deducted_cents: 1500, refund_reason: 'rejected: Dub' });
  t.same(kinds(d), [
    ['commission_created', 1500],
    ['commission_reversed', -1500],
  ]);
  t.equal(d.notifications.length, 0, 'history: nobody notified');
});

t.test('the rate limit: never more than `requests` in a window (and its margin)', async (t) => {
  const limit = { requests: 3, windowMs: 1000 };
  const m = marginMs(limit);
  t.equal(m, 250);
  t.equal(waitBeforeNext([], 10_000, limit), 0);
  t.equal(waitBeforeNext([9_000, 9_500], 10_000, limit), 0, 'two in the window: a third may go');
  t.equal(waitBeforeNext([9_800, 9_900, 9_950], 10_000, limit), 9_800 + 1000 + m - 10_000);
  t.equal(
    waitBeforeNext([8_000, 9_900, 9_950, 9_990], 10_000, limit),
    9_900 + 1000 + m - 10_000,
    'old ones do not count',
  );
  t.same(remember([1, 9_000, 9_500], 10_000, limit), [9_000, 9_500, 10_000]);
  t.same(parseRateLimit('45/30s', parseDuration), { requests: 45, windowMs: 30_000 });
  t.equal(parseRateLimit('45', parseDuration), null);
  t.equal(parseRateLimit('0/1s', parseDuration), null);
});

t.test('how long a 429 asks to wait', async (t) => {
  const now = Date.parse('2026-12-05T00:00:00Z');
  t.equal(retryWaitMs({ 'retry-after': '2' }, now), 2000);
  t.equal(retryWaitMs({ 'retry-after': 'Sat, 05 Dec 2026 00:00:03 GMT' }, now), 3000, 'an HTTP date');
  t.equal(retryWaitMs({ 'ratelimit-reset': '7' }, now), 7000, 'draft RateLimit-Reset: seconds');
  t.equal(retryWaitMs({ 'x-ratelimit-reset': String(now / 1000 + 4) }, now), 4000, 'a Unix time');
  t.equal(retryWaitMs({}, now), null);
  t.equal(retryWaitMs({ 'retry-after': 'soon' }, now), null);
});

t.test('credentials are sealed for their program with the key', async (t) => {
  const key = parseSecretKey('ab'.repeat(32))!;
  t.equal(key.length, 32);
  t.equal(parseSecretKey('short'), null);
  t.equal(parseSecretKey(Buffer.alloc(32, 7).toString('base64'))?.length, 32, 'base64 too');
  const box = seal(key, 5, '{"api_secret":"s3cret"}');
  t.notOk(box.toString('latin1').includes('s3cret'));
  t.equal(unseal(key, 5, box), '{"api_secret":"s3cret"}');
  t.throws(() => unseal(key, 6, box), 'another program does not open it');
  t.throws(() => unseal(parseSecretKey('cd'.repeat(32))!, 5, box), 'another key does not open it');
});

t.test('CSV as spreadsheets write it', async (t) => {
  t.same(parseCsv('\ufeffa,b\r\n"x, y","he said ""hi"""\n\n1,\r\n'), [
    ['a', 'b'],
    ['x, y', 'he said "hi"'],
    [''],
    ['1', ''],
  ]);
  t.same(parseCsv('"multi\nline",2'), [['multi\nline', '2']]);
  t.equal(csvHeaderError('Email,Name\r\n'), null, 'any case');
  t.match(csvHeaderError('name,link\n'), /one of them email/);
});

t.test("the sources' names and terms", async (t) => {
  t.equal(
    affiliateName({ first_name: 'Ann', last_name: 'Unknown' }),
    'Ann',
    'Rewardful’s placeholder is no name',
  );
  t.equal(affiliateName({ first_name: 'Ann', last_name: 'Lee' }), 'Ann Lee');
  t.match(
    parsePolicy(
      campaignPolicy({ reward_type: 'percent', commission_percent: 25, max_commission_period_months: 6 }),
    ),
    {
      type: 'percentage',
      percent: 25,
      recurring: { mode: 'recurring', months: 6 },
    },
  );
  t.match(
    parsePolicy(campaignPolicy({ reward_type: 'amount', commission_amount_cents: 500, max_commissions: 1 })),
    {
      type: 'flat',
      amount_cents: 500,
      recurring: { mode: 'one_time' },
    },
  );
  t.match(
    parsePolicy(
      campaignPolicy({ reward_type: 'percent', commission_percent: 10, max_commission_period_months: 0 }),
    ),
    {
      recurring: { mode: 'one_time' },
    },
  );
  t.match(parsePolicy(campaignPolicy({ reward_type: 'percent', commission_percent: 10 })), {
    recurring: { mode: 'recurring', months: null },
  });
  t.match(parsePolicy(groupPolicy({ saleReward: { type: 'percentage', amount: 20, maxDuration: 0 } })), {
    type: 'percentage',
    percent: 20,
    recurring: { mode: 'one_time' },
  });
  t.match(parsePolicy(groupPolicy({ saleReward: { type: 'flat', amount: 1000, maxDuration: null } })), {
    type: 'flat',
    amount_cents: 1000,
    recurring: { mode: 'recurring', months: null },
  });
  t.type(
    parsePolicy(campaignPolicy({ reward_type: 'percent', commission_percent: 250 })),
    'string',
    'invalid terms',
  );
});

t.test('api_base_url is http(s) without credentials', async (t) => {
  t.equal(baseUrlError('https://proxy.example/rewardful'), null);
  t.equal(baseUrlError('http://127.0.0.1:8080'), null);
  t.equal(
    baseUrlError('ftp://x.example'),
    'options.api_base_url must be an absolute http:// or https:// URL',
  );
  t.equal(baseUrlError('not a url'), 'options.api_base_url must be an absolute http:// or https:// URL');
  t.equal(
    baseUrlError('https://u:p@x.example'),
    'options.api_base_url must not contain a user name or password',
  );
});
