// A lead that sets a customer_key which a concurrent lead (on another partition) takes between the lead's
// check and its write hits the (program_id, customer_key) unique index. That race is the caller's 400, never
// a dead letter or a 500. Reproduced deterministically: a second connection holds the conflicting insert
// uncommitted, so the applier's check misses it and its write waits on the index; the insert then commits.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { LeadCommand } from '../../shared/contracts/commands.ts';
import type { ApplyContext } from '../../shared/pipeline/command-handler.ts';
import { createCommandHandler } from '../../shared/pipeline/command-handler.ts';
import type { BatchingProducer, ConsumedMessage } from '../../shared/pipeline/kafka.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { createLogger } from '../../shared/logger.ts';
import { createLeadApplier } from '../../services/workers/clicks/steps/apply-lead.ts';
import { createLink, createProgram, testSql, waitFor } from '../helpers/stack.ts';

const sql = testSql(t);
const other = testSql(t);
const TAKEN = 'customer_key already belongs to another customer of this program';

async function clickCustomer(programId: number): Promise<string> {
  const link = await createLink(sql, programId);
  const clickId = `cust_${Date.now()}_${randomBytes(4).readUInt32BE()}`;
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status, last_click_at)
    values (${programId}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${clickId}, 'click', now())`;
  return clickId;
}

function lead(programId: number, clickId: string, customerKey: string): LeadCommand {
  return {
    v: 1,
    type: 'lead',
    request_id: `lead:${programId}:${randomBytes(8).toString('hex')}`,
    ts: Date.now(),
    token_program_id: programId,
    program_id_hint: null,
    click_id: clickId,
    customer_key: customerKey,
    email: null,
    event_name: null,
    session_id: null,
    page_url: null,
    is_test: false,
  };
}

/**
 * Runs `apply` while a second connection holds an uncommitted customer with `key`; commits that insert
 * once `apply`'s statement waits on it (so the check before the write could not see it).
 */
async function race<T>(programId: number, key: string, apply: () => Promise<T>): Promise<T> {
  let commit!: () => void;
  const committed = new Promise<void>((r) => (commit = r));
  let inserted!: (pid: number) => void;
  const holding = new Promise<number>((r) => (inserted = r));
  const rival = other.begin(async (tx) => {
    await tx`insert into customers (program_id, customer_status, customer_key) values (${programId}, 'lead', ${key})`;
    const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    inserted(me!.pid);
    await committed;
  });
  const rivalPid = await holding;
  const result = apply();
  // The applier's write waits for the rival's transaction: commit it then, not earlier. Only a backend
  // blocked by the rival's own backend counts (every test connection, of every file, is 'svc-test').
  await waitFor('the lead write to wait on the rival insert', async () => {
    const [w] = await other`
      select count(*)::int as n from pg_stat_activity
      where pg_blocking_pids(pid) @> array[${rivalPid}]::int[] and query like '%update customers%'`;
    return w!.n > 0;
  });
  commit();
  await rival;
  return result;
}

t.test('the applier answers the racing customer_key 400 on the careful pass', async (t) => {
  const program = await createProgram(sql);
  const clickId = await clickCustomer(program.id);
  const key = `k-${randomBytes(4).toString('hex')}`;
  const ctx: ApplyContext = { rollups: new RollupBuffer(), careful: true, memo: new Map() };
  const applier = createLeadApplier({ kafkaPrefix: 'test.' });
  const answer = await race(program.id, key, () =>
    sql.begin((tx) => tx.savepoint((sp) => applier.apply(sp, lead(program.id, clickId, key), ctx))),
  );
  t.same(answer, { programId: program.id, statusCode: 400, body: { error: TAKEN } });
  const [c] = await sql`select customer_status, customer_key from customers where click_id = ${clickId}`;
  t.same(c, { customer_status: 'click', customer_key: null }, 'the customer is unchanged');
});

t.test('the command handler records the 400 and dead-letters nothing', async (t) => {
  const program = await createProgram(sql);
  const clickId = await clickCustomer(program.id);
  const key = `k-${randomBytes(4).toString('hex')}`;
  const sent: string[] = [];
  const producer = {
    send: async (topic: string) => void sent.push(topic),
  } as unknown as BatchingProducer;
  const handler = createCommandHandler(
    {
      sql,
      log: createLogger('lead-race', 'silent'),
      producer,
      topics: { deadLetter: 'dlq', ledger: 'ledger' },
    },
    createLeadApplier({ kafkaPrefix: 'test.' }),
  );
  const cmd = lead(program.id, clickId, key);
  const message: ConsumedMessage = {
    topic: 'clicks',
    partition: 0,
    offset: '0',
    key: Buffer.from(clickId),
    value: Buffer.from(JSON.stringify(cmd)),
    headers: undefined,
    timestamp: String(Date.now()),
  };
  await race(program.id, key, () => handler.handle([message]));
  const [o] = await sql`select status_code, body from command_outcomes where request_id = ${cmd.request_id}`;
  t.same(o, { status_code: 400, body: { error: TAKEN } });
  t.same(sent, [], 'no dead letter');
  t.equal(handler.stats.deadLetters, 0);
});
