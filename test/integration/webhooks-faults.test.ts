// Webhook delivery under faults (issue 19): a receiver that answers 500, then times out, then is down, then
// answers; the webhook worker killed with -9 while the receiver holds its requests; the Kafka broker killed
// and restarted; an endpoint failing for the whole (shortened) failure window, and one answering 410. In every
// case every event is delivered, each webhook-id is acknowledged (a 2xx written to an open connection) once,
// and the attempts follow the (shortened) schedule: each retry at least the schedule's delay (less its 10 %
// jitter) after the attempt before. Bounds are generous; nothing asserts that something was fast.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import type { KafkaServer } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { createProgram, ownDatabase, postJson, startServices, waitFor } from '../helpers/stack.ts';
import type { Services } from '../helpers/stack.ts';
import type { Sql } from '../../shared/db/sql.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { readTopic } from '../helpers/kafka.ts';
import { HOOKS_HOST, startReceiver, verify } from '../helpers/webhook-receiver.ts';
import type { Receiver } from '../helpers/webhook-receiver.ts';

// Its own database: no other file's webhook worker takes its deliveries (helpers/stack.ts, ownDatabase).
const db = await ownDatabase(t);
const sql = db.sql;
// A long tail (20 delays, the most WEBHOOK_RETRY_SCHEDULE takes, 91 s): on a slow machine the last delivery may
// reach its second attempt long after the first, and none may run out of attempts before the receiver is down.
const SCHEDULE_MS = [1_000, 2_000, 3_000, ...Array<number>(17).fill(5_000)];
const JITTER = 0.1;

function webhookEnv(receiver: Receiver, extra: Record<string, string> = {}) {
  return {
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_RESOLVE: `${HOOKS_HOST}=127.0.0.1`,
    NODE_EXTRA_CA_CERTS: receiver.caFile!,
    WEBHOOK_RETRY_SCHEDULE: SCHEDULE_MS.map((ms) => `${ms}ms`).join(','),
    WEBHOOK_TIMEOUT_MS: '4000',
    // A killed worker's claims expire 4 + 3 s after their attempt began (30 s margin by default).
    WEBHOOK_LEASE_MARGIN_MS: '3000',
    WEBHOOK_POLL_MS: '200',
    OUTBOX_POLL_MS: '200',
    ...db.env,
    ...extra,
  };
}

async function endpoint(svc: Services, session: string, path: string) {
  const r = await postJson(`${svc.baseUrl}/api/advertiser/webhooks`, { url: path }, bearer(session));
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data as { id: number; secret: string };
}

interface DeliveryState {
  id: string;
  webhook_id: string;
  status: string;
  attempts: number;
}
const deliveries = (db: Sql, endpointId: number) =>
  db<DeliveryState[]>`
    select id, webhook_id, status, attempts from webhook_deliveries where endpoint_id = ${endpointId} order by id`;

/** Every retry at least its scheduled delay (less the jitter) after the attempt before it. */
async function checkSchedule(t: Test, db: Sql, endpointId: number): Promise<void> {
  const rows = await db<{ delivery_id: string; attempted_at: Date }[]>`
    select a.delivery_id, a.attempted_at from webhook_attempts a
    join webhook_deliveries d on d.id = a.delivery_id
    where d.endpoint_id = ${endpointId} order by a.delivery_id, a.id`;
  const byDelivery = new Map<string, number[]>();
  for (const r of rows)
    byDelivery.set(r.delivery_id, [...(byDelivery.get(r.delivery_id) ?? []), r.attempted_at.getTime()]);
  let gaps = 0;
  const early: string[] = [];
  for (const [id, times] of byDelivery) {
    for (let i = 1; i < times.length; i++) {
      gaps++;
      const min = SCHEDULE_MS[i - 1]! * (1 - JITTER) - 20;
      if (times[i]! - times[i - 1]! < min)
        early.push(`delivery ${id} attempt ${i + 1}: ${times[i]! - times[i - 1]!} ms < ${min}`);
    }
  }
  t.same(early, [], `${gaps} retries, none before its scheduled delay`);
}

