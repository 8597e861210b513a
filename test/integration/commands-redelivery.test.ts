// Redelivered commands (an outcome already recorded: a replay after a crash or a lost membership, Stripe
// sending an event again; or two copies in one chunk) are answered on the optimistic pass: the recorded
// answer announced again and its effects published again, the copies not applied. Before, one such command
// rolled the whole chunk back and applied it again carefully, a savepoint per command: CI saw a processor
// backlog crawl at ~100 events/s that way. Asserted through a recording applier on the real database.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { LeadCommand, LedgerEffect } from '../../shared/contracts/commands.ts';
import type { Applied, CommandApplier } from '../../shared/pipeline/command-handler.ts';
import { createCommandHandler } from '../../shared/pipeline/command-handler.ts';
import type { BatchingProducer, ConsumedMessage } from '../../shared/pipeline/kafka.ts';
import { OUTCOME_CHANNEL } from '../../shared/pipeline/outcomes.ts';
import { createLogger } from '../../shared/logger.ts';
import { createProgram, testSql, waitFor } from '../helpers/stack.ts';

const sql = testSql(t);
const run = randomBytes(4).toString('hex');

function command(programId: number, name: string): LeadCommand {
  return {
    v: 1,
    type: 'lead',
    request_id: `redelivery:${run}:${name}`,
    ts: Date.now(),
    token_program_id: programId,
    program_id_hint: null,
    click_id: `click-${name}`,
    customer_key: null,
    email: null,
    event_name: null,
    session_id: null,
    page_url: null,
    is_test: false,
  };
}

// A command's effect: a ledger entry (what commands publish after their commit), named after the command.
const effectOf = (cmd: LeadCommand): LedgerEffect => ({
  topic: 'ledger',
  entry_key: `effect-of-${cmd.request_id}`,
  kind: 'commission_created',
  partner_id: 1,
  partner_program_id: 1,
  commission_id: 1,
  amount_cents: 0,
  clamp_at_zero: true,
});

let offset = 0;
const message = (cmd: LeadCommand): ConsumedMessage => ({
  topic: 'leads',
  partition: 0,
  offset: String(offset++),
  key: null,
  value: Buffer.from(JSON.stringify(cmd)),
  headers: undefined,
  timestamp: String(Date.now()),
});

t.test('recorded commands and copies in the chunk are answered, not applied again', async (t) => {
  const program = await createProgram(sql);
  const calls: { request: string; careful: boolean }[] = [];
  const applier: CommandApplier<LeadCommand> = {
    kind: 'lead',
    parse: (bytes) => JSON.parse(bytes!.toString()) as LeadCommand,
    apply: async (_tx, cmd, ctx): Promise<Applied> => {
      calls.push({ request: cmd.request_id.split(':').pop()!, careful: ctx.careful });
      return {
        programId: program.id,
        statusCode: 200,
        body: { success: true, applied: cmd.click_id },
        effects: [effectOf(cmd)],
      };
    },
  };
  const sent: string[] = [];
  const producer = {
    send: async (_topic: string, m: { value: string }) =>
      void sent.push((JSON.parse(m.value) as LedgerEffect).entry_key.split(':').pop()!),
  } as unknown as BatchingProducer;
  const handler = createCommandHandler(
    {
      sql,
      log: createLogger('redelivery', 'silent'),
      producer,
      topics: { deadLetter: 'dlq', ledger: 'ledger' },
    },
    applier,
  );
  const announced: string[] = [];
  const sub = await sql.listen(OUTCOME_CHANNEL, (payload) => {
    const r = (JSON.parse(payload) as { r: string }).r;
    if (r.startsWith(`redelivery:${run}:`)) announced.push(r.split(':').pop()!);
  });
  t.teardown(() => sub.unlisten());

  const [a, b, c] = ['a', 'b', 'c'].map((n) => command(program.id, n)) as [
    LeadCommand,
    LeadCommand,
    LeadCommand,
  ];
  await handler.handle([message(a)]);
  t.same(calls, [{ request: 'a', careful: false }], 'the first delivery applied');
  await waitFor('its outcome announced', async () => announced.includes('a'), 30_000);

  calls.length = 0;
  sent.length = 0;
  announced.length = 0;
  await handler.handle([message(a), message(b), message(b), message(c)]);
  t.same(
    calls,
    [
      { request: 'b', careful: false },
      { request: 'c', careful: false },
    ],
    'only the new commands applied, once each, on the optimistic pass',
  );
  t.equal(handler.stats.replayed, 2, 'the recorded one and the copy counted as replays');
  t.same(sent.sort(), ['a', 'b', 'c'], "each command's effects published once (a's again, as a replay)");
  await waitFor(
    'the outcomes announced',
    async () => ['a', 'b', 'c'].every((r) => announced.includes(r)),
    30_000,
  );
  const rows = await sql<{ request_id: string; body: { applied: string } }[]>`
    select request_id, body from command_outcomes where request_id like ${`redelivery:${run}:%`} order by request_id`;
  t.same(
    rows.map((r) => r.body.applied),
    ['click-a', 'click-b', 'click-c'],
    'one outcome per command',
  );
});
