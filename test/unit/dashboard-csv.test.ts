// The dashboard's CSV export (services/dashboard/src/csv.ts) and referral URLs (referral.ts): pure
// functions the Commissions and Partners pages use.
import t from 'tap';
import { csvField, toCsv } from '../../services/dashboard/src/csv.ts';
import { defaultLanding, referralUrl } from '../../services/dashboard/src/referral.ts';

t.test('csv fields are quoted only when they must be, quotes doubled', async (t) => {
  t.equal(csvField('plain'), 'plain');
  t.equal(csvField('a,b'), '"a,b"');
  t.equal(csvField('say "hi"'), '"say ""hi"""');
  t.equal(csvField('line\nbreak'), '"line\nbreak"');
  t.equal(csvField('cr\rhere'), '"cr\rhere"');
  t.equal(csvField(' padded '), '" padded "', 'spaces at the ends are kept by quoting');
  t.equal(csvField(null), '');
  t.equal(csvField(undefined), '');
  t.equal(csvField(''), '');
  t.equal(csvField(-12.5), '-12.5', 'a negative number stays a number');
  t.equal(csvField(Number.NaN), '');
});

t.test('text a spreadsheet would run as a formula is defused', async (t) => {
  t.equal(csvField('=HYPERLINK("http://x")'), `"'=HYPERLINK(""http://x"")"`);
  t.equal(csvField('+1'), "'+1");
  t.equal(csvField('-1'), "'-1", 'as text; amounts are written as numbers or plain decimals');
  t.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
});

t.test('a table: header first, CRLF after every row', async (t) => {
  t.equal(
    toCsv(
      ['id', 'reason'],
      [
        [1, 'duplicate, "oops"'],
        [2, null],
      ],
    ),
    'id,reason\r\n1,"duplicate, ""oops"""\r\n2,\r\n',
  );
  t.equal(toCsv(['a'], []), 'a\r\n');
});

t.test('referral URLs put aff on the landing page', async (t) => {
  t.equal(defaultLanding(['https://shop.example']), 'https://shop.example/');
  t.equal(defaultLanding([]), '');
  t.equal(defaultLanding(['https://shop.example'], 'https://shop.example/join'), 'https://shop.example/join');
  t.equal(defaultLanding([], null), '');
  t.equal(referralUrl('https://shop.example/', 'abc_1'), 'https://shop.example/?aff=abc_1');
  t.equal(
    referralUrl('https://shop.example/p?x=1&aff=old#top', 'new'),
    'https://shop.example/p?x=1&aff=new#top',
    'keeps the query and the fragment, replaces an old aff',
  );
  t.equal(referralUrl('', 'abc'), null);
  t.equal(referralUrl('shop.example', 'abc'), null, 'not a URL');
  t.equal(referralUrl('javascript:alert(1)', 'abc'), null, 'only http(s)');
});
