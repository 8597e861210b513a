// Connecting every processor (CONTRACT part three): the secret each processor's dashboard shows, pasted with
// PUT /api/advertiser/processor-connections/:processor, listed masked with the webhook URL to paste there,
// removed with DELETE; the intake verifies with it at once and refuses after a DELETE. Stripe's is the
// singular connection's row. The processor-events list names each event's processor.
import t from 'tap';
import { createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import {
  lsEvent,
  lsOrder,
  lsSignature,
  polarEvent,
  polarHeaders,
  polarOrder,
} from '../helpers/processors.ts';
import { signature, stripeEvent } from '../helpers/stripe.ts';
import { POLAR_ERRORS } from '../../shared/processors/polar.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'processor-worker']);
const owner = await signup(svc);
const auth = bearer(owner.session);
const program = await createProgram(sql, { workspaceId: owner.workspaceId });
const path = `${svc.baseUrl}/api/advertiser/processor-connections`;

const hook = (processor: string, body: string, headers: Record<string, string>) =>
  fetch(`${svc.baseUrl}/api/v1/webhooks/${processor}/${program.id}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  }).then(async (r) => ({ status: r.status, body: await r.json() }));

t.test('list, connect, verify, disconnect', async (t) => {
  const empty = await getJson(path, auth);
  t.equal(empty.status, 200);
  t.same(
    (empty.body.data as { processor: string; connected: boolean; secret_masked: null }[]).map((r) => [
      r.processor,
      r.connected,
      r.secret_masked,
    ]),
    [
      ['stripe', false, null],
      ['paddle', false, null],
      ['lemonsqueezy', false, null],
      ['polar', false, null],
    ],
  );
  t.match((empty.body.data as { webhook_url: string }[])[1], {
    webhook_url: /\/api\/v1\/webhooks\/paddle\/\{programId\}$/,
  });

  const polarSecret = `whsec_${Buffer.from('a polar secret of thirty-two b!!').toString('base64')}`;
  const put = await send('PUT', `${path}/polar`, { webhook_secret: ` ${polarSecret} ` }, auth);
  t.equal(put.status, 200);
  t.match(put.body.data, { processor: 'polar', connected: true, secret_masked: /^whsec_.{4}…/ });
  t.notOk(put.text.includes(polarSecret), 'the secret is not echoed');

  // Verified at once (the intake reads Postgres again when its cached secrets do not match).
  const body = JSON.stringify(polarEvent('order.paid', polarOrder({ net_amount: 100 })));
  // One message id for every delivery of this event, as Polar's retries carry: the probe after the DELETE
  // below may still be accepted while the intake's cache holds the secret, and must then be this event
  // again (deduped), not a second one in the events list.
  const polarDelivery = () => polarHeaders(body, polarSecret, { id: 'msg_connections_1' });
  t.same(await hook('polar', body, polarDelivery()), {
    status: 200,
    body: { received: true },
  });

  const ls = await send('PUT', `${path}/lemonsqueezy`, { webhook_secret: 'typed6' }, auth);
  t.match(ls.body.data, { processor: 'lemonsqueezy', connected: true, secret_masked: '…d6' });
  const lsBody = JSON.stringify(lsEvent('order_created', lsOrder({ total: 100 })));
  t.equal((await hook('lemonsqueezy', lsBody, { 'x-signature': lsSignature(lsBody, 'typed6') })).status, 200);

  // Stripe through the plural route: the singular connection's row, verified as before.
  const stripeSecret = 'whsec_pasted_from_the_stripe_dashboard';
  t.equal((await send('PUT', `${path}/stripe`, { webhook_secret: stripeSecret }, auth)).status, 200);
  const single = await getJson(`${svc.baseUrl}/api/advertiser/processor-connection`, auth);
  t.match(single.body.data, { status: 'connected', webhook_secret_masked: /^whsec_past…/ });
  const event = stripeEvent('customer.created', { id: 'cus_1', object: 'customer' });
  const stripeBody = JSON.stringify(event);
  t.equal(
    (await hook('stripe', stripeBody, { 'stripe-signature': signature(stripeBody, stripeSecret) })).status,
    200,
    'the plural path, Stripe',
  );

  const listed = await getJson(path, auth);
  t.same(
    (listed.body.data as { connected: boolean }[]).map((r) => r.connected),
    [true, false, true, true],
  );

  const del = await send('DELETE', `${path}/polar`, undefined, auth);
  t.match(del, {
    status: 200,
    body: { data: { processor: 'polar', connected: false, secret_masked: null } },
  });
  await waitFor('the intake refusing Polar', async () => {
    const r = await hook('polar', body, polarDelivery());
    return r.status === 400 ? r : null;
  }).then((r) => t.same(r.body, { error: POLAR_ERRORS.notConnected }));

  // The events list names each event's processor.
  const events = await waitFor('three events listed', async () => {
    const r = await getJson(`${svc.baseUrl}/api/advertiser/processor-events?program_id=${program.id}`, auth);
    const data = r.body.data as { processor: string; type: string }[];
    return data.length >= 3 ? data : null;
  });
  t.same(events.map((e) => `${e.processor} ${e.type}`).sort(), [
    'lemonsqueezy order_created',
    'polar order.paid',
    'stripe customer.created',
  ]);
});

t.test('bad input: each a 4xx that says what is wrong', async (t) => {
  const err = (status: number, error: string) => ({ status, body: { error } });
  const put = async (processor: string, body: unknown) => {
    const r = await send('PUT', `${path}/${processor}`, body, auth);
    return { status: r.status, body: r.body };
  };
  t.same(
    await put('square', { webhook_secret: 'abcdef' }),
    err(404, 'Unknown processor: use one of stripe, paddle, lemonsqueezy, polar'),
  );
  t.same(
    await put('stripe', { webhook_secret: 'sk_live_nope' }),
    err(400, 'webhook_secret must start with whsec_ for Stripe'),
  );
  t.same(
    await put('lemonsqueezy', { webhook_secret: 'abc' }),
    err(400, 'webhook_secret must be 6 to 40 characters for Lemon Squeezy'),
  );
  t.same(
    await put('paddle', { webhook_secret: '   ' }),
    err(400, 'webhook_secret must be a string of 1 to 255 characters'),
  );
  t.same(
    await put('paddle', { webhook_secret: 42 }),
    err(400, 'webhook_secret must be a string of 1 to 255 characters'),
  );
  t.equal((await put('paddle', {})).status, 400, 'missing');
  const del = await send('DELETE', `${path}/square`, undefined, auth);
  t.equal(del.status, 404);
  const stranger = await signup(svc);
  const other = await send(
    'PUT',
    `${path}/paddle?workspace_id=${owner.workspaceId}`,
    { webhook_secret: 'x'.repeat(10) },
    bearer(stranger.session),
  );
  t.equal(other.status, 404, 'another workspace');
});
