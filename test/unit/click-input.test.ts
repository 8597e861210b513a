import t from 'tap';
import {
  buildClickMessage,
  clickIdFor,
  extractAff,
  parseClickBody,
} from '../../services/ingress/click-message.ts';
import { errorOf } from '../helpers/errors.ts';
import { parseClickMessage } from '../../shared/contracts/clicks.ts';

t.test('extractAff: the aff value of a fully qualified http(s) URL', async (t) => {
  t.equal(extractAff('https://shop.example/?aff=abc'), 'abc');
  t.equal(extractAff('https://shop.example/pricing?utm=x&aff=abc-1_Z#top'), 'abc-1_Z');
  t.equal(extractAff('  http://localhost:3000/?aff=%20abc%20  '), 'abc', 'trimmed');
  t.equal(extractAff('https://shop.example/?aff=a&aff=b'), 'a', 'the first aff wins');
});

t.test('extractAff: the spec error strings', async (t) => {
  t.equal(
    errorOf(() => extractAff(undefined)),
    '400 affiliate_url is required',
  );
  t.equal(
    errorOf(() => extractAff(null)),
    '400 affiliate_url is required',
  );
  t.equal(
    errorOf(() => extractAff('')),
    '400 affiliate_url is required',
  );
  for (const bad of [
    'shop.example/?aff=a',
    '/path?aff=a',
    'not a url',
    'javascript:alert(1)?aff=a',
    'ftp://x/?aff=a',
    42,
    {},
  ]) {
    t.equal(
      errorOf(() => extractAff(bad)),
      '400 Invalid affiliate_url',
      `invalid: ${JSON.stringify(bad)}`,
    );
  }
  for (const noAff of [
    'https://shop.example/',
    'https://shop.example/?aff=',
    'https://shop.example/?aff=%20',
    'https://shop.example/?AFF=x',
  ]) {
    t.equal(
      errorOf(() => extractAff(noAff)),
      '400 No aff parameter found in affiliate_url',
      noAff,
    );
  }
});

const good = {
  v: 1,
  type: 'click',
  event_id: '250203861799666688',
  ts: 1795342849216,
  program_id: 1,
  link_id: 1,
  partner_id: 1,
  partner_program_id: 1,
  click_id: 'cust_1_250203861799666688',
  is_test: false,
  ip: '8.8.8.8',
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
const bytes = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

t.test('parseClickMessage accepts a well-formed click and a test click without customer', async (t) => {
  t.same(parseClickMessage(bytes(good)), good);
  const test = {
    ...good,
    is_test: true,
    click_id: null,
    link_id: null,
    partner_id: null,
    partner_program_id: null,
  };
  t.same(parseClickMessage(bytes(test)), test);
});

t.test('parseClickMessage names why a message is poison', async (t) => {
  t.equal(parseClickMessage(null), 'empty message');
  t.equal(parseClickMessage(bytes('{not json')), 'not JSON');
  t.equal(parseClickMessage(bytes('[1]')), 'not a JSON object');
  t.match(parseClickMessage(bytes({ ...good, type: 'sale' })), /unsupported message type/);
  t.equal(parseClickMessage(bytes({ ...good, event_id: 'abc' })), 'bad event_id');
  t.equal(parseClickMessage(bytes({ ...good, ts: -1 })), 'bad ts');
  t.equal(parseClickMessage(bytes({ ...good, program_id: '1' })), 'bad program_id');
  t.equal(parseClickMessage(bytes({ ...good, link_id: 0 })), 'bad link_id');
  t.equal(parseClickMessage(bytes({ ...good, page_url: 5 })), 'bad page_url');
  t.match(parseClickMessage(bytes({ ...good, click_id: null })), /needs click_id/);
});

const URL_OK = 'https://shop.example/?aff=abc';

t.test('parseClickBody: errors in order, capped text, the User-Agent header as fallback', async (t) => {
  t.equal(
    errorOf(() => parseClickBody({ additional_data: 5 }, undefined)),
    '400 affiliate_url is required',
    'affiliate_url is checked first',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, additional_data: 5 }, undefined)),
    '400 additional_data must be an object',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, existing_click_id: 5 }, undefined)),
    '400 existing_click_id must be a string',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, page_title: 5 }, undefined)),
    '400 page_title must be a string',
  );
  const long = parseClickBody({ affiliate_url: URL_OK, page_title: 'x'.repeat(600) }, 'UA/1');
  t.equal(long.text.page_title!.length, 512, 'long text is capped, not refused');
  t.equal(long.text.user_agent, 'UA/1');
  t.equal(parseClickBody({ affiliate_url: URL_OK, user_agent: 'Body/1' }, 'UA/1').text.user_agent, 'Body/1');
  const input = parseClickBody(
    { affiliate_url: URL_OK, additional_data: { test_mode: true, program_id: 3, event_name: 5 } },
    undefined,
  );
  t.same([input.aff, input.ad.testMode, input.ad.programId, input.existingClickId], ['abc', true, 3, null]);
});

t.test('clickIdFor: reuses a click id of the same partner-program only', async (t) => {
  t.equal(clickIdFor('cust_4_99', 4, 7n), 'cust_4_99');
  t.equal(clickIdFor('cust_5_99', 4, 7n), 'cust_4_7', 'another partner-program: last touch wins');
  t.equal(clickIdFor('junk', 4, 7n), 'cust_4_7');
  t.equal(clickIdFor(null, 4, 7n), 'cust_4_7');
});

t.test('buildClickMessage: a real click carries its link, a test click none and no click id', async (t) => {
  const link = {
    id: 1,
    shortLink: 'abc',
    status: 'active',
    programId: 1,
    partnerId: 1,
    partnerProgramId: 1,
    valid: true,
  };
  const { text } = parseClickBody({ affiliate_url: URL_OK }, undefined);
  const msg = buildClickMessage({
    id: 250203861799666688n,
    ms: 1795342849216,
    programId: 1,
    link,
    clickId: 'cust_1_250203861799666688',
    ip: '8.8.8.8',
    text,
  });
  t.same(msg, good);
  t.same(parseClickMessage(bytes(msg)), good, 'the worker accepts it');
  const test = buildClickMessage({ id: 1n, ms: 2, programId: 1, link: null, clickId: null, ip: null, text });
  t.same(
    [test.is_test, test.link_id, test.partner_id, test.partner_program_id, test.click_id],
    [true, null, null, null, null],
  );
  t.same(parseClickMessage(bytes(test)), test, 'the worker accepts it');
});