/** For a timeout's message: each delivery's state, its attempts' errors and what the receiver saw. */
async function diagnose(db: Sql, endpointId: number, receiver: Receiver): Promise<string> {
  const rows = await db<
    {
      id: string;
      webhook_id: string;
      status: string;
      attempts: number;
      due: string;
      lease: boolean;
      errors: string;
    }[]
  >`
    select d.id, d.webhook_id, d.status, d.attempts, (d.next_attempt_at - now())::text as due, d.lease_id is not null as lease,
      (select string_agg(coalesce(a.error, 'HTTP ' || a.status_code), ',' order by a.id) from webhook_attempts a where a.delivery_id = d.id) as errors
    from webhook_deliveries d where d.endpoint_id = ${endpointId} order by d.id`;
  const seen = (id: string) => receiver.received.filter((r) => r.headers['webhook-id'] === id).length;
  return `${rows.length} deliveries at ${new Date().toISOString()}: ${rows
    .map(
      (r) =>
        `#${r.id} ${r.status} attempts=${r.attempts} due=${r.due} lease=${r.lease} received=${seen(r.webhook_id)} [${r.errors}]`,
    )
    .join(' | ')}`;
}

/** Each webhook-id of the endpoint's deliveries acknowledged exactly once, and nothing else received. */
function checkAcknowledgedOnce(
  t: Test,
  receiver: Receiver,
  path: string,
  webhookIds: string[],
  secret: string,
) {
  const mine = receiver.received.filter((r) => r.path === path);
  const acks = new Map<string, number>();
  for (const r of mine) {
    verify(secret, r);
    if (r.acknowledged) acks.set(r.headers['webhook-id']!, (acks.get(r.headers['webhook-id']!) ?? 0) + 1);
  }
  t.same(
    webhookIds.filter((id) => acks.get(id) !== 1),
    [],
    `each of ${webhookIds.length} webhook-ids acknowledged exactly once`,
  );
  t.same(
    [...acks.keys()].filter((id) => !webhookIds.includes(id)),
    [],
    'no webhook-id that is not in the delivery log',
  );
}

t.test('500, then a timeout, then down, then up: every event delivered once, on schedule', async (t) => {
  const receiver = await startReceiver(t);
  const svc = await startServices(
    t,
    ['web', 'attribution-worker', 'outbox-relay', 'webhook-worker'],
    webhookEnv(receiver),
  );
  const owner = await signup(svc);
  const program = await createProgram(sql, { workspaceId: owner.workspaceId });
  const ep = await endpoint(svc, owner.session, `${receiver.url}/flaky`);
  // Per webhook-id: the first attempt is answered 500, the second held past the worker's timeout, later ones
  // 503 until the receiver has been down (connection refused) for every delivery; after that it answers 204.
  const seen = new Map<string, number>();
  let back = false;
  receiver.respond = (r) => {
    const n = (seen.get(r.headers['webhook-id']!) ?? 0) + 1;
    seen.set(r.headers['webhook-id']!, n);
    if (n === 1) return 500;
    if (n === 2) return 'hang';
    return back ? 204 : 503;
  };
  const SALES = 12;
  for (let i = 0; i < SALES; i++) {
    const r = await postJson(
      `${svc.baseUrl}/api/v1/track/sale`,
      {
        transaction_id: `flaky-${program.id}-${i}`,
        amount_cents: 100 + i,
        additional_data: { test_mode: true },
      },
      bearer(program.token),
    );
    t.equal(r.status, 200, JSON.stringify(r.body));
  }
  await waitFor(
    'every delivery attempted twice',
    async () => {
      const d = await deliveries(sql, ep.id);
      if (d.length === SALES && d.every((x) => x.attempts >= 2)) return true;
      throw new Error(await diagnose(sql, ep.id, receiver));
    },
    120_000,
  );
  await receiver.down();
  await waitFor(
    'every delivery refused a connection (receiver down)',
    async () => {
      const [r] = await sql<{ n: number }[]>`
        select count(distinct a.delivery_id)::int as n from webhook_attempts a
        join webhook_deliveries d on d.id = a.delivery_id
        where d.endpoint_id = ${ep.id} and a.error = 'connection refused'`;
      if (r!.n === SALES) return true;
      // Not yet: what the deliveries still waiting got, for the timeout's message.
      throw new Error(`${SALES - r!.n} not yet: ${await diagnose(sql, ep.id, receiver)}`);
    },
    120_000,
  );
  back = true;
  await receiver.up();
  await waitFor(
    'every delivery delivered',
    async () => {
      const d = await deliveries(sql, ep.id);
      return d.every((x) => x.status === 'delivered');
    },
    120_000,
  );
  const final = await deliveries(sql, ep.id);
  t.equal(final.length, SALES, 'one delivery per event');
  t.ok(
    final.every((d) => d.attempts >= 4),
    'each needed at least four attempts',
  );
  const errors = await sql<{ error: string | null; status_code: number | null }[]>`
    select distinct on (a.error is null, a.status_code, left(coalesce(a.error, ''), 12)) a.error, a.status_code
    from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ${ep.id}`;
  t.ok(
    errors.some((e) => e.status_code === 500),
    'attempts answered 500 are logged',
  );
  t.ok(
    errors.some((e) => /no answer within 4000 ms/.test(e.error ?? '')),
    'timed-out attempts are logged',
  );
  t.ok(
    errors.some((e) => e.error === 'connection refused'),
    'attempts while down are logged',
  );
  checkAcknowledgedOnce(
    t,
    receiver,
    '/flaky',
    final.map((d) => d.webhook_id),
    ep.secret,
  );
  await checkSchedule(t, sql, ep.id);
  const log = await getJson(
    `${svc.baseUrl}/api/advertiser/webhooks/${ep.id}/deliveries?pageSize=1`,
    bearer(owner.session),
  );
  t.match(log.body, { data: [{ status: 'delivered', last_status_code: 204 }], meta: { has_more: true } });
  const one = (log.body.data as { id: number }[])[0]!;
  const detail = await getJson(
    `${svc.baseUrl}/api/advertiser/webhook-deliveries/${one.id}`,
    bearer(owner.session),
  );
  t.match(detail.body, {
    data: { attempt_log: [{ status_code: 500 }, { status_code: null }, { status_code: null }] },
  });
});

t.test(
  'the worker killed with -9 mid delivery: its claims expire, nothing lost, each acknowledged once',
  async (t) => {
    const receiver = await startReceiver(t);
    const svc = await startServices(t, ['web', 'outbox-relay', 'webhook-worker'], webhookEnv(receiver));
    const owner = await signup(svc);
    const ep = await endpoint(svc, owner.session, `${receiver.url}/held`);
    // The receiver holds every request until the worker is dead.
    let hold = true;
    receiver.respond = () => (hold ? 'hang' : 204);
    const EVENTS = 8;
    for (let i = 0; i < EVENTS; i++) {
      const r = await postJson(
        `${svc.baseUrl}/api/advertiser/webhooks/${ep.id}/test`,
        {},
        bearer(owner.session),
      );
      t.equal(r.status, 202);
    }
    await waitFor('the receiver holding a request', async () => receiver.received.length >= 1, 60_000, 20);
    await svc.kill('webhook-worker');
    const held = receiver.received.length;
    hold = false;
    t.ok(held >= 1, `killed with ${held} request(s) held by the receiver`);
    await svc.start('webhook-worker');
    // The claims of the killed worker expire after the attempt's timeout and a margin (WEBHOOK_TIMEOUT_MS + WEBHOOK_LEASE_MARGIN_MS).
    await waitFor(
      'every delivery delivered',
      async () => {
        const d = await deliveries(sql, ep.id);
        return d.length === EVENTS && d.every((x) => x.status === 'delivered');
      },
      180_000,
    );
    const final = await deliveries(sql, ep.id);
    checkAcknowledgedOnce(
      t,
      receiver,
      '/held',
      final.map((d) => d.webhook_id),
      ep.secret,
    );
    const heldIds = receiver.received.slice(0, held).map((r) => r.headers['webhook-id']);
    t.ok(
      heldIds.every((id) => receiver.received.filter((r) => r.headers['webhook-id'] === id).length >= 2),
      'a request held at the kill was sent again with the same webhook-id',
    );
    t.ok(
      receiver.received.slice(0, held).every((r) => !r.acknowledged),
      'the held ones were never acknowledged',
    );
  },
);

t.test(
  'an endpoint failing for the whole window is disabled, notified and mailed; 410 disables at once',
  async (t) => {
    const receiver = await startReceiver(t);
    const svc = await startServices(
      t,
      ['web', 'outbox-relay', 'webhook-worker', 'notification-worker'],
      webhookEnv(receiver, {
        WEBHOOK_DISABLE_AFTER: '3s',
        WEBHOOK_RETRY_SCHEDULE:
          '500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms',
      }),
    );
    const mail = await readTopic(t, svc.prefix, 'mail');
    const owner = await signup(svc);
    const auth = bearer(owner.session);
    let down = true;
    receiver.respond = (r) => (r.path === '/gone' ? 410 : down ? 503 : 204);
    const ep = await endpoint(svc, owner.session, `${receiver.url}/dead`);
    await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${ep.id}/test`, {}, auth);
    const read = () => getJson(`${svc.baseUrl}/api/advertiser/webhooks/${ep.id}`, auth);
    await waitFor(
      'the endpoint disabled',
      async () =>
        (await read()).body.data && ((await read()).body.data as { status: string }).status === 'disabled',
      120_000,
    );
    t.match((await read()).body.data, { status: 'disabled', disabled_reason: 'failing' });
    // Queued with the change, stored by the notification worker.
    const note = await waitFor('the notification', async () => {
      const [n] = await sql<{ kind: string; title: string; body: string; data: { endpoint_id: number } }[]>`
      select kind, title, body, data from notifications
      where workspace_id = ${owner.workspaceId} and kind = 'webhook_endpoint_disabled'`;
      return n ?? null;
    });
    t.match(note, { kind: 'webhook_endpoint_disabled', data: { endpoint_id: ep.id, reason: 'failing' } });
    t.match(note!.body, /Every delivery to https:\/\/hooks\.test:\d+\/dead failed for/);
    await waitFor(
      'the mail to the owner',
      async () => mail.some((m) => m.value.includes(owner.email)),
      60_000,
    );
    t.match(JSON.parse(mail.find((m) => m.value.includes(owner.email))!.value), {
      to: owner.email,
      template: 'notification',
      data: { title: 'A webhook endpoint was disabled' },
    });
    const [pending] = await deliveries(sql, ep.id);
    t.equal(pending!.status, 'pending', 'its delivery waits, neither sent nor dropped');
    const attemptsAtDisable = pending!.attempts;
    await new Promise((r) => setTimeout(r, 1500));
    t.equal(
      (await deliveries(sql, ep.id))[0]!.attempts,
      attemptsAtDisable,
      'nothing is sent to a disabled endpoint',
    );
    t.same(
      (await send('POST', `${svc.baseUrl}/api/advertiser/webhook-deliveries/${pending!.id}/retry`, {}, auth))
        .body,
      {
        error: 'Webhook endpoint is disabled; enable it first',
      },
    );

    // Enabled again with the receiver back: the waiting delivery goes out.
    down = false;
    const enabled = await send('POST', `${svc.baseUrl}/api/advertiser/webhooks/${ep.id}/enable`, {}, auth);
    t.match(enabled.body.data, { status: 'enabled', failing_since: null });
    await waitFor(
      'the waiting delivery delivered',
      async () => (await deliveries(sql, ep.id))[0]!.status === 'delivered',
      60_000,
    );

    // A manual retry of a delivered one: one more attempt, same webhook-id.
    const before = receiver.received.filter((r) => r.path === '/dead').length;
    const retried = await send(
      'POST',
      `${svc.baseUrl}/api/advertiser/webhook-deliveries/${pending!.id}/retry`,
      {},
      auth,
    );
    t.equal(retried.status, 202);
    await waitFor(
      'the retried attempt',
      async () => receiver.received.filter((r) => r.path === '/dead').length > before,
      60_000,
    );
    const again = receiver.received.filter((r) => r.path === '/dead').at(-1)!;
    t.equal(again.headers['webhook-id'], pending!.webhook_id, 'the same webhook-id');
    await waitFor(
      'delivered again',
      async () => (await deliveries(sql, ep.id))[0]!.status === 'delivered',
      30_000,
    );

    const gone = await endpoint(svc, owner.session, `${receiver.url}/gone`);
    await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${gone.id}/test`, {}, auth);
    await waitFor(
      '410 disables',
      async () =>
        (
          (await getJson(`${svc.baseUrl}/api/advertiser/webhooks/${gone.id}`, auth)).body.data as {
            status: string;
          }
        ).status === 'disabled',
      60_000,
    );
    t.match((await getJson(`${svc.baseUrl}/api/advertiser/webhooks/${gone.id}`, auth)).body.data, {
      disabled_reason: 'gone',
    });
    t.match((await deliveries(sql, gone.id))[0], { status: 'failed', attempts: 1 });
  },
);

async function ownBroker(t: Test) {
  const dir = join(STACK_DIR, `webhooks-faults-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  const log = createLogger('webhooks-faults', 'warn');
  const state: { broker: KafkaServer | null } = { broker: null };
  t.teardown(async () => {
    await state.broker?.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    brokers: `127.0.0.1:${ports.port}`,
    async start() {
      state.broker = await startKafka({ dir, ...ports, log });
    },
    async kill() {
      const b = state.broker!;
      b.kill();
      if (b.process.exitCode === null && b.process.signalCode === null)
        await new Promise((r) => b.process.once('exit', r));
      state.broker = null;
    },
  };
}

