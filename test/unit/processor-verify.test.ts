// The signature schemes of Paddle, Lemon Squeezy and Polar (shared/processors/<name>.ts): each
// processor's own, checked against its SDKs where they have a verifier (Polar's validateEvent and the
// standardwebhooks package), every refusal with its own message.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, validateEvent } from '@polar-sh/sdk/webhooks';
import { HttpError } from '../../shared/http/server.ts';
import { PADDLE_ERRORS, verifyPaddle } from '../../shared/processors/paddle.ts';
import { LEMONSQUEEZY_ERRORS, verifyLemonSqueezy } from '../../shared/processors/lemonsqueezy.ts';
import { POLAR_ERRORS, polarKeys, verifyPolar } from '../../shared/processors/polar.ts';
import { lsSignature, paddleSignature, polarHeaders } from '../helpers/processors.ts';

const errorOf = (fn: () => unknown): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof HttpError ? `${err.statusCode} ${err.message}` : String(err);
  }
};

const body = JSON.stringify({
  event_id: 'evt_1',
  event_type: 'transaction.completed',
  data: { id: 'txn_1' },
});
const raw = Buffer.from(body);

t.test('Paddle: ts/h1 over "<ts>:<body>", several h1 during rotation, 300 s', async (t) => {
  const secret = 'pdl_ntfset_01abc_secret';
  const now = 1_800_000_000;
  t.match(verifyPaddle(raw, paddleSignature(body, secret, now), [secret], now), { event_id: 'evt_1' });
  // Rotation: the header carries the old and the new secret's h1; either one connected verifies.
  const rotating = paddleSignature(body, 'pdl_ntfset_old', now, [secret]);
  t.match(verifyPaddle(raw, rotating, [secret], now), { event_id: 'evt_1' }, 'the second h1 matches');
  t.equal(
    errorOf(() => verifyPaddle(raw, undefined, [secret], now)),
    `400 ${PADDLE_ERRORS.missingSignature}`,
  );
  t.equal(
    errorOf(() => verifyPaddle(raw, 'h1=abc', [secret], now)),
    `400 ${PADDLE_ERRORS.malformedSignature}`,
  );
  t.equal(
    errorOf(() => verifyPaddle(raw, `ts=${now}`, [secret], now)),
    `400 ${PADDLE_ERRORS.malformedSignature}`,
  );
  t.equal(
    errorOf(() => verifyPaddle(raw, paddleSignature(body, 'pdl_other', now), [secret], now)),
    `400 ${PADDLE_ERRORS.badSignature}`,
  );
  t.equal(
    errorOf(() => verifyPaddle(Buffer.from(`${body} `), paddleSignature(body, secret, now), [secret], now)),
    `400 ${PADDLE_ERRORS.badSignature}`,
    'one byte more than was signed',
  );
  t.equal(
    errorOf(() => verifyPaddle(raw, paddleSignature(body, secret, now - 301), [secret], now)),
    `400 ${PADDLE_ERRORS.stale}`,
  );
  t.match(verifyPaddle(raw, paddleSignature(body, secret, now - 300), [secret], now), {}, '300 s is in');
  t.equal(
    errorOf(() => verifyPaddle(raw, paddleSignature(body, secret, now), [], now)),
    `400 ${PADDLE_ERRORS.notConnected}`,
  );
  const notJson = Buffer.from('not json');
  t.equal(
    errorOf(() => verifyPaddle(notJson, paddleSignature('not json', secret, now), [secret], now)),
    `400 ${PADDLE_ERRORS.notEvent}`,
  );
});

t.test('Lemon Squeezy: X-Signature is the hex HMAC of the body, no timestamp', async (t) => {
  const secret = 'typed-by-me';
  t.match(verifyLemonSqueezy(raw, lsSignature(body, secret), [secret]), { event_id: 'evt_1' });
  t.match(verifyLemonSqueezy(raw, lsSignature(body, secret).toUpperCase(), [secret]), {}, 'hex in any case');
  t.equal(
    errorOf(() => verifyLemonSqueezy(raw, undefined, [secret])),
    `400 ${LEMONSQUEEZY_ERRORS.missingSignature}`,
  );
  t.equal(
    errorOf(() => verifyLemonSqueezy(raw, 'zz', [secret])),
    `400 ${LEMONSQUEEZY_ERRORS.malformedSignature}`,
  );
  t.equal(
    errorOf(() => verifyLemonSqueezy(raw, lsSignature(body, 'other-secret'), [secret])),
    `400 ${LEMONSQUEEZY_ERRORS.badSignature}`,
  );
  t.equal(
    errorOf(() => verifyLemonSqueezy(raw, lsSignature(body, secret), [])),
    `400 ${LEMONSQUEEZY_ERRORS.notConnected}`,
  );
});

