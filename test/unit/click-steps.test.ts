// The click worker's steps on the one chunk runner (shared/pipeline/message-steps.ts), against fake
// persist and lead handlers: a lead is told from a click by the record's `type` header the ingress sets;
// a record from before the header (an upgrade's backlog) by its JSON `type` field, never by its bytes;
// clicks are stored before the chunk's leads are applied; enrichment errors are dead-lettered as `enrich`;
// the status line keeps its fields. The same on the real broker: test/integration/click-pipeline.test.ts.
import t from 'tap';
import { isLeadRecord } from '../../shared/contracts/clicks.ts';
import type { ClickMessage } from '../../shared/contracts/clicks.ts';
import type { ConsumedMessage, Headers } from '../../shared/pipeline/kafka.ts';
import type { BatchingProducer, Message } from '../../shared/pipeline/kafka.ts';
import type { Sql } from '../../shared/db/sql.ts';
import { createLogger } from '../../shared/logger.ts';
import { runSteps } from '../../shared/pipeline/message-steps.ts';
import { createClickSteps } from '../../services/workers/clicks/pipeline.ts';
import type { EnrichedClick } from '../../services/workers/clicks/steps/enrich-click.ts';

const log = createLogger('test', 'silent');
let offset = 0;

function click(n: number, extra: Partial<ClickMessage> = {}): ClickMessage {
  return {
    v: 1,
    type: 'click',
    event_id: String(1000 + n),
    ts: Date.now() - 5,
    program_id: 1,
    link_id: 2,
    partner_id: 3,
    partner_program_id: 4,
    click_id: `cust_4_${1000 + n}`,
    is_test: false,
    ip: null,
    user_agent: null,
    page_url: null,
    page_title: null,
    referrer_url: null,
    session_id: null,
    screen_resolution: null,
    viewport_size: null,
    language: null,
    timezone: null,
    ...extra,
  };
}

/** A lead command's JSON, fields in the order given (the old byte prefix needed `{"v":1,"type":"lead"`). */
const leadJson = (order: 'ingress' | 'type-first') =>
  order === 'ingress'
    ? JSON.stringify({ v: 1, type: 'lead', request_id: 'r1', ts: 1, click_id: 'cust_4_1' })
    : JSON.stringify({ type: 'lead', v: 1, request_id: 'r2', ts: 1, click_id: 'cust_4_2' });

function record(value: string | Buffer | null, headers?: Headers): ConsumedMessage {
  return {
    topic: 'clicks',
    partition: 0,
    offset: String(offset++),
    key: null,
    value: value === null ? null : Buffer.from(value),
    headers,
    timestamp: String(Date.now()),
  };
}
const typed = (type: string): Headers => ({ type: Buffer.from(type) });

t.test('isLeadRecord: the type header decides; without one, the JSON type field', async (t) => {
  t.equal(isLeadRecord(typed('lead'), Buffer.from(leadJson('ingress'))), true, 'header lead');
  t.equal(isLeadRecord({ type: 'lead' }, Buffer.from('{}')), true, 'header lead as a string');
  t.equal(isLeadRecord(typed('click'), Buffer.from(JSON.stringify(click(1)))), false, 'header click');
  t.equal(
    isLeadRecord(typed('click'), Buffer.from(leadJson('ingress'))),
    false,
    'the header wins over the value, whatever its bytes begin with',
  );
  t.equal(isLeadRecord(undefined, Buffer.from(leadJson('ingress'))), true, 'legacy lead, no header');
  t.equal(
    isLeadRecord(undefined, Buffer.from(leadJson('type-first'))),
    true,
    'legacy lead whose fields are in another order: the parsed type, not the byte prefix',
  );
  t.equal(
    isLeadRecord(undefined, Buffer.from(JSON.stringify(click(2, { page_title: '{"v":1,"type":"lead"' })))),
    false,
    'legacy click with "lead" (even the old prefix) in a text field',
  );
  t.equal(
    isLeadRecord({}, Buffer.from(JSON.stringify(click(3, { page_url: 'https://x.example/lead?type=lead' })))),
    false,
    'legacy click, other headers only',
  );
  t.equal(isLeadRecord(undefined, Buffer.from('{"v":1,"type":"lead"')), false, 'not JSON: no lead');
  t.equal(isLeadRecord(undefined, Buffer.from('["lead"]')), false, 'not an object: no lead');
  t.equal(isLeadRecord(undefined, null), false, 'no value: no lead');
});