t.test(
  'the broker killed and restarted: retries go on from Postgres, events of the outage follow',
  async (t) => {
    const broker = await ownBroker(t);
    await broker.start();
    const receiver = await startReceiver(t);
    const svc = await startServices(t, ['web', 'outbox-relay', 'webhook-worker'], {
      ...webhookEnv(receiver),
      KAFKA_BROKERS: broker.brokers,
    });
    const owner = await signup(svc);
    const auth = bearer(owner.session);
    const ep = await endpoint(svc, owner.session, `${receiver.url}/broker`);
    let failing = true;
    receiver.respond = () => (failing ? 500 : 204);
    const test = async () => {
      const r = await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${ep.id}/test`, {}, auth);
      t.equal(r.status, 202, 'recorded whatever Kafka does');
    };
    for (let i = 0; i < 4; i++) await test();
    await waitFor(
      'the first attempts answered 500',
      async () => {
        const d = await deliveries(sql, ep.id);
        return d.length === 4 && d.every((x) => x.attempts >= 1);
      },
      120_000,
    );
    await broker.kill();
    // With the broker gone: events recorded meanwhile wait in the outbox; pending retries go on.
    for (let i = 0; i < 4; i++) await test();
    failing = false;
    await waitFor(
      'the pending retries delivered while the broker is down',
      async () => {
        const d = await deliveries(sql, ep.id);
        return d.filter((x) => x.status === 'delivered').length >= 4;
      },
      120_000,
    );
    t.equal((await deliveries(sql, ep.id)).length, 4, 'the outage’s events not fanned out yet');
    await broker.start();
    await waitFor(
      'all eight delivered after the broker is back',
      async () => {
        const d = await deliveries(sql, ep.id);
        return d.length === 8 && d.every((x) => x.status === 'delivered');
      },
      240_000,
    );
    const final = await deliveries(sql, ep.id);
    checkAcknowledgedOnce(
      t,
      receiver,
      '/broker',
      final.map((d) => d.webhook_id),
      ep.secret,
    );
    await checkSchedule(t, sql, ep.id);
  },
);
