// The ingress's Origin check lets same-origin calls through (the dashboard's test buttons): the Origin must
// equal the service's own scheme and host, port included; any other origin is still checked against the
// program's allowed_origins.
import t from 'tap';
import { isSameOrigin } from '../../services/ingress/cors.ts';

t.test(
  'the service origin itself is same-origin, in any letter case and with a trailing slash',
  async (t) => {
    t.ok(isSameOrigin('http://127.0.0.1:8080', 'http', '127.0.0.1:8080'));
    t.ok(isSameOrigin('https://Track.Example.com/', 'https', 'track.example.com'));
  },
);

t.test('another scheme, host or port is not', async (t) => {
  t.notOk(isSameOrigin('http://127.0.0.1:8081', 'http', '127.0.0.1:8080'));
  t.notOk(isSameOrigin('http://track.example.com', 'https', 'track.example.com'));
  t.notOk(isSameOrigin('https://evil.example', 'https', 'track.example.com'));
  t.notOk(isSameOrigin('https://track.example.com.evil.example', 'https', 'track.example.com'));
  t.notOk(isSameOrigin('null', 'http', '127.0.0.1:8080'));
});
