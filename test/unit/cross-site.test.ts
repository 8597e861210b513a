// The cross-site rule's pieces (services/api/cross-site.ts; docs/security.md "Cross-site requests and tokens
// in links"): which requests it concerns, and which origins are the service's own.
import t from 'tap';
import { browserSessionWrite, fromAnotherOrigin, originOf } from '../../services/api/cross-site.ts';

t.test('the requests the rule concerns: session-cookie writes and the session routes', async (t) => {
  const req = (method: string, url: string, headers: Record<string, string> = {}) => ({
    method,
    url,
    headers,
  });
  const dash = { cookie: 'theme=dark; svc_session=sess_x' };
  const partner = { cookie: 'svc_partner_session=psess_y' };
  t.ok(browserSessionWrite(req('POST', '/api/advertiser/affiliate-programs', dash)), 'dashboard cookie');
  t.ok(browserSessionWrite(req('PUT', '/api/partner/payout-method', partner)), 'partner cookie');
  t.ok(browserSessionWrite(req('DELETE', '/api/anything', dash)), 'DELETE');
  t.notOk(browserSessionWrite(req('GET', '/api/advertiser/affiliate-programs', dash)), 'a read');
  t.notOk(browserSessionWrite(req('HEAD', '/api/x', dash)), 'HEAD');
  t.notOk(browserSessionWrite(req('OPTIONS', '/api/x', dash)), 'OPTIONS');
  t.notOk(
    browserSessionWrite(req('POST', '/api/x', { ...dash, authorization: 'Bearer affk_1' })),
    'a Bearer call with the cookie along: the header is the credential',
  );
  t.notOk(browserSessionWrite(req('POST', '/api/public/programs/x/apply')), 'no cookie, not a session route');
  t.notOk(browserSessionWrite(req('POST', '/api/x', { cookie: 'svc_session=' })), 'an empty cookie');
  for (const url of [
    '/api/auth/session',
    '/api/auth/session/signup',
    '/api/partner/auth/session',
    '/api/partner/auth/session/magic-link',
    '/api/partner/auth/session/accept-invite?x=1',
  ]) {
    t.ok(browserSessionWrite(req('POST', url)), `${url}: the sign-in routes, no cookie needed`);
    t.ok(browserSessionWrite(req('POST', url, { authorization: 'Bearer x' })), `${url}: whatever the header`);
  }
  for (const url of ['/api/auth/login', '/api/auth/sessions', '/api/partner/auth/login']) {
    t.notOk(browserSessionWrite(req('POST', url)), `${url}: sets no cookie`);
  }
});

t.test('origins: exact scheme, host and port, against PUBLIC_URL or the request itself', async (t) => {
  t.equal(originOf('HTTPS://Svc.Example:443/path?q'), 'https://svc.example');
  t.equal(originOf('http://[::1]:8080'), 'http://[::1]:8080');
  t.equal(originOf('null'), null);
  t.equal(originOf('file:///etc/passwd'), null);
  const req = (headers: Record<string, string>, host = '127.0.0.1:8080', protocol = 'http') => ({
    headers,
    host,
    protocol: protocol as 'http' | 'https',
  });
  t.notOk(fromAnotherOrigin(req({}), null), 'no Origin, no Sec-Fetch-Site: not a browser');
  t.notOk(fromAnotherOrigin(req({ origin: 'http://127.0.0.1:8080' }), null), 'its own origin');
  t.notOk(
    fromAnotherOrigin(req({ origin: 'http://localhost:8080' }, 'localhost:8080'), null),
    'by localhost',
  );
  t.ok(fromAnotherOrigin(req({ origin: 'http://localhost:8080' }), null), 'localhost posting to 127.0.0.1');
  t.ok(fromAnotherOrigin(req({ origin: 'http://127.0.0.1:8081' }), null), 'another port');
  t.ok(fromAnotherOrigin(req({ origin: 'https://127.0.0.1:8080' }), null), 'another scheme');
  t.ok(fromAnotherOrigin(req({ origin: 'null' }), null), 'Origin: null');
  t.ok(fromAnotherOrigin(req({ 'sec-fetch-site': 'cross-site' }), null), 'Sec-Fetch-Site: cross-site');
  t.notOk(
    fromAnotherOrigin(req({ 'sec-fetch-site': 'same-origin', origin: 'http://127.0.0.1:8080' }), null),
    'same-origin',
  );
  t.ok(
    fromAnotherOrigin(req({ 'sec-fetch-site': 'same-site', origin: 'http://a.127.0.0.1:8080' }), null),
    'same-site is a sibling: its Origin decides',
  );
  const pub = 'https://svc.example';
  t.notOk(fromAnotherOrigin(req({ origin: 'https://svc.example' }), pub), "PUBLIC_URL's origin");
  t.ok(fromAnotherOrigin(req({ origin: 'http://127.0.0.1:8080' }), pub), 'the request host is not it then');
  t.ok(fromAnotherOrigin(req({ origin: 'https://svc.example.evil.example' }), pub), 'a longer host');
});
