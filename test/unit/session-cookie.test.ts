// The session cookie's pure parts (services/api/modules/auth/cookie.ts): reading the Cookie header, the
// CSRF token derived from the session token, and the Set-Cookie values.
import t from 'tap';
import {
  clearedSessionCookie,
  csrfMatches,
  csrfTokenFor,
  readCookie,
  sessionCookie,
} from '../../services/api/modules/auth/cookie.ts';

t.test('readCookie', async (t) => {
  t.equal(readCookie(undefined, 'svc_session'), undefined);
  t.equal(readCookie('svc_session=sess_a', 'svc_session'), 'sess_a');
  t.equal(readCookie('a=1; svc_session=sess_b; c=3', 'svc_session'), 'sess_b');
  t.equal(readCookie('a=1;svc_session="sess_q"', 'svc_session'), 'sess_q', 'quoted');
  t.equal(readCookie('xsvc_session=sess_x; svc_session_old=y', 'svc_session'), undefined, 'exact name only');
  t.equal(readCookie('svc_session=sess_1; svc_session=sess_2', 'svc_session'), 'sess_1', 'the first one');
  t.equal(readCookie('svc_session=; other', 'svc_session'), undefined, 'empty');
  t.equal(readCookie('garbage;;=;', 'svc_session'), undefined);
  t.equal(readCookie(['a=1', 'svc_session=sess_c'], 'svc_session'), 'sess_c');
});

t.test('CSRF token', async (t) => {
  const a = csrfTokenFor('sess_aaaa');
  t.match(a, /^[A-Za-z0-9_-]{43}$/);
  t.equal(csrfTokenFor('sess_aaaa'), a, 'stable for a session');
  t.not(csrfTokenFor('sess_aaab'), a, 'differs between sessions');
  t.not(a.includes('sess_'), true);
  t.ok(csrfMatches('sess_aaaa', a));
  t.ok(csrfMatches('sess_aaaa', ` ${a} `));
  t.notOk(csrfMatches('sess_aaaa', undefined));
  t.notOk(csrfMatches('sess_aaaa', ''));
  t.notOk(csrfMatches('sess_aaaa', a.slice(1)));
  t.notOk(csrfMatches('sess_aaaa', [a, a]));
  t.notOk(csrfMatches('sess_aaab', a));
});

t.test('Set-Cookie values', async (t) => {
  t.equal(
    sessionCookie('sess_x', 3600, false),
    'svc_session=sess_x; HttpOnly; SameSite=Strict; Path=/; Max-Age=3600',
  );
  t.equal(
    sessionCookie('sess_x', 60, true),
    'svc_session=sess_x; HttpOnly; SameSite=Strict; Path=/; Max-Age=60; Secure',
  );
  t.match(
    clearedSessionCookie(false),
    /^svc_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0; Expires=Thu, 01 Jan 1970/,
  );
  t.match(clearedSessionCookie(true), /; Secure$/);
});
