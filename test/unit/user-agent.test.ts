import t from 'tap';
import { MAX_UA_LENGTH, createUserAgentParser } from '../../services/workers/clicks/enrich/user-agent.ts';

const UA = {
  iphoneSafari:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  windowsChrome:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  androidTablet:
    'Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  androidPhone:
    'Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  linuxFirefox: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  macSafari:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  samsungTv:
    'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36',
  playstation: 'Mozilla/5.0 (PlayStation 5 3.11) AppleWebKit/605.1.15 (KHTML, like Gecko)',
  cubotPhone:
    'Mozilla/5.0 (Linux; Android 9; CUBOT P30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
};

t.test('common browsers', async (t) => {
  const parse = createUserAgentParser();
  t.same(parse(UA.iphoneSafari), { device_type: 'mobile', device_os: 'iOS', browser_name: 'Mobile Safari' });
  t.same(parse(UA.windowsChrome), { device_type: 'desktop', device_os: 'Windows', browser_name: 'Chrome' });
  t.same(parse(UA.androidTablet), { device_type: 'tablet', device_os: 'Android', browser_name: 'Chrome' });
  t.same(parse(UA.androidPhone), { device_type: 'mobile', device_os: 'Android', browser_name: 'Chrome' });
  t.same(parse(UA.ipad), { device_type: 'tablet', device_os: 'iOS', browser_name: 'Mobile Safari' });
  t.same(parse(UA.linuxFirefox), { device_type: 'desktop', device_os: 'Linux', browser_name: 'Firefox' });
  t.same(parse(UA.macSafari), { device_type: 'desktop', device_os: 'Mac OS', browser_name: 'Safari' });
  t.same(parse(UA.samsungTv), {
    device_type: 'smarttv',
    device_os: 'Tizen',
    browser_name: 'Samsung Internet',
  });
  t.equal(parse(UA.playstation).device_type, 'console');
});

t.test('empty or missing user agent', async (t) => {
  const parse = createUserAgentParser();
  const unknown = { device_type: 'unknown', device_os: null, browser_name: null };
  t.same(parse(undefined), unknown);
  t.same(parse(null), unknown);
  t.same(parse(''), unknown);
  t.same(parse('   '), unknown);
  // isbot calls a user agent without any browser token a bot (an app's or a script's own client).
  t.same(parse('foo'), { ...unknown, device_type: 'bot' }, 'unrecognisable UA is not called desktop');
  t.equal(parse.size, 1, 'only the non-blank UA is cached');
});

t.test('bots and scripted clients', async (t) => {
  const parse = createUserAgentParser();
  const bots = [
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    // ua-parser-js alone calls this an Android phone
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'curl/8.5.0',
    'Wget/1.21.4',
    'python-requests/2.31.0',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36',
  ];
  for (const ua of bots) t.equal(parse(ua).device_type, 'bot', ua);
  const mobileGooglebot = parse(bots[1]);
  t.equal(mobileGooglebot.device_os, 'Android', 'os and browser are still reported for bots');
  t.same(parse(UA.cubotPhone), { device_type: 'mobile', device_os: 'Android', browser_name: 'Chrome' });
});

t.test('long user agents are truncated before parsing and caching', async (t) => {
  const parse = createUserAgentParser();
  const a = UA.iphoneSafari + ' ' + 'a'.repeat(2000);
  const b = UA.iphoneSafari + ' ' + 'a'.repeat(1000) + 'b';
  t.ok(a.slice(0, MAX_UA_LENGTH) === b.slice(0, MAX_UA_LENGTH));
  const first = parse(a);
  t.same(first, { device_type: 'mobile', device_os: 'iOS', browser_name: 'Mobile Safari' });
  t.equal(parse(b), first, 'same 512-char prefix → same cache entry');
  t.equal(parse.size, 1);
});

t.test('cache returns the same answer and stays bounded (LRU)', async (t) => {
  const parse = createUserAgentParser({ cacheSize: 3 });
  const first = parse(UA.iphoneSafari);
  t.equal(parse(UA.iphoneSafari), first, 'cache hit returns the identical object');
  t.ok(Object.isFrozen(first), 'cached answers cannot be mutated by callers');

  const chrome = parse(UA.windowsChrome);
  parse(UA.androidTablet);
  t.equal(parse.size, 3);
  parse(UA.iphoneSafari); // iPhone is now the most recently used; Windows is the oldest
  parse(UA.linuxFirefox); // evicts Windows
  t.equal(parse.size, 3);
  t.equal(parse(UA.iphoneSafari), first, 'recently used entry survived eviction');

  const chromeAgain = parse(UA.windowsChrome); // a miss: re-parsed, evicts the tablet
  t.same(chromeAgain, { device_type: 'desktop', device_os: 'Windows', browser_name: 'Chrome' });
  t.not(chromeAgain, chrome, 'the least recently used entry had been evicted');

  for (let i = 0; i < 50; i++) parse(`${UA.linuxFirefox} build/${i}`);
  t.equal(parse.size, 3, 'never grows past cacheSize');

  const big = createUserAgentParser();
  for (let i = 0; i < 10_050; i++) big(`${UA.windowsChrome} x/${i}`);
  t.equal(big.size, 10_000, 'default bound is 10,000 entries');
});

t.test('cacheSize 0 disables the cache', async (t) => {
  const parse = createUserAgentParser({ cacheSize: 0 });
  const a = parse(UA.iphoneSafari);
  const b = parse(UA.iphoneSafari);
  t.same(a, b);
  t.not(a, b, 'each call parses anew');
  t.equal(parse.size, 0);
  t.throws(() => createUserAgentParser({ cacheSize: -1 }), RangeError);
  t.throws(() => createUserAgentParser({ cacheSize: 1.5 }), RangeError);
});
