// Bonuses (CONTRACT part four "Bonuses"; docs/rewards.md) on the real stack: the API and its 400s; a partner
// reaching the threshold gets one commission of the bonus's amount (sale_id null, bonus_id, rule bonus,
// pending with its hold, in `commission.created`), whatever number of sales follow, concurrent sales reaching
// it at once included; sales redelivered to the command handler (the real sale applier) make no second one;
// a partner of another group, or a sale outside the window, counts nothing; a refund below the threshold
// takes nothing back; a bonus created after the sales pays at once; calendar_month pays once per month.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';
import { commissionsOf, createGroup, customerOf, trackSale } from '../helpers/rewards.ts';
import { postJson } from '../helpers/stack.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { createCommandHandler } from '../../shared/pipeline/command-handler.ts';
import type { BatchingProducer, ConsumedMessage } from '../../shared/pipeline/kafka.ts';
import type { LedgerEffect, SaleCommand } from '../../shared/contracts/commands.ts';
import { createLogger } from '../../shared/logger.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'attribution-worker', 'reversal-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(5).toString('hex');
const owner = await signup(svc);
const own = bearer(owner.session);
await sql`insert into webhook_endpoints (workspace_id, url, secret)
          values (${owner.workspaceId}, 'https://hooks.example/bonuses', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;
const DAY = 86_400_000;
const inAWeek = () => new Date(Date.now() + 7 * DAY).toISOString();

async function newBonus(programId: number, body: Record<string, unknown>) {
  const r = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${programId}/bonuses`),
    {
      name: `Bonus ${uniq()}`,
      metric: 'sales_cents',
      threshold: 30_000,
      amount_cents: 5000,
      period: 'once',
      ends_at: inAWeek(),
      ...body,
    },
    own,
  );
  if (r.status !== 201) throw new Error(`bonus: ${r.status} ${r.text}`);
  return r.body.data as { id: number; awarded: number };
}
const bonusCommissions = async (programId: number, bonusId: number) =>
  [...(await commissionsOf(svc, owner, programId)).values()].filter((c) => c.bonus_id === bonusId);

t.test('bad input names the field and creates nothing', async (t) => {
  const program = await apiProgram(svc, owner);
  const other = await apiProgram(svc, owner);
  const theirs = await createGroup(svc, owner, other.id, { name: 'Theirs' });
  const path = url(`/api/advertiser/affiliate-programs/${program.id}/bonuses`);
  const good = {
    name: 'B',
    metric: 'customers',
    threshold: 3,
    amount_cents: 1000,
    period: 'once',
    ends_at: inAWeek(),
  };
  const now = Date.now();
  const cases: [Record<string, unknown>, string][] = [
    [{ ...good, ends_at: new Date(now - DAY).toISOString() }, 'ends_at must be in the future'],
    [{ ...good, starts_at: new Date(now + 9 * DAY).toISOString() }, 'ends_at must be after starts_at'],
    [{ ...good, ends_at: 'soon' }, 'ends_at is required and must be a date-time (ISO 8601)'],
    [{ ...good, ends_at: undefined }, 'ends_at is required and must be a date-time (ISO 8601)'],
    [{ ...good, threshold: 0 }, 'threshold must be a positive integer'],
    [{ ...good, amount_cents: 0 }, 'amount_cents must be an integer from 1 to 1000000000000'],
    [{ ...good, metric: 'clicks' }, 'metric must be one of sales_cents, customers, conversions'],
    [{ ...good, period: 'weekly' }, 'period must be one of once, calendar_month'],
    [{ ...good, group_ids: [theirs.id] }, 'group_ids[0] must be the id of a group of this program'],
    [{ ...good, group_ids: 'all' }, 'group_ids must be null (every group) or an array of group ids'],
  ];
  for (const [body, error] of cases) {
    const r = await send('POST', path, body, own);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body));
  }
  t.same((await getJson(path, own)).body.data, [], 'nothing made');
  t.equal((await send('DELETE', `${path}/999999999`, undefined, own)).status, 404);
});