/** The click steps on runSteps with fakes: what persist and the lead handler saw, in order. */
function harness(opts: { enrichThrows?: (c: ClickMessage) => boolean } = {}) {
  const events: string[] = [];
  const persisted: EnrichedClick[] = [];
  const leads: ConsumedMessage[] = [];
  const deadLetters: Message[] = [];
  const steps = createClickSteps({
    leads: {
      async handle(messages) {
        events.push(`leads ${messages.length}`);
        leads.push(...messages);
      },
    },
    enrich: (c) => {
      if (opts.enrichThrows?.(c)) throw new Error('bad value for geo');
      return { ...c, device_type: 'desktop' } as EnrichedClick;
    },
    persist: async (clicks) => {
      events.push(`persist ${clicks.length}`);
      persisted.push(...clicks);
      return { inserted: clicks.length, duplicates: 0, counted: clicks.length, filtered: 0 };
    },
  });
  const producer = {
    send: async (_topic: string, m: Message) => void deadLetters.push(m),
  } as unknown as BatchingProducer;
  const sql = Object.assign(async () => [], { json: (v: unknown) => v }) as unknown as Sql;
  const runner = runSteps(steps, { sql, log, producer, deadLetterTopic: 'dead-letter' });
  return { runner, events, persisted, leads, deadLetters };
}

t.test('a chunk: clicks persisted, then its leads (by header, or legacy JSON type) in order', async (t) => {
  const h = harness();
  const chunk = [
    record(JSON.stringify(click(1)), typed('click')),
    record(leadJson('ingress'), typed('lead')),
    record(JSON.stringify(click(2, { page_title: 'lead' }))),
    record(leadJson('type-first')),
    record(JSON.stringify(click(3, { page_title: '{"v":1,"type":"lead"' })), typed('click')),
  ];
  await h.runner.handle(chunk);
  t.same(h.events, ['persist 3', 'leads 2'], 'one persist of the clicks, then the leads');
  t.same(
    h.persisted.map((c) => c.event_id),
    ['1001', '1002', '1003'],
    'the clicks, "lead" in a text field included',
  );
  t.same(
    h.leads.map((m) => m.offset),
    [chunk[1]!.offset, chunk[3]!.offset],
    'both leads, in order, the legacy one without its header too',
  );
  t.same(h.deadLetters, [], 'nothing dead-lettered');
  t.equal(h.persisted[0]!.device_type, 'desktop', 'enriched before persist');
});

t.test('a chunk of leads only: no click transaction is needed, the leads are applied', async (t) => {
  const h = harness();
  await h.runner.handle([record(leadJson('ingress'), typed('lead'))]);
  t.same(h.events, ['persist 0', 'leads 1']);
});

t.test('poison: unparseable and unenrichable clicks are dead-lettered with their step', async (t) => {
  const h = harness({ enrichThrows: (c) => c.event_id === '1002' });
  await h.runner.handle([
    record('not json', typed('click')),
    record(JSON.stringify(click(2))),
    record(JSON.stringify(click(3)), typed('click')),
  ]);
  t.same(
    h.persisted.map((c) => c.event_id),
    ['1003'],
  );
  t.same(
    h.deadLetters.map((m) => String(m.headers?.['dlq-step'])),
    ['parse', 'enrich'],
    'parse, then enrich',
  );
});

t.test('the status line keeps its fields: totals, per second, lag percentiles', async (t) => {
  const h = harness();
  t.equal(h.runner.status(), null, 'idle: no line');
  await h.runner.handle([
    record(JSON.stringify(click(1)), typed('click')),
    record(leadJson('ingress'), typed('lead')),
  ]);
  const first = h.runner.status()!;
  t.same(Object.keys(first), [
    'messages',
    'perSecond',
    'inserted',
    'duplicates',
    'deadLetters',
    'lagP50Ms',
    'lagP99Ms',
  ]);
  t.match(first, { messages: 2, inserted: 1, duplicates: 0, deadLetters: 0 });
  t.ok((first.lagP50Ms as number) >= 0, 'a lag measured');
  await h.runner.handle([record(JSON.stringify(click(2)), typed('click'))]);
  t.match(h.runner.status(), { messages: 3, inserted: 2 }, 'totals since the start, as before');
  t.equal(h.runner.status(), null, 'idle again');
});
