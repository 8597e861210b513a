// Health, readiness and metrics of the web process and a worker, against real dependencies; readiness
// turns 503 naming Kafka while the broker is down, and back when it returns; the process stays up.
import t from 'tap';
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import { STACK_DIR, freePort } from '../../scripts/lib/stack/stack.ts';
import { startKafka } from '../../scripts/lib/stack/kafka-server.ts';
import type { KafkaServer } from '../../scripts/lib/stack/kafka-server.ts';
import { createLogger } from '../../shared/logger.ts';
import { startServices, waitFor } from '../helpers/stack.ts';
import { getJson } from '../helpers/accounts.ts';

const text = async (url: string) => {
  const r = await fetch(url);
  return { status: r.status, body: await r.text() };
};

t.test('web: /healthz and /readyz on the public port, /metrics only on the operations port', async (t) => {
  const opsPort = await freePort();
  const svc = await startServices(t, ['web'], { OPS_PORT: String(opsPort) });
  t.same((await getJson(`${svc.baseUrl}/healthz`)).body, { ok: true });
  const ready = await getJson(`${svc.baseUrl}/readyz`);
  t.same(ready.body, { ready: true, checks: { postgres: 'ok', kafka: 'ok' } });
  const ops = `http://127.0.0.1:${opsPort}`;
  t.same((await getJson(`${ops}/healthz`)).body, { ok: true });
  t.equal((await getJson(`${ops}/readyz`)).status, 200);
  t.equal((await getJson(`${svc.baseUrl}/metrics`)).status, 404, 'no metrics on the public port');
  const metrics = await text(`${ops}/metrics`);
  t.equal(metrics.status, 200);
  t.match(
    metrics.body,
    /svc_http_requests_total\{route="\/readyz",method="GET",status="200",process="web"\} \d+/,
  );
  t.match(metrics.body, /svc_http_request_duration_seconds_bucket\{/);
  t.match(metrics.body, /process_cpu_user_seconds_total\{process="web"\}/);
});

t.test('a worker: ready once its consumer joined; metrics of its chunks', async (t) => {
  const opsPort = await freePort();
  await startServices(t, ['ledger-worker'], { OPS_PORT: String(opsPort) });
  const ops = `http://127.0.0.1:${opsPort}`;
  const ready = await waitFor('the worker ready', async () => {
    const r = await getJson(`${ops}/readyz`);
    return r.status === 200 ? r : null;
  });
  t.same(ready.body, { ready: true, checks: { postgres: 'ok', kafka: 'ok', consumer: 'ok' } });
  const metrics = await text(`${ops}/metrics`);
  t.match(metrics.body, /svc_consumer_joined\{process="ledger-worker"\} 1/);
  t.match(metrics.body, /svc_chunk_apply_seconds_bucket/);
});

t.test('readiness names Kafka while the broker is down, and recovers', async (t) => {
  const log = createLogger('ops-test', 'warn');
  const dir = join(STACK_DIR, `ops-${process.pid}`);
  const ports = { port: await freePort(), controllerPort: await freePort() };
  let broker: KafkaServer = await startKafka({ dir, ...ports, log });
  t.teardown(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const svc = await startServices(t, ['web'], { KAFKA_BROKERS: broker.brokers });
  t.equal((await getJson(`${svc.baseUrl}/readyz`)).status, 200);
  broker.kill();
  const down = await waitFor('readiness 503', async () => {
    const r = await getJson(`${svc.baseUrl}/readyz`);
    return r.status === 503 ? r : null;
  });
  t.match(down.body, { error: 'not ready: kafka', checks: { postgres: 'ok' } });
  t.same((await getJson(`${svc.baseUrl}/healthz`)).body, { ok: true }, 'alive all the same');
  const killed = broker.process;
  if (killed.exitCode === null && killed.signalCode === null)
    await new Promise((r) => killed.once('exit', r));
  broker = await startKafka({ dir, ...ports, log });
  await waitFor(
    'readiness back',
    async () => (await getJson(`${svc.baseUrl}/readyz`)).status === 200,
    120_000,
    250,
  );
  t.equal(svc.procs.get('web')!.child.exitCode, null, 'the web process never exited');
});
