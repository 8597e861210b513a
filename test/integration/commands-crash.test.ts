// kill -9 of each worker during a mixed load of sales and refunds. Afterwards nothing is lost, nothing
// doubled, and every 200 answer matches the database: sales and commissions as answered, one reversal per
// refunded commission, one ledger entry per movement, balances equal to their ledger sums, rollups equal to
// the rows they count. Requests that met the deadline (503) are retried with their Idempotency-Key until
// answered, as a client would.
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import type { ServiceName } from '../../scripts/lib/services.ts';

const sql = testSql(t);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('kill -9 of every worker during sales and refunds loses and doubles nothing', async (t) => {
  const workers: ServiceName[] = [
    'attribution-worker',
    'reversal-worker',
    'ledger-worker',
    'notification-worker',
    'click-worker',
  ];
  const svc = await startServices(t, ['web', ...workers], { COMMAND_DEADLINE_MS: '3000' });
  const program = await createProgram(sql);
  await sql`update programs set commission = ${sql.json({ type: 'percentage', percent: 25 })} where id = ${program.id}`;
  const links = await Promise.all([0, 1, 2].map(() => createLink(sql, program.id)));
  const auth = { authorization: `Bearer ${program.token}` };

  const clickIds: string[] = [];
  for (let i = 0; i < 60; i++) {
    const r = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
      affiliate_url: `https://x.example/?aff=${links[i % 3]!.shortLink}`,
    });
    clickIds.push(r.body.click_id as string);
  }
  // This test is about workers dying under sales and refunds, not about click latency: customers first.
  await waitFor(
    'the customers',
    async () => {
      const [n] = await sql`select count(*)::int as n from customers where click_id = any(${clickIds})`;
      return n!.n === clickIds.length;
    },
    60_000,
    200,
  );

  interface Answer {
    status: number;
    body: Record<string, unknown>;
  }
  const sales = new Map<string, Answer & { amount: number }>();
  const refunds: { txn: string; key: string; amount: number | null; answer: Answer }[] = [];
  let seq = 0;
  const send = async (path: string, body: Record<string, unknown>, key: string): Promise<Answer> => {
    for (;;) {
      try {
        const r = await postJson(`${svc.baseUrl}${path}`, body, { ...auth, 'idempotency-key': key });
        if (r.status !== 503) return r;
      } catch {
        // the ingress is not killed in this test; a network blip is retried like a 503
      }
      await sleep(500);
    }
  };

  // Bounded by count and time: run until every worker has been killed and restarted and at least 60 sales
  // were answered, and never past 120 s.
  let killsDone = false;
  const hardEnd = Date.now() + 120_000;
  const loop = async (n: number) => {
    while ((!killsDone || sales.size < 60) && Date.now() < hardEnd) {
      const id = `${n}-${++seq}`;
      const txn = `crash-${program.id}-${id}`;
      const amount = 1000 + (seq % 7) * 137;
      const s = await send(
        '/api/v1/track/sale',
        { transaction_id: txn, amount_cents: amount, click_id: clickIds[seq % clickIds.length] },
        `sale-${id}`,
      );
      sales.set(txn, { ...s, amount });
      if (seq % 3 === 0) {
        const partial = seq % 2 === 0 ? null : 400;
        const r = await send(
          '/api/v1/track/refund',
          { transaction_id: txn, refund_amount_cents: partial },
          `refund-${id}`,
        );
        refunds.push({ txn, key: `refund-${id}`, amount: partial, answer: r });
        if (seq % 5 === 0) {
          // A second refund of the same sale: must be skipped.
          const r2 = await send('/api/v1/track/refund', { transaction_id: txn }, `refund2-${id}`);
          refunds.push({ txn, key: `refund2-${id}`, amount: null, answer: r2 });
        }
      }
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, (_, i) => loop(i)));
  for (const w of workers) {
    await sleep(1800);
    await svc.kill(w);
    await sleep(300);
    await svc.start(w);
  }
  killsDone = true;
  await load;

  t.ok(sales.size >= 60, `a load spanning every kill (${sales.size} sales, ${refunds.length} refunds)`);
  const okSales = [...sales.entries()].filter(([, a]) => a.status === 200);
  const notOk = [...sales.values()]
    .filter((a) => a.status !== 200)
    .map((a) => `${a.status} ${JSON.stringify(a.body)}`);
  t.same(notOk, [], 'every sale answered 200 (no duplicates were sent)');

  const rows = await sql<
    {
      transaction_id: string;
      id: string;
      amount_cents: string;
      commission_id: string | null;
      c_amount: string | null;
      status: string | null;
      deducted: string | null;
    }[]
  >`
    select s.transaction_id, s.id, s.amount_cents, c.id as commission_id, c.amount_cents as c_amount, c.status,
           c.deducted_cents as deducted
    from sales s left join commissions c on c.sale_id = s.id where s.program_id = ${program.id}`;
  t.equal(rows.length, sales.size, 'exactly the answered sales exist');
  const byTxn = new Map(rows.map((r) => [r.transaction_id, r]));
  let mismatches = 0;
  for (const [txn, a] of okSales) {
    const r = byTxn.get(txn);
    if (!r || Number(r.id) !== a.body.sale_id || Number(r.commission_id) !== a.body.commission_id)
      mismatches++;
    if (r && Number(r.c_amount) !== Math.floor((a.amount * 25) / 100 + 0.5)) mismatches++;
  }
  t.equal(mismatches, 0, 'every 200 matches its sale and commission rows');

  const applied = refunds.filter(
    (r) => r.answer.body.status === 'reversed' || r.answer.body.status === 'refunded',
  );
  const refundedTxns = new Set(refunds.map((r) => r.txn));
  t.equal(applied.length, refundedTxns.size, 'one applied refund per refunded sale');
  t.ok(refunds.filter((r) => r.answer.body.status === 'skipped').length > 0, 'second refunds were skipped');
  let refundMismatch = 0;
  for (const r of applied) {
    const row = byTxn.get(r.txn)!;
    if (row.status !== r.answer.body.status) refundMismatch++;
    if (Number(row.deducted) / 100 !== r.answer.body.deductionAmount) refundMismatch++;
  }
  t.equal(refundMismatch, 0, 'every refund answer matches its commission row');

  const commissionIds = rows.filter((r) => r.commission_id).map((r) => r.commission_id!);
  const ledger = await waitFor(
    'the ledger to catch up',
    async () => {
      const [l] = await sql<{ created: number; refunds: number }[]>`
      select count(*) filter (where kind = 'commission_created')::int as created,
             count(*) filter (where kind in ('commission_reversed', 'commission_refunded'))::int as refunds
      from ledger_entries where commission_id = any(${commissionIds}::bigint[])`;
      return l!.created === commissionIds.length && l!.refunds === applied.length ? l : null;
    },
    60_000,
    250,
  );
  t.same(ledger, { created: commissionIds.length, refunds: applied.length }, 'one ledger entry per movement');
  for (const l of links) {
    const [b] = await sql`
      select pp.balance_cents::int as balance, coalesce(sum(e.program_cents), 0)::int as sum
      from partner_programs pp left join ledger_entries e on e.partner_program_id = pp.id
      where pp.id = ${l.partnerProgramId} group by pp.id`;
    t.equal(b!.balance, b!.sum, 'partner-program balance equals its ledger sum');
    const [p] = await sql`
      select p.balance_cents::int as balance, coalesce(sum(e.partner_cents), 0)::int as sum
      from partners p left join ledger_entries e on e.partner_id = p.id where p.id = ${l.partnerId} group by p.id`;
    t.equal(p!.balance, p!.sum, 'partner balance equals its ledger sum');
  }
  const notes = await waitFor(
    'notifications',
    async () => {
      const [n] = await sql`select count(*)::int as n from notifications where program_id = ${program.id}`;
      return n!.n === applied.length ? n : null;
    },
    60_000,
    250,
  );
  t.equal(notes.n, applied.length, 'one partner notification per applied refund');

  const [daily] = await sql`
    select sum(sales)::int as sales, sum(revenue_cents)::int as revenue, sum(commission_cents)::int as commission
    from program_daily_stats where program_id = ${program.id}`;
  const [truth] = await sql`
    select count(*)::int as sales, sum(s.amount_cents)::int as revenue, coalesce(sum(c.amount_cents), 0)::int as commission
    from sales s left join commissions c on c.sale_id = s.id where s.program_id = ${program.id}`;
  t.same(daily, truth, 'the daily rollup equals the rows it counts');
});
