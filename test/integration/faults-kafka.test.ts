// Issue 11 items 1 and 3 with Kafka away: every tracking route and the processor webhook answer 503 with
// Retry-After (never hang) while this file's own broker is killed, then 200 once it is back; web and a
// worker started while the broker does not accept connections stay up, say they wait, and become ready.
// No assertion is about time: a client timeout far above the bound turns a hang into a failure.
import t from 'tap';
import type { Test } from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import type { KafkaServer } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import {
  createLink,
  createProgram,
  startServices,
  testSql,
  waitFor,
  waitForRecovery,
} from '../helpers/stack.ts';
import { checkoutSession, signature, stripeEvent } from '../helpers/stripe.ts';

const sql = testSql(t);
const log = createLogger('faults-kafka-test', 'warn');
/** Far above PRODUCE_TIMEOUT_MS (2 s) and COMMAND_DEADLINE_MS (5 s): reaching it means a hang. */
const CLIENT_TIMEOUT_MS = 60_000;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(CLIENT_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: parsed };
}

async function ownBroker(t: Test, name: string) {
  const dir = join(STACK_DIR, `${name}-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
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

t.test('Kafka killed: every tracking call answers 503 + Retry-After, then 200 once it is back', async (t) => {
  const broker = await ownBroker(t, 'faults-kafka');
  await broker.start();
  const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker', 'reversal-worker'], {
    KAFKA_BROKERS: broker.brokers,
  });
  const program = await createProgram(sql);
  const secret = 'whsec_faults_kafka';
  await sql`
    insert into processor_connections (workspace_id, status, webhook_secret)
    select workspace_id, 'connected', ${secret} from programs where id = ${program.id}`;
  const link = await createLink(sql, program.id);
  const auth = { authorization: `Bearer ${program.token}` };
  const url = (p: string) => `${svc.baseUrl}${p}`;
  let n = 0;
  const click = () =>
    post(
      url('/api/v1/track/click'),
      JSON.stringify({ affiliate_url: `https://s.example/?aff=${link.shortLink}` }),
    );
  const outageEventIds: string[] = [];
  const clickWith = (eventId: string) =>
    post(
      url('/api/v1/track/click'),
      JSON.stringify({ affiliate_url: `https://s.example/?aff=${link.shortLink}`, event_id: eventId }),
    );
  const clickId = async () => {
    const r = await click();
    if (r.status !== 200) throw new Error(`click: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.click_id as string;
  };
  // After the outage the calls are retried until 200: the same Idempotency-Key makes a retry of a call
  // answered 503 (still processing while the workers rejoin) get its recorded answer.
  const key = (k: string) => ({ ...auth, 'idempotency-key': k });
  const lead = (id: string) =>
    post(
      url('/api/v1/track/lead'),
      JSON.stringify({ click_id: id, customer_key: `k-${id}` }),
      key(`lead-${id}`),
    );
  const sale = (id: string, txn: string) =>
    post(
      url('/api/v1/track/sale'),
      JSON.stringify({ transaction_id: txn, amount_cents: 1000, click_id: id }),
      key(`sale-${txn}`),
    );
  const refund = (txn: string) =>
    post(url('/api/v1/track/refund'), JSON.stringify({ transaction_id: txn }), key(`refund-${txn}`));
  const webhook = () => {
    const payload = JSON.stringify(stripeEvent('checkout.session.completed', checkoutSession({})));
    return post(url(`/api/v1/webhooks/processor/${program.id}`), payload, {
      'stripe-signature': signature(payload, secret),
    });
  };

  // Before: a sale to refund later, and customers for leads during and after the outage.
  const before = await clickId();
  const txn = (what: string) => `t-${what}-${program.id}`;
  for (const what of ['refund-during', 'refund-after']) {
    const s = await sale(before, txn(what));
    t.equal(s.status, 200, `a sale before the outage: ${JSON.stringify(s.body)}`);
  }
  const forOutageLead = await clickId();
  const forLaterLead = await clickId();

  await broker.kill();
  const calls: [string, () => Promise<Answer>][] = [
    [
      'click',
      () => {
        const eventId = randomUUID();
        outageEventIds.push(eventId);
        return clickWith(eventId);
      },
    ],
    ['lead', () => lead(forOutageLead)],
    ['sale', () => sale(before, txn(`during-${++n}`))],
    ['refund', () => refund(txn('refund-during'))],
    ['processor webhook', webhook],
  ];
  // Twice: the first meets the bound, the second the open circuit (refused at once).
  for (const round of [1, 2]) {
    const answers = await Promise.all(calls.map(([, call]) => call()));
    calls.forEach(([name], i) => {
      const a = answers[i]!;
      t.equal(a.status, 503, `round ${round}: ${name} answers 503 (${JSON.stringify(a.body)})`);
      t.ok(a.retryAfter && Number(a.retryAfter) > 0, `round ${round}: ${name} has Retry-After`);
      t.type(a.body.error, 'string', `round ${round}: ${name} says why`);
    });
  }
  t.equal(svc.procs.get('web')!.child.exitCode, null, 'web is still up');

  await broker.start();
  const back: [string, () => Promise<Answer>][] = [
    ['click', click],
    ['lead', () => lead(forLaterLead)],
    ['sale', () => sale(before, txn('after'))],
    ['refund', () => refund(txn('refund-after'))],
    ['processor webhook', webhook],
  ];
  for (const [name, call] of back) {
    let last: Answer | null = null;
    const ok = await waitFor(
      `${name} answered 200 after the broker's return`,
      async () => {
        last = await call();
        return last.status === 200 ? last : null;
      },
      120_000,
      200,
    ).catch((err: Error) => {
      if (process.env.FAULTS_DEBUG) console.error(svc.output.slice(-200).join('\n'));
      throw new Error(`${err.message}; last answer ${JSON.stringify(last)}`);
    });
    t.equal(ok.status, 200, `${name} answers 200 again`);
  }
  for (const [name, p] of svc.procs) t.equal(p.child.exitCode, null, `${name} did not exit`);

  // The callers of the clicks answered 503 retry them with their event_id: each is stored once, whether
  // or not the Kafka client wrote the first attempt after its 503.
  const retried: string[] = [];
  for (const eventId of outageEventIds) {
    const a = await waitFor(`the retry of ${eventId}`, async () => {
      const r = await clickWith(eventId);
      return r.status === 200 ? r : null;
    });
    retried.push(a.body.click_id as string);
  }
  const rows = await waitFor(
    'the retried clicks stored',
    async () => {
      const r = await sql<{ n: number }[]>`
        select count(*)::int as n from click_events where click_id = any(${retried}) group by click_id`;
      return r.length === retried.length ? r : null;
    },
    60_000,
    200,
  );
  t.same(
    rows.map((r) => r.n),
    retried.map(() => 1),
    'each click retried after a 503 is stored once',
  );
  const [pairs] = await sql<{ n: number }[]>`
    select count(*)::int as n from click_client_events where client_event_id = any(${outageEventIds}::uuid[])`;
  t.equal(pairs!.n, outageEventIds.length, 'one (program, event_id) per retried click');
});

