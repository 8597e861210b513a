// The processor registry (shared/processors/index.ts; docs/processors.md): every adapter file is in the
// table, every list of processors (API schemas and the OpenAPI enums, the codes' and discounts'
// processor_ids, the SDK's types, the dashboard's) is the table's, a name outside it is refused with the
// 404 it always had, and the one intake takes every adapter's events (Stripe's messages in their old shape).
// Offline: the ingress plugin on a small Fastify app with a stub cache and producer.
import t from 'tap';
import Fastify from 'fastify';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { installJsonHandling } from '../../shared/http/server.ts';
import {
  ADAPTERS,
  PROCESSORS,
  PROCESSOR_WORDS,
  UNKNOWN_PROCESSOR,
  isProcessor,
} from '../../shared/processors/index.ts';
import type { Processor } from '../../shared/processors/index.ts';
import type { StoredSecrets } from '../../shared/processors/adapter.ts';
import { parseProcessorEvent } from '../../shared/contracts/processor-events.ts';
import type { ProcessorEventCommand } from '../../shared/contracts/processor-events.ts';
import { DISCOUNT_PROCESSORS } from '../../shared/domain/discount.ts';
import { ERR, PROCESSORS as CODE_PROCESSORS } from '../../services/api/modules/codes/service.ts';
import {
  PROCESSORS as CONNECTION_PROCESSORS,
  UNKNOWN_PROCESSOR as CONNECTION_UNKNOWN,
  secretError,
} from '../../services/api/modules/processor/service.ts';
import { ingressPlugin } from '../../services/ingress/app.ts';
import type { IngressDeps } from '../../services/ingress/deps.ts';
import { OTHER_PROCESSORS, PROCESSOR_NAMES } from '../../services/dashboard/src/processors.ts';
import { buildOpenApiDocument } from '../../scripts/lib/openapi.ts';
import { TYPES_FILE } from '../../scripts/sdk-types.ts';
import { signature as stripeSignature, stripeEvent } from '../helpers/stripe.ts';
import {
  lsEvent,
  lsSignature,
  paddleEvent,
  paddleSignature,
  polarEvent,
  polarHeaders,
} from '../helpers/processors.ts';

const DIR = join(import.meta.dirname, '../../shared/processors');
const NOT_ADAPTERS = new Set(['index.ts', 'adapter.ts', 'common.ts']);

t.test('every adapter file is in the table, once', async (t) => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.ts') && !NOT_ADAPTERS.has(f));
  const registered = Object.values(ADAPTERS) as unknown[];
  for (const f of files) {
    const mod = (await import(join(DIR, f))) as Record<string, unknown>;
    const adapters = Object.values(mod).filter(
      (v) => typeof v === 'object' && v !== null && 'interpret' in v && 'verify' in v,
    );
    t.equal(adapters.length, 1, `${f} exports one adapter`);
    t.ok(registered.includes(adapters[0]), `${f}'s adapter is in shared/processors/index.ts`);
  }
  t.equal(registered.length, files.length, 'one table line per adapter file');
  t.equal(new Set(registered).size, registered.length, 'no adapter twice');
});

t.test('every list of processors is the table', async (t) => {
  const names = Object.keys(ADAPTERS);
  t.same(PROCESSORS, names, 'PROCESSORS');
  for (const p of names) t.ok(isProcessor(p), `isProcessor(${p})`);
  t.same(CODE_PROCESSORS, names, "the codes module's processor_ids");
  t.same(CONNECTION_PROCESSORS, names, 'the processor-connections rows');
  t.same(DISCOUNT_PROCESSORS, names, "a group discount's processor_ids");
  t.same(PROCESSOR_NAMES, names, "the dashboard's processors");
  t.same(
    OTHER_PROCESSORS,
    names.filter((p) => p !== 'stripe'),
    "the dashboard's non-Stripe sections",
  );
  t.equal(UNKNOWN_PROCESSOR, `Unknown processor: use one of ${names.join(', ')}`);
  t.equal(CONNECTION_UNKNOWN, UNKNOWN_PROCESSOR, 'one 404 text for the API and the ingress');
  t.match(ERR.processorIds, PROCESSOR_WORDS, "the codes' processor_ids error names each");

  // The OpenAPI document: every enum naming a processor, every processor_ids object.
  const doc = await buildOpenApiDocument();
  const enums: unknown[][] = [];
  const idObjects: string[][] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (typeof v !== 'object' || v === null) return;
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.enum) && o.enum.some((e) => names.includes(e as string))) enums.push(o.enum);
    const props = o.properties as Record<string, Record<string, unknown>> | undefined;
    const ids = props?.processor_ids;
    if (ids) {
      const objects = [ids, ...((ids.anyOf as Record<string, unknown>[] | undefined) ?? [])];
      for (const s of objects) if (s.properties) idObjects.push(Object.keys(s.properties));
    }
    Object.values(o).forEach(walk);
  };
  walk(doc);
  t.ok(enums.length >= 4, `processor enums in the document (${enums.length})`);
  for (const e of enums) t.same(e, names, 'an OpenAPI processor enum');
  t.ok(idObjects.length >= 4, `processor_ids objects in the document (${idObjects.length})`);
  for (const k of idObjects) t.same(k, names, 'a processor_ids object');

  // The SDK's generated types (what the dashboard reads the list from).
  const union = names.map((p) => JSON.stringify(p)).join(' | ');
  t.ok(readFileSync(TYPES_FILE, 'utf8').includes(`processor: ${union};`), `the SDK's types: ${union}`);
});