t.test(
  'one commission per partner and period: sequential and concurrent sales, a refund after',
  async (t) => {
    const program = await apiProgram(svc, owner, {
      commission: { type: 'percentage', percent: 10 },
      hold_days: 0,
    });
    const bonus = await newBonus(program.id, {});
    const a = await addPartner(svc, owner, program.id);
    const txns: string[] = [];
    for (let i = 0; i < 5; i++) {
      const transaction_id = `b-${uniq()}`;
      txns.push(transaction_id);
      const r = await trackSale(svc, program.token, {
        customer_key: await customerOf(sql, program.id, a),
        transaction_id,
      });
      t.equal(r.status, 200);
      t.equal((await bonusCommissions(program.id, bonus.id)).length, i >= 2 ? 1 : 0, `after sale ${i + 1}`);
    }
    const [c] = await bonusCommissions(program.id, bonus.id);
    t.match(c, {
      amount_cents: 5000,
      sale_id: null,
      partner_id: a.partnerId,
      status: 'pending',
      rule: { source: 'bonus', type: 'flat', percent: null, amount_cents: 5000 },
    });
    const events = await sql<{ payload: { data: Record<string, unknown> } }[]>`
    select payload from outbox where topic = ${outboxTopic(svc.prefix, 'webhookEvents')}
      and payload ->> 'type' = 'commission.created' and (payload -> 'data' ->> 'id')::bigint = ${c!.id}`;
    t.match(
      events.map((e) => e.payload.data),
      [{ bonus_id: bonus.id, sale_id: null, amount_cents: 5000 }],
      'commission.created carries bonus_id',
    );
    // Refunds take the figure below the threshold; the bonus stays.
    for (const transaction_id of txns)
      await postJson(url('/api/v1/track/refund'), { transaction_id }, bearer(program.token));
    await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, a) });
    t.equal((await bonusCommissions(program.id, bonus.id)).length, 1, 'kept, and not made again');
    const [progress] = await sql<{ value: string }[]>`
    select value::text from bonus_progress where bonus_id = ${bonus.id} and partner_program_id = ${a.ppId}`;
    t.equal(Number(progress!.value), 10_000, 'the refunds took their sales back');

    // Ten concurrent sales of another partner reach it together: one commission.
    const b = await addPartner(svc, owner, program.id);
    const keys = await Promise.all(Array.from({ length: 10 }, () => customerOf(sql, program.id, b)));
    const answers = await Promise.all(keys.map((k) => trackSale(svc, program.token, { customer_key: k })));
    t.same(
      answers.map((x) => x.status),
      Array(10).fill(200),
    );
    t.equal(
      (await bonusCommissions(program.id, bonus.id)).filter((x) => x.partner_id === b.partnerId).length,
      1,
    );
    const listed = (await getJson(url(`/api/advertiser/affiliate-programs/${program.id}/bonuses`), own)).body
      .data;
    t.match(listed, [{ id: bonus.id, awarded: 2 }]);
  },
);

t.test('redelivered sales make no second bonus commission', async (t) => {
  const program = await apiProgram(svc, owner, { commission: { type: 'percentage', percent: 10 } });
  const bonus = await newBonus(program.id, { threshold: 20_000 });
  const partner = await addPartner(svc, owner, program.id);
  const sent: string[] = [];
  const producer = {
    send: async (_topic: string, m: { value: string }) =>
      void sent.push((JSON.parse(m.value) as LedgerEffect).entry_key),
  } as unknown as BatchingProducer;
  const handler = createCommandHandler(
    {
      sql,
      log: createLogger('bonus-redelivery', 'silent'),
      producer,
      topics: { deadLetter: 'dlq', ledger: 'ledger' },
    },
    createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: svc.prefix }),
  );
  let offset = 0;
  const message = (cmd: SaleCommand): ConsumedMessage => ({
    topic: 'sales',
    partition: 0,
    offset: String(offset++),
    key: null,
    value: Buffer.from(JSON.stringify(cmd)),
    headers: undefined,
    timestamp: String(Date.now()),
  });
  const cmds = await Promise.all(
    Array.from({ length: 3 }, async () => {
      const txn = `redelivered-${uniq()}`;
      return saleCommand({
        program_id: program.id,
        request_id: txn,
        transaction_id: txn,
        customer_key: await customerOf(sql, program.id, partner),
        amount_cents: 10_000,
        currency: 'USD',
        ts: Date.now(),
      });
    }),
  );
  await handler.handle(cmds.map(message));
  const first = await bonusCommissions(program.id, bonus.id);
  t.equal(first.length, 1, 'reached once');
  const credit = `commission:${first[0]!.id}:created`;
  t.ok(sent.includes(credit), 'its credit published');
  sent.length = 0;
  // Delivered again (a replay after a crash), and copies in one chunk.
  await handler.handle([...cmds, ...cmds].map(message));
  t.equal((await bonusCommissions(program.id, bonus.id)).length, 1, 'still one');
  t.ok(
    sent.includes(credit),
    'its credit published again with the recorded answer (applied once by the ledger)',
  );
});

