import t from 'tap';
import { extractAff } from '../../services/ingress/routes/click.ts';
import { HttpError } from '../../shared/http/server.ts';
import { parseClickMessage } from '../../shared/contracts/clicks.ts';

function errorOf(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof HttpError ? `${err.statusCode} ${err.message}` : String(err);
  }
}

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