t.test('Polar: Standard Webhooks with either key derivation, as its own SDKs verify', async (t) => {
  const polarBody = JSON.stringify({
    type: 'order.paid',
    timestamp: new Date().toISOString(),
    data: { id: 'o1' },
  });
  const polarRaw = Buffer.from(polarBody);
  // A spec secret: whsec_ + base64 of random bytes.
  const spec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
  t.equal(polarKeys(spec).length, 2, 'a whsec_ secret may sign either way');
  t.equal(polarKeys('polar_whs_legacy').length, 1, 'another secret only by its bytes');

  for (const derivation of ['spec', 'legacy'] as const) {
    const headers = polarHeaders(polarBody, spec, { derivation });
    t.match(
      verifyPolar(
        polarRaw,
        {
          id: headers['webhook-id'],
          timestamp: headers['webhook-timestamp'],
          signature: headers['webhook-signature'],
        },
        [spec],
      ),
      { type: 'order.paid' },
      `${derivation} key verifies`,
    );
  }
  // The references: standardwebhooks verifies the spec derivation; @polar-sh/sdk's validateEvent the legacy one.
  const specHeaders = polarHeaders(polarBody, spec, { derivation: 'spec' });
  t.doesNotThrow(() => new Webhook(spec).verify(polarBody, specHeaders), 'standardwebhooks agrees (spec)');
  const legacySecret = 'polar_whs_abcdefghijklmnop';
  const legacyHeaders = polarHeaders(polarBody, legacySecret, { derivation: 'legacy' });
  // validateEvent also parses the payload with its schemas (this trimmed one fails them): what matters is
  // whether it refused the signature.
  const polarVerdict = (headers: Record<string, string>) => {
    try {
      validateEvent(polarBody, headers, legacySecret);
      return 'accepted';
    } catch (err) {
      return err instanceof WebhookVerificationError ? 'signature refused' : 'signature accepted';
    }
  };
  t.equal(polarVerdict(legacyHeaders), 'signature accepted', '@polar-sh/sdk validateEvent agrees (legacy)');
  t.equal(
    polarVerdict(polarHeaders(polarBody, 'polar_whs_another', { derivation: 'legacy' })),
    'signature refused',
    'and refuses another secret',
  );
  t.match(
    verifyPolar(
      polarRaw,
      {
        id: legacyHeaders['webhook-id'],
        timestamp: legacyHeaders['webhook-timestamp'],
        signature: legacyHeaders['webhook-signature'],
      },
      [legacySecret],
    ),
    { type: 'order.paid' },
    'what validateEvent accepts, the intake accepts',
  );
  // Several signatures (Polar rotating): one matching is enough.
  const other = polarHeaders(polarBody, 'whsec_b3RoZXJvdGhlcm90aGVy', {
    id: specHeaders['webhook-id'],
    ts: Number(specHeaders['webhook-timestamp']),
  });
  const both = `${other['webhook-signature']} ${specHeaders['webhook-signature']}`;
  t.match(
    verifyPolar(
      polarRaw,
      { id: specHeaders['webhook-id'], timestamp: specHeaders['webhook-timestamp'], signature: both },
      [spec],
    ),
    {},
  );

  const h = (x: Record<string, string>) => ({
    id: x['webhook-id'],
    timestamp: x['webhook-timestamp'],
    signature: x['webhook-signature'],
  });
  t.equal(
    errorOf(() => verifyPolar(polarRaw, { ...h(specHeaders), id: undefined }, [spec])),
    `400 ${POLAR_ERRORS.missingSignature}`,
  );
  t.equal(
    errorOf(() => verifyPolar(polarRaw, { ...h(specHeaders), signature: 'v2,abc' }, [spec])),
    `400 ${POLAR_ERRORS.malformedSignature}`,
  );
  t.equal(
    errorOf(() => verifyPolar(polarRaw, { ...h(specHeaders), timestamp: 'yesterday' }, [spec])),
    `400 ${POLAR_ERRORS.malformedSignature}`,
  );
  t.equal(
    errorOf(() => verifyPolar(polarRaw, { ...h(specHeaders), id: 'msg_other' }, [spec])),
    `400 ${POLAR_ERRORS.badSignature}`,
    'the id is signed too',
  );
  const stale = polarHeaders(polarBody, spec, { ts: Math.floor(Date.now() / 1000) - 301 });
  t.equal(
    errorOf(() => verifyPolar(polarRaw, h(stale), [spec])),
    `400 ${POLAR_ERRORS.stale}`,
  );
  t.equal(
    errorOf(() => verifyPolar(polarRaw, h(specHeaders), [])),
    `400 ${POLAR_ERRORS.notConnected}`,
  );
});