t.test('groups and windows; a bonus created after the sales pays at once; one per month', async (t) => {
  const program = await apiProgram(svc, owner, { commission: { type: 'percentage', percent: 10 } });
  const vip = await createGroup(svc, owner, program.id, { name: 'VIP' });
  const inVip = await addPartner(svc, owner, program.id);
  await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/partners/${inVip.partnerId}/group`),
    { group_id: vip.id },
    own,
  );
  const outside = await addPartner(svc, owner, program.id);
  for (const p of [inVip, outside])
    for (let i = 0; i < 2; i++)
      await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, p) });
  // Created after the sales, starting before them: the VIP partner is past the threshold already.
  const late = await newBonus(program.id, {
    group_ids: [vip.id],
    threshold: 20_000,
    starts_at: new Date(Date.now() - DAY).toISOString(),
  });
  t.equal(late.awarded, 1, 'paid at creation');
  t.same(
    (await bonusCommissions(program.id, late.id)).map((c) => c.partner_id),
    [inVip.partnerId],
    'only the group’s partner',
  );
  // Starting tomorrow: today's sales count nothing.
  const future = await newBonus(program.id, {
    threshold: 1,
    starts_at: new Date(Date.now() + DAY).toISOString(),
  });
  await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, outside) });
  t.equal((await bonusCommissions(program.id, future.id)).length, 0, 'outside its window');
  // calendar_month: once this month, however many customers more.
  const monthly = await newBonus(program.id, { metric: 'customers', threshold: 1, period: 'calendar_month' });
  for (let i = 0; i < 3; i++)
    await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, outside) });
  const paid = await bonusCommissions(program.id, monthly.id);
  t.equal(paid.filter((c) => c.partner_id === outside.partnerId).length, 1, 'one this month');
  t.equal(
    (
      await send(
        'DELETE',
        url(`/api/advertiser/affiliate-programs/${program.id}/bonuses/${monthly.id}`),
        undefined,
        own,
      )
    ).status,
    204,
  );
  t.equal(
    (await bonusCommissions(program.id, monthly.id)).length,
    paid.length,
    'deleting keeps what it paid',
  );
});

t.test('the portal shows a partner its running bonuses and its progress', async (t) => {
  const program = await apiProgram(svc, owner, { commission: { type: 'percentage', percent: 10 } });
  const bonus = await newBonus(program.id, { metric: 'customers', threshold: 5, name: 'Five customers' });
  const partner = await invitedPartner(svc, owner, program.id);
  await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, partner) });
  const r = await getJson(url('/api/partner/programs'), bearer(partner.session));
  const row = (r.body.data as { program: { id: number }; bonuses: unknown[] }[]).find(
    (p) => p.program.id === program.id,
  );
  t.match(row?.bonuses, [
    { id: bonus.id, name: 'Five customers', metric: 'customers', threshold: 5, value: 1, awarded: false },
  ]);
});

t.test('a bonus commission is paid like any other', async (t) => {
  const program = await apiProgram(svc, owner, {
    commission: { type: 'flat', amount_cents: 100 },
    hold_days: 0,
  });
  const bonus = await newBonus(program.id, { threshold: 10_000, amount_cents: 2500 });
  const partner = await addPartner(svc, owner, program.id);
  await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, partner) });
  const [c] = await bonusCommissions(program.id, bonus.id);
  const r = await send('POST', url(`/api/advertiser/commissions/${c!.id}/mark-paid`), {}, own);
  t.equal(r.status, 200, r.text);
  t.match(r.body.data, { id: c!.id, status: 'paid', sale_id: null, bonus_id: bonus.id });
  const [entry] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_entries where commission_id = ${c!.id} and kind = 'commission_paid'`;
  t.equal(entry!.n, 1, 'its payment in the ledger');
});
