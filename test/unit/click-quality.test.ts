// The click classifier (shared/tracking/quality.ts) against real user agents: crawlers, the link-preview
// fetchers of chat apps and social networks, scripted clients, ordinary browsers on desktops and phones
// (phones whose model name contains "bot", such as Cubot, are people), and the prefetch headers.

/** A click whose visitor's user agent is `ua`, sent in the body (a backend) or as the header (a browser). */
const body = (ua: string | null, prefetch = false) => ({
  bodyUserAgent: ua,
  headerUserAgent: 'node',
  prefetch,
});
const header = (ua: string | undefined, prefetch = false) => ({
  bodyUserAgent: null,
  headerUserAgent: ua,
  prefetch,
});
import t from 'tap';
import { cachedBotCheck, clickQuality, isBotUserAgent, isPrefetch } from '../../shared/tracking/quality.ts';
import { createUserAgentParser } from '../../services/workers/clicks/enrich/user-agent.ts';

const BOTS: Record<string, string> = {
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  googlebotSmartphone:
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  googleOther: 'Mozilla/5.0 (compatible; GoogleOther)',
  bingbot:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
  yandex: 'Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)',
  ahrefs: 'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
  gptbot:
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  slackImg: 'Slack-ImgProxy (+https://api.slack.com/robots)',
  whatsapp: 'WhatsApp/2.23.20.0 A',
  whatsappIos: 'WhatsApp/2.24.6.77 i',
  telegram: 'TelegramBot (like TwitterBot)',
  discord: 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
  facebook: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  linkedin: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  twitter: 'Twitterbot/1.0',
  imessage: 'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  imessageMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0',
  curl: 'curl/8.5.0',
  wget: 'Wget/1.21.4',
  pythonRequests: 'python-requests/2.31.0',
  headless:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
};

const PEOPLE: Record<string, string> = {
  chromeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  chromeMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  edge: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  iphoneSafari:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  iphoneChrome:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  pixel:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  samsung:
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  cubotP30:
    'Mozilla/5.0 (Linux; Android 9; CUBOT P30 Build/PPR1.180610.011) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36',
  cubotX30:
    'Mozilla/5.0 (Linux; Android 10; CUBOT_X30) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  cubotKingkong:
    'Mozilla/5.0 (Linux; Android 13; KINGKONG 9 Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 CUBOT',
};

t.test('crawlers, link expanders and scripted clients are bots', async (t) => {
  for (const [name, ua] of Object.entries(BOTS)) {
    t.equal(isBotUserAgent(ua), true, name);
    t.equal(clickQuality(body(ua)), 'bot', `${name} in the body`);
    if (!['curl', 'wget', 'pythonRequests'].includes(name))
      t.equal(clickQuality(header(ua)), 'bot', `${name} as the header`);
  }
});

t.test('ordinary browsers, and phones with "bot" in their name, are people', async (t) => {
  for (const [name, ua] of Object.entries(PEOPLE)) {
    t.equal(isBotUserAgent(ua), false, name);
    t.equal(clickQuality(body(ua)), 'human', `${name} in the body`);
    t.equal(clickQuality(header(ua)), 'human', `${name} as the header`);
  }
  t.equal(clickQuality(header(undefined)), 'human', 'no user agent at all: not called a bot');
  t.equal(clickQuality(header('')), 'human');
  t.equal(clickQuality(body('')), 'human');
});

t.test("an HTTP library's own User-Agent header is the caller, not the visitor", async (t) => {
  // A backend (an SDK, curl, Node's fetch) reporting a visit without the visitor's user_agent: counted as
  // before. The same string relayed as the visitor's user_agent is a bot.
  for (const ua of [
    'node',
    'undici',
    'curl/8.5.0',
    'python-requests/2.31.0',
    'Go-http-client/1.1',
    'okhttp/4.12.0',
  ]) {
    t.equal(clickQuality(header(ua)), 'human', `header ${ua}`);
    t.equal(clickQuality(body(ua)), 'bot', `body ${ua}`);
  }
  t.equal(
    clickQuality(header('SomeCrawler/1.0 (+https://crawler.example)')),
    'bot',
    'anything else is judged',
  );
});

t.test('prefetch headers', async (t) => {
  t.equal(isPrefetch({ 'sec-purpose': 'prefetch' }), true, 'Chrome');
  t.equal(isPrefetch({ 'sec-purpose': 'prefetch;prerender' }), true, 'Chrome prerender');
  t.equal(isPrefetch({ 'sec-purpose': 'prefetch;anonymous-client-ip' }), true);
  t.equal(isPrefetch({ purpose: 'prefetch' }), true, 'older Purpose');
  t.equal(isPrefetch({ purpose: 'Prefetch' }), true, 'any case');
  t.equal(isPrefetch({ 'x-moz': 'prefetch' }), true, 'Firefox');
  t.equal(isPrefetch({ 'x-purpose': 'preview' }), true, 'Safari');
  t.equal(isPrefetch({}), false);
  t.equal(isPrefetch({ 'sec-purpose': '' }), false);
  t.equal(isPrefetch({ purpose: 'prefetcher' }), false, 'a whole token only');
  t.equal(isPrefetch({ 'user-agent': 'prefetch' }), false, 'other headers are not read');
  t.equal(clickQuality(header(PEOPLE.chromeWindows, true)), 'prefetch', "a person's prefetch is a prefetch");
  t.equal(clickQuality(body(BOTS.googlebot!, true)), 'prefetch', 'prefetch is decided first');
});

t.test('the cached check answers as the plain one', async (t) => {
  const check = cachedBotCheck(3);
  const all = [...Object.values(BOTS), ...Object.values(PEOPLE)];
  for (let round = 0; round < 2; round++)
    for (const ua of all) t.equal(check(ua), isBotUserAgent(ua), ua.slice(0, 40));
});

t.test('the click worker calls the same user agents bots (device_type)', async (t) => {
  const parse = createUserAgentParser();
  for (const [name, ua] of Object.entries(BOTS)) t.equal(parse(ua).device_type, 'bot', name);
  for (const [name, ua] of Object.entries(PEOPLE)) t.not(parse(ua).device_type, 'bot', name);
});
