// The processor webhook intake: Stripe-signed events verified on their raw bytes, produced to the
// processor-events topic (original bytes, keyed by program and payment/subscription) before the 200; every
// refusal is a 4xx with its own error string.
import t from 'tap';
import { createKafka, readTopic } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import type { ProcessorEventCommand } from '../../shared/contracts/processor-events.ts';
import { STRIPE_ERRORS as WEBHOOK_ERRORS } from '../../shared/processors/stripe.ts';
import { createProgram, stackEnv, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { checkoutSession, signature, stripeEvent } from '../helpers/stripe.ts';
import { bearer, memberOf, send, signup } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const kafka = createKafka(
  { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
  createLogger('test', 'warn'),
);

async function connectedProgram(secret: string) {
  const program = await createProgram(sql);
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${secret} from programs where id = ${program.id}`;
  return program;
}

async function post(programId: number | string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${svc.baseUrl}/api/v1/webhooks/processor/${programId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The answer once a secret is refused: an expiry moved by hand reaches the intake's cache with its poll. */
function refusedOnce(programId: number, payload: string, secret: string) {
  return waitFor('the secret refused', async () => {
    const res = await post(programId, payload, { 'stripe-signature': signature(payload, secret) });
    return res.status === 400 ? res : null;
  });
}

// Stripe's own serialisation: pretty-printed, with a trailing newline; re-serialising would not match.
const payloadOf = (event: unknown) => `${JSON.stringify(event, null, 2)}\n`;

t.test('a signed event is produced with its original bytes, then answered 200', async (t) => {
  const secret = 'whsec_intake_test_1';
  const program = await connectedProgram(secret);
  const session = checkoutSession({ metadata: { svc_customer_key: 'k1' } });
  const event = stripeEvent('checkout.session.completed', session, { livemode: false });
  const payload = payloadOf(event);
  const res = await post(program.id, payload, { 'stripe-signature': signature(payload, secret) });
  t.same(res, { status: 200, body: { received: true } });

  const seen: { key: string; value: ProcessorEventCommand }[] = [];
  const reader = await readTopic(
    kafka,
    { topic: topicName(svc.prefix, 'processorEvents'), groupId: `${svc.prefix}webhook-reader` },
    (message) => {
      seen.push({ key: message.key!.toString(), value: JSON.parse(message.value!.toString()) });
    },
  );
  t.teardown(() => reader.close());
  const [m] = await waitFor('the event on the processor-events topic', async () =>
    seen.length > 0 ? seen : null,
  );
  t.equal(m!.key, `${program.id}:${session.payment_intent}`, 'keyed by program and payment intent');
  t.match(m!.value, {
    v: 1,
    type: 'processor_event',
    request_id: `processor:${program.id}:${event.id}`,
    program_id: program.id,
    event_id: event.id,
    event_type: 'checkout.session.completed',
    livemode: false,
  });
  t.equal(m!.value.payload, payload, 'the payload is the exact bytes that were verified');
});

t.test('refusals: signature, timestamp, program, body', async (t) => {
  const secret = 'whsec_intake_test_2';
  const program = await connectedProgram(secret);
  const payload = payloadOf(stripeEvent('invoice.paid', { id: 'in_1', object: 'invoice' }));
  const ok = signature(payload, secret);

  t.same(await post(program.id, payload, {}), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.missingSignature },
  });
  t.same(await post(program.id, payload, { 'stripe-signature': 'nonsense' }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.malformedSignature },
  });
  t.same(await post(program.id, payload, { 'stripe-signature': signature(payload, 'whsec_other') }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.badSignature },
  });
  t.same(
    await post(program.id, `${payload} `, { 'stripe-signature': ok }),
    {
      status: 400,
      body: { error: WEBHOOK_ERRORS.badSignature },
    },
    'one byte more than was signed',
  );
  const stale = signature(payload, secret, Math.floor(Date.now() / 1000) - 301);
  t.same(await post(program.id, payload, { 'stripe-signature': stale }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.stale },
  });
  t.same(await post(999_999_999, payload, { 'stripe-signature': ok }), {
    status: 404,
    body: { error: WEBHOOK_ERRORS.programNotFound },
  });
  t.same(await post('abc', payload, { 'stripe-signature': ok }), {
    status: 404,
    body: { error: WEBHOOK_ERRORS.programNotFound },
  });
  const notJson = 'not json';
  t.same(await post(program.id, notJson, { 'stripe-signature': signature(notJson, secret) }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.notEvent },
  });
  const noId = JSON.stringify({ type: 'invoice.paid' });
  t.same(await post(program.id, noId, { 'stripe-signature': signature(noId, secret) }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.notEvent },
  });
  const huge = JSON.stringify({ id: 'evt_big', type: 'x', pad: 'x'.repeat(1024 * 1024) });
  t.equal((await post(program.id, huge, { 'stripe-signature': signature(huge, secret) })).status, 413);

  const unconnected = await createProgram(sql);
  t.same(await post(unconnected.id, payload, { 'stripe-signature': ok }), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.notConnected },
  });
  // The intake caches a program's secrets; the deletion reaches it with the cache's next poll.
  await sql`update programs set deleted_at = now() where id = ${program.id}`;
  t.same(
    await waitFor('the deleted program refused', async () => {
      const res = await post(program.id, payload, { 'stripe-signature': ok });
      return res.status === 404 ? res : null;
    }),
    { status: 404, body: { error: WEBHOOK_ERRORS.programNotFound } },
  );
});

t.test('after a roll the previous secret verifies until it expires', async (t) => {
  const program = await connectedProgram('whsec_new');
  const payload = payloadOf(stripeEvent('customer.created', { id: 'cus_1' }));
  await sql`
    update processor_connections set previous_webhook_secret = 'whsec_old',
      previous_secret_expires_at = now() + interval '1 hour'
    where workspace_id = (select workspace_id from programs where id = ${program.id})`;
  t.equal(
    (await post(program.id, payload, { 'stripe-signature': signature(payload, 'whsec_old') })).status,
    200,
  );
  t.equal(
    (await post(program.id, payload, { 'stripe-signature': signature(payload, 'whsec_new') })).status,
    200,
  );
  // Moved by hand (it expires by itself 24 h after a roll): seen with the intake cache's next poll.
  await sql`
    update processor_connections set previous_secret_expires_at = now() - interval '1 second'
    where workspace_id = (select workspace_id from programs where id = ${program.id})`;
  t.same(await refusedOnce(program.id, payload, 'whsec_old'), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.badSignature },
  });
});

t.test('an advertiser connects, receives events, rolls the secret; the old one works for 24 h', async (t) => {
  const owner = await signup(svc);
  const api = (p: string) => `${svc.baseUrl}/api/advertiser${p}`;
  const created = await send('POST', api('/affiliate-programs'), { name: 'Webhooks' }, bearer(owner.session));
  t.equal(created.status, 201, 'program created');
  const programId = (created.body.data as { id: number }).id;
  const roll = () => send('POST', api('/processor-connection/roll-secret'), undefined, bearer(owner.session));
  t.same(await roll(), {
    status: 404,
    body: { error: 'No payment-processor connection to roll' },
    text: JSON.stringify({ error: 'No payment-processor connection to roll' }),
  });
  const payload = payloadOf(stripeEvent('customer.created', { id: 'cus_2' }));
  t.same(
    await post(programId, payload, { 'stripe-signature': signature(payload, 'whsec_guess') }),
    { status: 400, body: { error: WEBHOOK_ERRORS.notConnected } },
    'not connected yet (and now cached so by the intake)',
  );
  const put = await send('PUT', api('/processor-connection'), { status: 'connected' }, bearer(owner.session));
  const first = (put.body.data as { webhook_secret: string }).webhook_secret;
  t.match(first, /^whsec_/);
  // At once, not at the intake cache's next poll: a signature the cached secrets do not verify is checked
  // against Postgres once more.
  t.equal((await post(programId, payload, { 'stripe-signature': signature(payload, first) })).status, 200);

  const rolled = await roll();
  t.equal(rolled.status, 200);
  const second = (rolled.body.data as { webhook_secret: string }).webhook_secret;
  t.not(second, first, 'a new secret');
  t.equal((await post(programId, payload, { 'stripe-signature': signature(payload, second) })).status, 200);
  t.equal(
    (await post(programId, payload, { 'stripe-signature': signature(payload, first) })).status,
    200,
    'the previous secret still verifies',
  );
  const [w] = await sql<{ hours: number }[]>`
    select round(extract(epoch from previous_secret_expires_at - now()) / 3600)::int as hours
    from processor_connections where workspace_id = ${owner.workspaceId}`;
  t.equal(w!.hours, 24, 'for 24 hours');
  await sql`update processor_connections set previous_secret_expires_at = now() where workspace_id = ${owner.workspaceId}`;
  t.same(await refusedOnce(programId, payload, first), {
    status: 400,
    body: { error: WEBHOOK_ERRORS.badSignature },
  });
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  const denied = await send(
    'POST',
    api(`/processor-connection/roll-secret?workspace_id=${owner.workspaceId}`),
    undefined,
    bearer(viewer.session),
  );
  t.equal(denied.status, 403, 'a viewer may not roll the secret');
});