const PROGRAM = 7;
const SECRETS: Record<Processor, string> = {
  stripe: 'whsec_registry_test_secret',
  paddle: 'pdl_ntfset_registry_test',
  lemonsqueezy: 'ls-registry',
  polar: `whsec_${Buffer.from('polar registry test secret').toString('base64')}`,
};

async function build() {
  const sent: { key: string; message: ProcessorEventCommand }[] = [];
  const stored: StoredSecrets = {
    workspaceId: 1,
    secret: SECRETS.stripe,
    previousSecret: null,
    previousExpiresAt: null,
    others: { paddle: SECRETS.paddle, lemonsqueezy: SECRETS.lemonsqueezy, polar: SECRETS.polar },
  };
  const deps = {
    cache: { webhookSecrets: async (id: number) => (id === PROGRAM ? stored : null) },
    producer: {
      send: async (_topic: string, m: { key: string; value: string }) => {
        sent.push({ key: m.key, message: JSON.parse(m.value) as ProcessorEventCommand });
      },
    },
    topics: { clicks: 'c', sales: 's', refunds: 'r', processorEvents: 'p' },
  } as unknown as IngressDeps;
  const app = Fastify();
  installJsonHandling(app);
  await app.register(ingressPlugin, deps);
  await app.ready();
  return { app, sent };
}

t.test('a processor outside the table is refused with the 404 it always had', async (t) => {
  const { app, sent } = await build();
  t.teardown(() => app.close());
  for (const name of [
    'square',
    'Stripe',
    'STRIPE',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
  ]) {
    const r = await app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${name}/${PROGRAM}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    t.same(
      { status: r.statusCode, body: r.json() },
      { status: 404, body: { error: UNKNOWN_PROCESSOR } },
      name,
    );
    t.notOk(isProcessor(name), `isProcessor(${name})`);
  }
  for (const p of PROCESSORS) {
    const r = await app.inject({
      method: 'POST',
      url: `/api/v1/webhooks/${p}/${PROGRAM}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    t.same(
      { status: r.statusCode, body: r.json() },
      { status: 400, body: { error: ADAPTERS[p].errors.missingSignature } },
      `${p} reaches its adapter`,
    );
  }
  t.equal(sent.length, 0);
  const foreign = { v: 1, type: 'processor_event', program_id: 1, processor: 'square' };
  t.equal(parseProcessorEvent(Buffer.from(JSON.stringify(foreign))), 'bad processor', 'on the topic too');
  t.equal(secretError('stripe', 'not-whsec'), 'webhook_secret must start with whsec_ for Stripe');
  t.equal(secretError('lemonsqueezy', 'abc'), 'webhook_secret must be 6 to 40 characters for Lemon Squeezy');
  t.equal(secretError('paddle', 'x'), null);
});

/** A signed event of each processor: its body, headers, event id and what its Kafka key names. */
function signed(p: Processor): { body: string; headers: Record<string, string>; id: string; key: string } {
  switch (p) {
    case 'stripe': {
      const e = stripeEvent('charge.refunded', { id: 'ch_1', payment_intent: 'pi_1' });
      const body = JSON.stringify(e);
      return {
        body,
        headers: { 'stripe-signature': stripeSignature(body, SECRETS.stripe) },
        id: e.id,
        key: 'pi_1',
      };
    }
    case 'paddle': {
      const e = paddleEvent('transaction.completed', { id: 'txn_1', subscription_id: null });
      const body = JSON.stringify(e);
      return {
        body,
        headers: { 'paddle-signature': paddleSignature(body, SECRETS.paddle) },
        id: e.event_id,
        key: 'txn_1',
      };
    }
    case 'lemonsqueezy': {
      const body = JSON.stringify(lsEvent('order_created', { type: 'orders', id: '42', attributes: {} }));
      return {
        body,
        headers: { 'x-signature': lsSignature(body, SECRETS.lemonsqueezy) },
        id: 'order_created:42',
        key: 'order:42',
      };
    }
    case 'polar': {
      const body = JSON.stringify(polarEvent('order.paid', { id: 'ord_1' }));
      const headers = polarHeaders(body, SECRETS.polar);
      return { body, headers, id: headers['webhook-id']!, key: 'ord_1' };
    }
  }
}

t.test("one intake takes every adapter's events; Stripe's messages keep their old shape", async (t) => {
  const { app, sent } = await build();
  t.teardown(() => app.close());
  for (const p of PROCESSORS) {
    const s = signed(p);
    const paths = [`/api/v1/webhooks/${p}/${PROGRAM}`];
    if (p === 'stripe') paths.push(`/api/v1/webhooks/processor/${PROGRAM}`);
    for (const url of paths) {
      sent.length = 0;
      const r = await app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json', ...s.headers },
        payload: s.body,
      });
      t.same({ status: r.statusCode, body: r.json() }, { status: 200, body: { received: true } }, url);
      t.equal(sent.length, 1, `${url}: one message`);
      const { key, message } = sent[0]!;
      const legacy = p === 'stripe';
      t.equal(key, legacy ? `${PROGRAM}:${s.key}` : `${PROGRAM}:${p}:${s.key}`, `${url}: key`);
      t.equal(
        message.request_id,
        legacy ? `processor:${PROGRAM}:${s.id}` : `processor:${PROGRAM}:${p}:${s.id}`,
        `${url}: request id`,
      );
      t.equal(message.processor, legacy ? undefined : p, `${url}: processor field`);
      t.equal('processor' in message, !legacy, `${url}: Stripe's message has no processor field`);
      t.equal(message.event_id, s.id);
      t.equal(message.payload, s.body, 'the body as verified');
      t.same(parseProcessorEvent(Buffer.from(JSON.stringify(message))), message, 'the worker reads it back');
    }
  }
});
