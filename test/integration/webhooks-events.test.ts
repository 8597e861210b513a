// Webhook events are written in the transaction of the change (ARCHITECTURE 14): through the real sale and
// refund appliers and the command handler, on the real database, with a fake producer. A redelivered command
// (its outcome recorded) and a second copy in the chunk make no second event; a chunk rolled back by a
// poison command and applied again carefully writes each kept command's events once and none for the
// poison one; a workspace without an enabled endpoint writes none at all.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { RefundCommand, SaleCommand } from '../../shared/contracts/commands.ts';
import { createCommandHandler } from '../../shared/pipeline/command-handler.ts';
import type { BatchingProducer, ConsumedMessage } from '../../shared/pipeline/kafka.ts';
import { createLogger } from '../../shared/logger.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { createRefundApplier } from '../../services/workers/reversal/apply-refund.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { createLink, createProgram, testSql } from '../helpers/stack.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';

const sql = testSql(t);
const prefix = `evt${randomBytes(4).toString('hex')}.`;
const run = randomBytes(4).toString('hex');
const topic = outboxTopic(prefix, 'webhookEvents');
t.teardown(() => sql`delete from outbox where topic = ${topic}`);

const producer = { send: async () => {} } as unknown as BatchingProducer;
const deps = {
  sql,
  log: createLogger('webhook-events', 'silent'),
  producer,
  topics: { deadLetter: 'dlq', ledger: 'ledger' },
};
const sales = createCommandHandler(deps, createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: prefix }));
const refunds = createCommandHandler(deps, createRefundApplier({ kafkaPrefix: prefix }));

let offset = 0;
const message = (cmd: object): ConsumedMessage => ({
  topic: 'sales',
  partition: 0,
  offset: String(offset++),
  key: null,
  value: Buffer.from(JSON.stringify(cmd)),
  headers: undefined,
  timestamp: String(Date.now()),
});
const sale = (
  programId: number,
  clickId: string | null,
  name: string,
  extra: Partial<SaleCommand> = {},
): SaleCommand =>
  saleCommand({
    request_id: `evsale:${run}:${name}`,
    program_id: programId,
    transaction_id: `ev-${run}-${name}`,
    amount_cents: 1000,
    click_id: clickId,
    ...extra,
  });

/** The events in this test's outbox, as (type, transaction or commission) pairs. */
async function events(): Promise<{ type: string; txn: string | null; is_test: boolean }[]> {
  const rows = await sql<
    { payload: { type: string; data: { transaction_id?: string; is_test: boolean; id: number } } }[]
  >`
    select payload from outbox where topic = ${topic} order by id`;
  return rows.map((r) => ({
    type: r.payload.type,
    txn: r.payload.data.transaction_id ?? `commission:${r.payload.data.id}`,
    is_test: r.payload.data.is_test,
  }));
}

async function customer(programId: number): Promise<string> {
  const link = await createLink(sql, programId);
  const clickId = `cust_${link.partnerProgramId}_${randomBytes(3).toString('hex')}`;
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status, first_click_at, last_click_at)
    values (${programId}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${clickId}, 'click', now(), now())`;
  return clickId;
}

const [ws] = await sql<{ id: string }[]>`insert into workspaces (name) values ('events') returning id`;
const program = await createProgram(sql, { workspaceId: Number(ws!.id) });
await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${program.id}`;
await sql`insert into webhook_endpoints (workspace_id, url, secret) values (${ws!.id}, 'https://hooks.example/e', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;

t.test('one event per change, whatever is redelivered', async (t) => {
  const a = sale(program.id, await customer(program.id), 'a');
  const b = sale(program.id, await customer(program.id), 'b');
  const test = sale(program.id, null, 'test', { is_test: true });
  await sales.handle([message(a), message(test)]);
  t.same(
    (await events()).map((e) => `${e.type} ${e.is_test}`),
    ['sale.created false', 'commission.created false', 'sale.created true'],
    "a sale's two events, and a test sale's one with is_test",
  );
  // Redelivered (a, test), a copy in the same chunk (b twice), and one new command.
  await sales.handle([message(a), message(test), message(b), message(b)]);
  const after = await events();
  t.equal(after.filter((e) => e.txn === a.transaction_id).length, 1, 'the redelivered sale: no second event');
  t.equal(after.filter((e) => e.txn === b.transaction_id).length, 1, 'the copy in the chunk: one event');
  t.equal(after.filter((e) => e.type === 'commission.created').length, 2);
  t.equal(sales.stats.replayed, 3);

  // A refund: sale.refunded and commission.updated, once, however often it comes.
  const refund: RefundCommand = {
    v: 1,
    type: 'refund',
    request_id: `evrefund:${run}:a`,
    ts: Date.now(),
    program_id: program.id,
    transaction_id: a.transaction_id,
    refund_amount_cents: 400,
    refund_reason: 'partial',
  };
  await refunds.handle([message(refund)]);
  await refunds.handle([message(refund), message(refund)]);
  const refundEvents = (await events()).filter(
    (e) => e.type === 'sale.refunded' || e.type === 'commission.updated',
  );
  t.same(
    refundEvents.map((e) => e.type),
    ['sale.refunded', 'commission.updated'],
    'the refund: once each',
  );
});

t.test(
  'a chunk rolled back and applied carefully writes each kept command once, none for the poison',
  async (t) => {
    const before = (await events()).length;
    const good1 = sale(program.id, await customer(program.id), 'good1');
    const poison = sale(program.id, await customer(program.id), 'poison', { product_id: 'bad\u0000byte' });
    const good2 = sale(program.id, await customer(program.id), 'good2');
    await sales.handle([message(good1), message(poison), message(good2)]);
    const added = (await events()).slice(before);
    t.same(
      added.map((e) => e.type),
      ['sale.created', 'commission.created', 'sale.created', 'commission.created'],
      'the two kept sales, each once',
    );
    t.notOk(
      added.some((e) => e.txn === poison.transaction_id),
      'nothing of the rolled-back command',
    );
    t.equal(sales.stats.deadLetters, 1, 'the poison dead-lettered');
  },
);

t.test('a workspace without an enabled endpoint writes no event', async (t) => {
  const quiet = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 10 })} where id = ${quiet.id}`;
  const before = (await events()).length;
  await sales.handle([message(sale(quiet.id, await customer(quiet.id), 'quiet'))]);
  t.equal((await events()).length, before, 'no endpoint: nothing written');
  const [qws] = await sql<
    { workspace_id: string }[]
  >`select workspace_id from programs where id = ${quiet.id}`;
  await sql`insert into webhook_endpoints (workspace_id, url, secret, status) values (${qws!.workspace_id}, 'https://hooks.example/q', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'disabled')`;
  await sales.handle([message(sale(quiet.id, await customer(quiet.id), 'quiet2'))]);
  t.equal((await events()).length, before, 'a disabled endpoint: nothing written either');
});