t.test('web and a worker started while Kafka is down wait for it, then become ready', async (t) => {
  const broker = await ownBroker(t, 'faults-kafka-boot');
  const svc = await startServices(t, [], { KAFKA_BROKERS: broker.brokers, OPS_PORT: '0' });
  // Web listens once Postgres answers, and is ready once Kafka does: not awaited here.
  // Their own start-up bounds (60 s) may pass while the broker starts on a slow machine: the test waits
  // for readiness itself, with a bound of its own.
  void svc.start('web').catch(() => {});
  await waitFor('web listening', () => fetch(`${svc.baseUrl}/healthz`).then((r) => r.ok), 60_000, 200);
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const click = () =>
    post(
      `${svc.baseUrl}/api/v1/track/click`,
      JSON.stringify({ affiliate_url: `https://s.example/?aff=${link.shortLink}` }),
    );
  const down = await click();
  t.equal(down.status, 503, 'a click before Kafka ever accepted a connection: 503');
  t.ok(down.retryAfter, 'with Retry-After');
  const ready = await fetch(`${svc.baseUrl}/readyz`);
  t.equal(ready.status, 503, '/readyz says not ready');

  void svc.start('click-worker').catch(() => {});
  await waitFor(
    'both processes to log that they wait for Kafka',
    async () =>
      svc.output.some((l) => l.startsWith('[web]') && /waiting for kafka/.test(l)) &&
      svc.output.some((l) => l.startsWith('[click-worker]') && /waiting for kafka/.test(l)),
    60_000,
  );
  for (const name of ['web', 'click-worker'] as const) {
    const p = svc.procs.get(name)!;
    t.ok(p.child.exitCode === null && p.child.signalCode === null, `${name} is still up while Kafka is down`);
  }
  const stacks = svc.output.filter((l) => /^\[\S+\]\s+at /.test(l) || /"stack":/.test(l));
  t.same(stacks, [], 'no stack traces while waiting');

  await broker.start();
  await waitForRecovery(svc);
  const ok = await waitFor(
    'a click accepted',
    async () => {
      const a = await click();
      return a.status === 200 ? a : null;
    },
    60_000,
    200,
  );
  const id = ok.body.click_id as string;
  await waitFor(
    'the click stored by the worker that waited',
    async () => (await sql`select 1 from click_events where click_id = ${id}`).length === 1,
    60_000,
    200,
  );
  t.pass('the click went through the worker that started while Kafka was down');
});
