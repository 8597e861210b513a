import t from 'tap';
import {
  ClickBody,
  buildClickMessage,
  clickIdFor,
  clickInput,
  eventClickNumber,
  extractAff,
} from '../../services/ingress/click-message.ts';
import { bodyCheck } from '../../shared/http/validation.ts';
import { Snowflake, isEventDerived, parseClickId } from '../../shared/domain/ids.ts';
import { errorOf } from '../helpers/errors.ts';
import { CLICK_TEXT_FIELDS, parseClickMessage } from '../../shared/contracts/clicks.ts';

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
/** What the click route does with a body: its schema's check (the 400s), then what the body says. */
const checkClick = bodyCheck(ClickBody);
const parseClickBody = (body: unknown, userAgent: string | undefined) =>
  clickInput(checkClick(body), userAgent);

t.test('the click schema answers the affiliate_url 400s, before any other field', async (t) => {
  t.equal(
    errorOf(() => parseClickBody({}, undefined)),
    '400 affiliate_url is required',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: null }, undefined)),
    '400 affiliate_url is required',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: 42 }, undefined)),
    '400 Invalid affiliate_url',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: 'ftp://x/?aff=a', event_id: 'x' }, undefined)),
    '400 Invalid affiliate_url',
  );
  t.equal(
    errorOf(() => parseClickBody({ page_title: 5, affiliate_url: 'https://x.example/' }, undefined)),
    '400 No aff parameter found in affiliate_url',
  );
  t.equal(
    errorOf(() => parseClickBody([URL_OK], undefined)),
    '400 Request body must be a JSON object',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, additional_data: { test_mode: 1 } }, undefined)),
    '400 additional_data.test_mode must be a boolean',
    'a field of additional_data names itself',
  );
  t.equal(
    errorOf(() =>
      parseClickBody({ affiliate_url: URL_OK, additional_data: { program_id: 0 }, event_id: 'x' }, undefined),
    ),
    '400 additional_data.program_id must be a positive integer',
    'additional_data before event_id',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, event_id: 'x', existing_click_id: 5 }, undefined)),
    '400 event_id must be a UUID',
    'event_id before existing_click_id',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, existing_click_id: 5, user_agent: 5 }, undefined)),
    '400 existing_click_id must be a string',
    'existing_click_id before the text fields',
  );
  t.equal(
    errorOf(() => parseClickBody({ affiliate_url: URL_OK, timezone: 5, user_agent: 5 }, undefined)),
    '400 user_agent must be a string',
    'text fields in their order',
  );
});

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
    partnerStatus: 'approved',
    valid: true,
    discount: null,
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

t.test('event_id: optional UUID, normalised; anything else is a clear 400', async (t) => {
  const base = { affiliate_url: 'https://shop.example/?aff=abc' };
  t.equal(parseClickBody(base, undefined).eventId, null, 'absent');
  t.equal(parseClickBody({ ...base, event_id: null }, undefined).eventId, null, 'null');
  t.equal(
    parseClickBody({ ...base, event_id: '0B9C3A9E-5F1D-4C2B-9A7E-1D2C3B4A5F60' }, undefined).eventId,
    '0b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f60',
  );
  for (const bad of [
    '',
    'abc',
    42,
    {},
    '0b9c3a9e5f1d4c2b9a7e1d2c3b4a5f60',
    '0b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f6z',
  ]) {
    t.equal(
      errorOf(() => parseClickBody({ ...base, event_id: bad }, undefined)),
      '400 event_id must be a UUID',
    );
  }
});

t.test('eventClickNumber: one click id per (program, event_id), in the click id shape', async (t) => {
  const e = '0b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f60';
  t.equal(eventClickNumber(7, e), eventClickNumber(7, e), 'deterministic');
  t.not(eventClickNumber(7, e), eventClickNumber(8, e), 'per program');
  t.not(eventClickNumber(7, e), eventClickNumber(7, '1b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f60'));
  const n = eventClickNumber(7, e);
  t.ok(n > 0n && n < 2n ** 63n);
  t.ok(parseClickId(clickIdFor(null, 12, n)), 'a valid cust_<pp>_<n> click id');
  t.ok(isEventDerived(n), 'told apart from a minted snowflake (a sale cannot read a time from it)');
  t.notOk(isEventDerived(new Snowflake(5).next().id), 'a minted snowflake is not derived');
});

t.test('parseClickMessage: client_event_id is optional, a UUID when present', async (t) => {
  const msg = buildClickMessage({
    id: 123n,
    ms: 1_700_000_000_000,
    programId: 1,
    link: { id: 2, partnerId: 3, partnerProgramId: 4 } as never,
    clickId: 'cust_4_123',
    clientEventId: '0b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f60',
    ip: null,
    text: Object.fromEntries(CLICK_TEXT_FIELDS.map((f) => [f, null])) as never,
  });
  const ok = parseClickMessage(Buffer.from(JSON.stringify(msg)));
  t.equal(typeof ok === 'string' ? ok : ok.client_event_id, '0b9c3a9e-5f1d-4c2b-9a7e-1d2c3b4a5f60');
  const { client_event_id: _drop, ...older } = msg;
  t.not(typeof parseClickMessage(Buffer.from(JSON.stringify(older))), 'string', 'older messages have none');
  t.equal(
    parseClickMessage(Buffer.from(JSON.stringify({ ...msg, client_event_id: 'nope' }))),
    'bad client_event_id',
  );
});
