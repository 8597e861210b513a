// A sale sent right after its click's 200 may overtake the click pipeline, so the attribution worker waits,
// bounded, for the click's customer. That wait must hold no lock: a chunk sleeping on its customers' row
// locks stalls every other chunk needing them, and past the session timeout a rebalance starts a second,
// concurrent apply. Reproduced with the command handler on a chunk [sale by customer_key, sale by a click id
// not stored yet]: while it waits, another connection must be able to lock that customer (NOWAIT), and the
// handler must have no transaction open. The click's customer then lands and both sales are attributed.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import type { SaleCommand } from '../../shared/contracts/commands.ts';
import { createCommandHandler } from '../../shared/pipeline/command-handler.ts';
import type { BatchingProducer, ConsumedMessage } from '../../shared/pipeline/kafka.ts';
import { createLogger } from '../../shared/logger.ts';
import { createSql } from '../../shared/db/sql.ts';
import { Snowflake, formatClickId } from '../../shared/domain/ids.ts';
import { eventClickNumber } from '../../services/ingress/click-message.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { createLink, createProgram, stackEnv, testSql, waitFor } from '../helpers/stack.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';

const sql = testSql(t);
const run = randomBytes(4).toString('hex');
const APP = `svc-test-wait-${run}`;

function saleCmd(p: Partial<SaleCommand> & { program_id: number; transaction_id: string }): SaleCommand {
  return saleCommand({
    request_id: `${run}-${p.transaction_id}`,
    amount_cents: 10000,
    currency: 'USD',
    ...p,
  });
}

const message = (cmd: SaleCommand, offset: number): ConsumedMessage => ({
  topic: 'sales',
  partition: 0,
  offset: String(offset),
  key: Buffer.from(cmd.transaction_id),
  value: Buffer.from(JSON.stringify(cmd)),
  headers: undefined,
  timestamp: String(Date.now()),
});

t.test('waiting for a recent click holds no lock and no transaction', async (t) => {
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 30 })} where id = ${program.id}`;
  const link = await createLink(sql, program.id);
  const key = `${run}-known`;
  const [known] = await sql<{ id: string }[]>`
    insert into customers (program_id, partner_id, partner_program_id, link_id, customer_status, customer_key)
    values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, 'lead', ${key})
    returning id`;
  const clickId = formatClickId(link.partnerProgramId, new Snowflake(11).next().id);
  const cmds = [
    saleCmd({ program_id: program.id, transaction_id: `${run}-by-key`, customer_key: key }),
    saleCmd({ program_id: program.id, transaction_id: `${run}-by-click`, click_id: clickId }),
  ];

  const workerSql = createSql(stackEnv().DATABASE_URL, 4, APP);
  t.teardown(() => workerSql.end({ timeout: 5 }));
  const handler = createCommandHandler(
    {
      sql: workerSql,
      log: createLogger('sale-wait', 'silent'),
      producer: { send: async () => {} } as unknown as BatchingProducer,
      topics: { deadLetter: 'dlq', ledger: 'ledger' },
    },
    // Long enough that only the click's arrival ends the wait.
    createSaleApplier({ recentClickWaitMs: 120_000, kafkaPrefix: 'test.' }),
  );
  const handled = handler.handle(cmds.map(message));

  // The handler has looked for the click's customer and found none: it is waiting now.
  await waitFor('the handler to look for the click', async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where application_name = ${APP} and query like '%click_id = any%' and state like 'idle%'`;
    return r!.n > 0;
  });
  const [open] = await sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where application_name = ${APP} and state = 'idle in transaction'`;
  t.equal(open!.n, 0, 'no transaction is open while it waits');
  const probe = await sql
    .begin(async (tx) => {
      await tx`select id from customers where id = ${known!.id} for no key update nowait`;
      return 'locked';
    })
    .catch((err: { code?: string }) => `blocked (${err.code})`);
  t.equal(probe, 'locked', "another transaction can lock the key customer's row while the sale waits");

  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                           first_click_at, last_click_at)
    values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${clickId}, 'click', now(), now())`;
  await handled;
  const outcomes = await sql<{ status_code: number; body: { commission_id: number | null } }[]>`
    select status_code, body from command_outcomes
    where request_id = any(${cmds.map((c) => c.request_id)}) order by request_id`;
  t.same(
    outcomes.map((o) => [o.status_code, typeof o.body.commission_id]),
    [
      [200, 'number'],
      [200, 'number'],
    ],
    'both sales attributed, the click one once its customer landed',
  );
});

// A click sent with an event_id (every tracker-script and SDK click) has a click id derived from the
// event_id, with no time in it: a sale right after it must wait for it too (found by the SDK's tests: it got
// 400 "Customer not found"). It waits by the sale's own time, so a sale processed long after it arrived
// does not wait at all.
t.test('a sale waits for a recent click whose id was derived from an event_id', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  const clickId = formatClickId(link.partnerProgramId, eventClickNumber(program.id, randomUUID()));
  const fresh = saleCmd({ program_id: program.id, transaction_id: `${run}-derived`, click_id: clickId });
  const stale = saleCmd({
    program_id: program.id,
    transaction_id: `${run}-derived-late`,
    click_id: formatClickId(link.partnerProgramId, eventClickNumber(program.id, randomUUID())),
    ts: Date.now() - 200_000,
  });
  const workerSql = createSql(stackEnv().DATABASE_URL, 4, `${APP}-derived`);
  t.teardown(() => workerSql.end({ timeout: 5 }));
  const handler = createCommandHandler(
    {
      sql: workerSql,
      log: createLogger('sale-wait', 'silent'),
      producer: { send: async () => {} } as unknown as BatchingProducer,
      topics: { deadLetter: 'dlq', ledger: 'ledger' },
    },
    createSaleApplier({ recentClickWaitMs: 120_000, kafkaPrefix: 'test.' }),
  );
  // The late sale's click never comes: it is answered at once, without waiting for anything.
  await handler.handle([message(stale, 0)]);
  const [late] = await sql<{ status_code: number }[]>`
    select status_code from command_outcomes where request_id = ${stale.request_id}`;
  t.equal(
    late!.status_code,
    400,
    'a sale that arrived long ago does not wait for an unknown derived click id',
  );

  const handled = handler.handle([message(fresh, 1)]);
  await waitFor('the handler to look for the click', async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where application_name = ${`${APP}-derived`} and query like '%click_id = any%' and state like 'idle%'`;
    return r!.n > 0;
  });
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                           first_click_at, last_click_at)
    values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${clickId}, 'click', now(), now())`;
  await handled;
  const [outcome] = await sql<{ status_code: number; body: { commission_id: number | null } }[]>`
    select status_code, body from command_outcomes where request_id = ${fresh.request_id}`;
  t.equal(outcome!.status_code, 200);
  t.equal(typeof outcome!.body.commission_id, 'number', 'attributed once the click landed');
});
