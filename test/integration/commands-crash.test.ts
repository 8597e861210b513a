// kill -9 of each worker during a mixed load of sales, refunds and leads. Afterwards nothing is lost,
// nothing doubled, and every 200 answer matches the database: sales and commissions as answered, one
// reversal per refunded commission, one ledger entry per movement, balances equal to their ledger sums,
// rollups equal to the rows they count, every answered lead on its customer. Requests that met the deadline
// (503) are retried with their Idempotency-Key until answered, as a client would.
// Each kill is timed by progress, not by the clock: a worker is killed once it has done KILL_AFTER of its
// kind of work (sales, refunds, leads answered; ledger entries, notifications stored) since the previous
// restart, so it is at work under the running load; and the next kill waits until the restarted worker
// has done some of its work again (a request sent after its restart answered, a row written after it).
import t from 'tap';
import { createLink, createProgram, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import type { ServiceName } from '../../scripts/lib/stack/services.ts';

const sql = testSql(t);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('kill -9 of every worker during sales, refunds and leads loses and doubles nothing', async (t) => {
  const workers: ServiceName[] = [
    'attribution-worker',
    'reversal-worker',
    'ledger-worker',
    'notification-worker',
    'click-worker',
  ];
  // The relay carries the refunds' notifications (outbox rows) to the notification worker.
  const svc = await startServices(t, ['web', 'outbox-relay', ...workers], { COMMAND_DEADLINE_MS: '3000' });
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
  const leads: { clickId: string; answer: Answer }[] = [];
  // The progress the kills are timed by: each 200 answer with the number of restarts before it was sent.
  let restarts = 0;
  const answered: { kind: 'sale' | 'refund' | 'lead'; sentAfter: number }[] = [];
  let seq = 0;
  let killsDone = false;
  // Set when the kills fail: the load stops instead of retrying against a worker that is not coming back.
  let aborted = false;
  const send = async (path: string, body: Record<string, unknown>, key: string): Promise<Answer> => {
    while (!aborted) {
      try {
        const r = await postJson(`${svc.baseUrl}${path}`, body, { ...auth, 'idempotency-key': key });
        if (r.status !== 503) return r;
      } catch {
        // the ingress is not killed in this test; a network blip is retried like a 503
      }
      await sleep(500);
    }
    return { status: 0, body: { error: 'aborted: the kills failed' } };
  };
  const record = (kind: 'sale' | 'refund' | 'lead', sentAfter: number, a: Answer) => {
    if (a.status === 200) answered.push({ kind, sentAfter });
  };

  // Bounded by count: run until every worker has been killed and restarted and at least 60 sales were
  // answered.
  const loop = async (n: number) => {
    while (!aborted && (!killsDone || sales.size < 60)) {
      const k = ++seq;
      const id = `${n}-${k}`;
      const txn = `crash-${program.id}-${id}`;
      const amount = 1000 + (k % 7) * 137;
      let sentAfter = restarts;
      const s = await send(
        '/api/v1/track/sale',
        { transaction_id: txn, amount_cents: amount, click_id: clickIds[k % clickIds.length] },
        `sale-${id}`,
      );
      record('sale', sentAfter, s);
      sales.set(txn, { ...s, amount });
      if (k % 3 === 0) {
        const partial = k % 2 === 0 ? null : 400;
        sentAfter = restarts;
        const r = await send(
          '/api/v1/track/refund',
          { transaction_id: txn, refund_amount_cents: partial },
          `refund-${id}`,
        );
        record('refund', sentAfter, r);
        refunds.push({ txn, key: `refund-${id}`, amount: partial, answer: r });
        if (k % 5 === 0) {
          // A second refund of the same sale: must be skipped.
          sentAfter = restarts;
          const r2 = await send('/api/v1/track/refund', { transaction_id: txn }, `refund2-${id}`);
          record('refund', sentAfter, r2);
          refunds.push({ txn, key: `refund2-${id}`, amount: null, answer: r2 });
        }
      }
    }
  };
  // Leads are the click worker's commands: a fresh click each, then its lead, until the kills are done.
  const leadLoop = async () => {
    for (let k = 1; !aborted && !killsDone; k++) {
      const c = await postJson(`${svc.baseUrl}/api/v1/track/click`, {
        affiliate_url: `https://x.example/?aff=${links[k % 3]!.shortLink}`,
      });
      if (c.status !== 200) {
        await sleep(500);
        continue;
      }
      const clickId = c.body.click_id as string;
      const sentAfter = restarts;
      const r = await send(
        '/api/v1/track/lead',
        { click_id: clickId, customer_key: `crash-lead-${program.id}-${k}` },
        `lead-${k}`,
      );
      record('lead', sentAfter, r);
      leads.push({ clickId, answer: r });
    }
  };
  const load = Promise.all([...Array.from({ length: 8 }, (_, i) => loop(i)), leadLoop()]);

  const KILL_AFTER = 3;
  const written = async () => {
    const [r] = await sql<{ ledger: number; notifications: number }[]>`
      select (select count(*)::int from ledger_entries e join commissions c on c.id = e.commission_id
              where c.program_id = ${program.id}) as ledger,
             (select count(*)::int from notifications where program_id = ${program.id}) as notifications`;
    return r!;
  };
  type Mark = { restarts: number; ledger: number; notifications: number };
  const mark = async (): Promise<Mark> => ({ restarts, ...(await written()) });
  const requestsSince = (kind: 'sale' | 'refund' | 'lead', m: Mark) =>
    answered.filter((a) => a.kind === kind && a.sentAfter >= m.restarts).length;
  /** Each worker's work since a mark: requests sent after it and answered 200, or rows written after it. */
  const progress: Record<string, { what: string; since: (m: Mark) => Promise<number> }> = {
    'attribution-worker': { what: 'sales answered', since: async (m) => requestsSince('sale', m) },
    'reversal-worker': { what: 'refunds answered', since: async (m) => requestsSince('refund', m) },
    'ledger-worker': {
      what: 'ledger entries written',
      since: async (m) => (await written()).ledger - m.ledger,
    },
    'notification-worker': {
      what: 'notifications stored',
      since: async (m) => (await written()).notifications - m.notifications,
    },
    'click-worker': { what: 'leads answered', since: async (m) => requestsSince('lead', m) },
  };

  let failed: unknown = null;
  try {
    let last = await mark();
    for (const w of workers) {
      const p = progress[w]!;
      await waitFor(
        `${KILL_AFTER} ${p.what} since the last restart, to kill ${w} at work`,
        async () => (await p.since(last)) >= KILL_AFTER,
        120_000,
        50,
      );
      await svc.kill(w);
      await svc.start(w);
      restarts++;
      last = await mark();
      const after = await waitFor(
        `${p.what} after ${w} restarted`,
        async () => {
          const n = await p.since(last);
          return n > 0 ? n : null;
        },
        120_000,
        100,
      ).catch(() => 0);
      t.ok(after > 0, `precondition: ${w} worked again after its restart (${after} ${p.what} since)`);
    }
  } catch (err) {
    failed = err;
    aborted = true;
  }
  killsDone = true;
  await load;
  if (failed) throw failed;

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
  const seconds = refunds.filter((r) => r.key.startsWith('refund2-'));
  t.ok(
    seconds.length > 0 && seconds.every((r) => r.answer.body.status === 'skipped'),
    `every second refund was skipped (${seconds.length} of them)`,
  );
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

  const leadsNotOk = leads
    .filter((l) => l.answer.status !== 200 || l.answer.body.success !== true)
    .map((l) => `${l.answer.status} ${JSON.stringify(l.answer.body)}`);
  t.same(leadsNotOk, [], `every lead answered 200 (${leads.length} leads)`);
  const [asLeads] = await sql`
    select count(*)::int as n from customers
    where click_id = any(${leads.map((l) => l.clickId)}) and customer_status = 'lead'`;
  t.equal(asLeads!.n, leads.length, 'every answered lead is on its customer');
});
