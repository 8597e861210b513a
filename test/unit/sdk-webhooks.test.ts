// verifyWebhook (sdk/typescript/src/webhooks.ts) against signatures made by the Standard Webhooks
// reference library (npm `standardwebhooks`): what it signs verifies, anything altered, stale or signed
// with another secret is refused, and both signatures of a secret rotation are accepted.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, verifyWebhook } from '../../sdk/typescript/src/index.ts';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const secret = newSecret();
const event = {
  type: 'sale.created',
  timestamp: '2026-01-10T12:00:00.000Z',
  data: { id: 42, amount_cents: 4900, currency: 'USD', note: 'déjà vu ✓' },
};
const body = JSON.stringify(event);

function signed(opts: { secrets?: string[]; at?: Date; payload?: string; id?: string } = {}) {
  const at = opts.at ?? new Date();
  const id = opts.id ?? `msg_${randomBytes(8).toString('hex')}`;
  const signatures = (opts.secrets ?? [secret]).map((s) => new Webhook(s).sign(id, at, opts.payload ?? body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.message;
    throw err;
  }
  throw new Error('verified, but should have been refused');
}

t.test('a payload signed by the reference library verifies and comes back parsed', async (t) => {
  const headers = signed();
  t.same(await verifyWebhook(body, headers, secret), event, 'plain object headers, string body');
  t.same(await verifyWebhook(Buffer.from(body), new Headers(headers), secret), event, 'Headers, Buffer body');
  t.same(
    await verifyWebhook(new TextEncoder().encode(body).buffer, headers, secret),
    event,
    'ArrayBuffer body',
  );
  const mixedCase = {
    'Webhook-Id': headers['webhook-id'],
    'WEBHOOK-TIMESTAMP': [headers['webhook-timestamp']],
    'webhook-Signature': headers['webhook-signature'],
  };
  t.same(await verifyWebhook(body, mixedCase, secret), event, 'header names in any case, array values');
  // The reference library agrees on the same input (the test's own signing is not what is tested).
  t.same(new Webhook(secret).verify(body, headers), event);
});

t.test('a tampered body, id or timestamp is refused', async (t) => {
  const headers = signed();
  t.equal(
    await refusal(verifyWebhook(body.replace('4900', '4901'), headers, secret)),
    'No matching signature found',
  );
  t.equal(await refusal(verifyWebhook(`${body} `, headers, secret)), 'No matching signature found');
  t.equal(
    await refusal(verifyWebhook(body, { ...headers, 'webhook-id': 'msg_other' }, secret)),
    'No matching signature found',
  );
  const ts = Number(headers['webhook-timestamp']) + 1;
  t.equal(
    await refusal(verifyWebhook(body, { ...headers, 'webhook-timestamp': String(ts) }, secret)),
    'No matching signature found',
  );
});

t.test('another secret is refused; a malformed one is named', async (t) => {
  t.equal(await refusal(verifyWebhook(body, signed(), newSecret())), 'No matching signature found');
  t.match(await refusal(verifyWebhook(body, signed(), 'whsec_***')), /not a whsec_ secret/);
  t.match(await refusal(verifyWebhook(body, signed(), 'whsec_')), /not a whsec_ secret/);
  // The secret without its prefix is the same key (as the reference library reads it).
  t.same(await verifyWebhook(body, signed(), secret.slice('whsec_'.length)), event);
});

t.test('the timestamp must be within 5 minutes either way', async (t) => {
  const now = Date.now();
  const at = (deltaS: number) => new Date(now + deltaS * 1000);
  t.equal(
    await refusal(verifyWebhook(body, signed({ at: at(-301) }), secret, { now })),
    'Message timestamp too old',
  );
  t.equal(
    await refusal(verifyWebhook(body, signed({ at: at(301) }), secret, { now })),
    'Message timestamp too new',
  );
  t.same(await verifyWebhook(body, signed({ at: at(-290) }), secret, { now }), event, '4 min 50 s old');
  t.same(await verifyWebhook(body, signed({ at: at(290) }), secret, { now }), event, 'clock skew ahead');
  t.same(
    await verifyWebhook(body, signed({ at: at(-3600) }), secret, { now, toleranceSeconds: 7200 }),
    event,
    'a wider tolerance',
  );
  t.equal(
    await refusal(verifyWebhook(body, { ...signed(), 'webhook-timestamp': 'yesterday' }, secret)),
    'Invalid webhook-timestamp',
  );
});

t.test('during a secret rotation both signatures are sent and either secret verifies', async (t) => {
  const previous = newSecret();
  const headers = signed({ secrets: [previous, secret] });
  t.equal(headers['webhook-signature'].split(' ').length, 2);
  t.same(await verifyWebhook(body, headers, secret), event, 'the new secret');
  t.same(await verifyWebhook(body, headers, previous), event, 'the previous secret');
  t.equal(await refusal(verifyWebhook(body, headers, newSecret())), 'No matching signature found');
});

t.test('missing headers, unknown signature versions and non-JSON bodies', async (t) => {
  const headers = signed();
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
    const without: Record<string, string> = { ...headers };
    delete without[name];
    t.match(await refusal(verifyWebhook(body, without, secret)), /Missing required headers/, name);
  }
  const v1 = headers['webhook-signature'].slice(3);
  t.equal(
    await refusal(verifyWebhook(body, { ...headers, 'webhook-signature': `v1a,${v1}` }, secret)),
    'No matching signature found',
    'only v1 signatures count',
  );
  t.same(
    await verifyWebhook(body, { ...headers, 'webhook-signature': `v2,abc v1,bm9wZQ== v1,${v1}` }, secret),
    event,
    'other entries are skipped',
  );
  t.equal(
    await refusal(verifyWebhook(body, { ...headers, 'webhook-signature': 'v1,not base64!' }, secret)),
    'No matching signature found',
  );
  const text = 'not json';
  t.equal(
    await refusal(verifyWebhook(text, signed({ payload: text }), secret)),
    'The body is not JSON',
    'signed, but not an event',
  );
});
