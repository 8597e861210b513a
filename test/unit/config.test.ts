import t from 'tap';
import { ConfigError, loadConfig } from '../../shared/config.ts';
import { percentile } from '../../shared/stats.ts';

t.test('defaults describe the local stack', async (t) => {
  const c = loadConfig({});
  t.equal(c.httpHost, '127.0.0.1', 'loopback only by default');
  t.equal(c.httpPort, 8080);
  t.same(c.kafkaBrokers, ['127.0.0.1:59092']);
  t.same(c.trustProxy, ['127.0.0.1', '::1'], 'X-Forwarded-For is trusted from loopback proxies only');
  t.equal(c.geoIpv4Path, null, 'null = the bundled DB-IP files');
});

t.test('DATABASE_URL / KAFKA_BROKERS switch to external servers', async (t) => {
  const c = loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x', KAFKA_BROKERS: 'k1:9092, k2:9092' });
  t.equal(c.databaseUrl, 'postgres://u:p@db:5432/x');
  t.same(c.kafkaBrokers, ['k1:9092', 'k2:9092']);
});

t.test('every problem is reported at once', async (t) => {
  try {
    loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', KAFKA_BROKERS: 'nohost', LOG_LEVEL: 'loud' });
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    t.equal((err as ConfigError).problems.length, 4);
  }
});

t.test('a mail setting is reported once, not once per reading', async (t) => {
  try {
    loadConfig({ SMTP_URL: 'http://mail' });
    t.fail('should throw');
  } catch (err) {
    t.same((err as ConfigError).problems, ['SMTP_URL must be smtp://[user:pass@]host[:port] or smtps://…']);
  }
});

t.test('TRUST_PROXY and GEOIP paths', async (t) => {
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  t.equal(loadConfig({ GEOIP_IPV4_PATH: 'none' }).geoIpv4Path, '', 'none disables');
  t.equal(loadConfig({ GEOIP_IPV4_PATH: '/x/GeoLite2-City.mmdb' }).geoIpv4Path, '/x/GeoLite2-City.mmdb');
});

t.test('topic replication: the broker default unless configured; REUSE_PORT', async (t) => {
  const d = loadConfig({});
  t.equal(d.kafkaReplicationFactor, null, "unset: the broker's default.replication.factor");
  t.equal(d.kafkaMinInsyncReplicas, null);
  t.equal(d.httpReusePort, false);
  const c = loadConfig({ KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2', REUSE_PORT: 'true' });
  t.equal(c.kafkaReplicationFactor, 3);
  t.equal(c.kafkaMinInsyncReplicas, 2);
  t.equal(c.httpReusePort, true);
  t.throws(
    () => loadConfig({ KAFKA_REPLICATION_FACTOR: '1', KAFKA_MIN_INSYNC_REPLICAS: '2' }),
    /KAFKA_MIN_INSYNC_REPLICAS must not exceed KAFKA_REPLICATION_FACTOR/,
  );
  t.throws(
    () => loadConfig({ KAFKA_REPLICATION_FACTOR: '0' }),
    /KAFKA_REPLICATION_FACTOR must be an integer/,
  );
  t.throws(() => loadConfig({ REUSE_PORT: 'yes' }), /REUSE_PORT must be true or false/);
});

t.test('percentile is nearest-rank', async (t) => {
  t.equal(percentile([], 50), 0);
  t.equal(percentile([5], 99), 5);
  const v = Array.from({ length: 100 }, (_, i) => 100 - i);
  t.equal(percentile(v, 50), 50);
  t.equal(percentile(v, 99), 99);
  t.equal(percentile(v, 100), 100);
});

t.test('sign-in limits: defaults, overrides, and bad values refused at boot', async (t) => {
  const d = loadConfig({});
  t.same(
    [
      d.authFailuresPerEmail,
      d.authFailureWindowMs,
      d.authRateLimitIpPerMinute,
      d.authRateLimitPerMinute,
      d.signupRateLimitPerHour,
      d.authRateLimitExempt,
    ],
    [10, 15 * 60_000, 30, 10, 20, []],
    'the contract: 10 failures per email per 15 minutes; no address exempt',
  );
  const c = loadConfig({
    AUTH_FAILURES_PER_EMAIL: '0',
    AUTH_FAILURE_WINDOW: '1h',
    SIGNUP_RATE_LIMIT_PER_HOUR: '5',
    AUTH_RATE_LIMIT_EXEMPT: '10.0.0.5, ::1',
  });
  t.same(
    [c.authFailuresPerEmail, c.authFailureWindowMs, c.signupRateLimitPerHour, c.authRateLimitExempt],
    [0, 3_600_000, 5, ['10.0.0.5', '::1']],
  );
  t.throws(() => loadConfig({ AUTH_FAILURES_PER_EMAIL: '-1' }), /AUTH_FAILURES_PER_EMAIL must be an integer/);
  t.throws(() => loadConfig({ AUTH_FAILURE_WINDOW: 'soon' }), /AUTH_FAILURE_WINDOW must be a duration/);
  t.throws(() => loadConfig({ AUTH_FAILURE_WINDOW: '500ms' }), /AUTH_FAILURE_WINDOW must be a duration/);
  t.throws(() => loadConfig({ SIGNUP_RATE_LIMIT_PER_HOUR: 'many' }), /SIGNUP_RATE_LIMIT_PER_HOUR/);
  t.throws(
    () => loadConfig({ AUTH_RATE_LIMIT_EXEMPT: 'localhost' }),
    /AUTH_RATE_LIMIT_EXEMPT entries must be IP addresses/,
  );
});
