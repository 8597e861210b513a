// Balances follow causality (ARCHITECTURE invariant 11): a commission's refund deduction is applied after its
// credit (and, for a paid commission, after the payment) whatever order they reach the ledger in. The credit
// is published after the sale's commit, so a crash in that gap lets the refund's deduction arrive first; it
// must wait for the credit instead of clamping against a balance that lacks it (which overpays the partner).
// The entries are applied directly through the ledger step, in every order.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { Test } from 'tap';
import type { LedgerEffect } from '../../shared/contracts/commands.ts';
import { createApplyLedgerStep } from '../../services/workers/ledger/apply.ts';
import { applyLedgerEntries } from '../../shared/ledger/dal.ts';
import { createSql } from '../../shared/db/sql.ts';
import { createLink, createProgram, stackEnv, testSql, waitFor } from '../helpers/stack.ts';
import { createCommissionsUncredited } from '../helpers/commissions.ts';

const sql = testSql(t);
const step = createApplyLedgerStep({ sql });
const run = randomBytes(4).toString('hex');
let seq = 0;

interface Fixture {
  partnerId: number;
  partnerProgramId: number;
}

/** A partner in a new program. */
async function partner(): Promise<Fixture> {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  return { partnerId: link.partnerId, partnerProgramId: link.partnerProgramId };
}

/** A commission of 3000 cents on a 10000-cent sale of the partner. */
async function commission(f: Fixture): Promise<number> {
  const txn = `causal-${run}-${++seq}`;
  const [pp] = await sql<{ program_id: string }[]>`
    select program_id from partner_programs where id = ${f.partnerProgramId}`;
  const [sale] = await sql<{ id: string }[]>`
    insert into sales (request_id, program_id, partner_id, partner_program_id, transaction_id, amount_cents,
                       currency, sale_type, is_test, sale_date)
    values (${`req-${txn}`}, ${pp!.program_id}, ${f.partnerId}, ${f.partnerProgramId}, ${txn}, 10000, 'USD',
            'payment', false, now())
    returning id`;
  // Created by the lifecycle as the attribution worker creates it; its credit is left unapplied (the tests
  // apply the entries below through the ledger step, in the orders they choose).
  const { ids } = await createCommissionsUncredited(sql, [
    {
      sale_id: Number(sale!.id),
      program_id: Number(pp!.program_id),
      partner_id: f.partnerId,
      partner_program_id: f.partnerProgramId,
      customer_id: null,
      amount_cents: 3000,
      currency: 'USD',
      sale_ts: Date.now(),
      hold_days: 30,
    },
  ]);
  return ids[0]!;
}

/** The entries the attribution worker, mark-paid and the reversal worker produce for one commission. */
function entries(f: Fixture, commissionId: number) {
  const base = { topic: 'ledger' as const, partner_id: f.partnerId, partner_program_id: f.partnerProgramId };
  const e = (step: string, kind: LedgerEffect['kind'], amount: number, clamp: boolean): LedgerEffect => ({
    ...base,
    entry_key: `commission:${commissionId}:${step}`,
    kind,
    commission_id: commissionId,
    amount_cents: amount,
    clamp_at_zero: clamp,
  });
  return {
    credit: e('created', 'commission_created', 3000, true),
    paid: e('paid', 'commission_paid', -3000, false),
    /** A partial refund of an unpaid commission: clamped at zero. */
    refund: e('refund', 'commission_refunded', -1000, true),
    /** The same refund after the commission was paid: in full. */
    refundPaid: e('refund', 'commission_refunded', -1000, false),
  };
}

async function balances(f: Fixture): Promise<{ partner: number; program: number }> {
  const [r] = await sql<{ partner: string; program: string }[]>`
    select p.balance_cents as partner, pp.balance_cents as program
    from partners p join partner_programs pp on pp.partner_id = p.id
    where p.id = ${f.partnerId} and pp.id = ${f.partnerProgramId}`;
  return { partner: Number(r!.partner), program: Number(r!.program) };
}

/** entry_key → [partner_cents, program_cents] of the commission's ledger entries. */
async function ledgerOf(commissionId: number): Promise<Record<string, [number, number]>> {
  const rows = await sql<{ entry_key: string; partner: string; program: string }[]>`
    select entry_key, partner_cents as partner, program_cents as program from ledger_entries
    where commission_id = ${commissionId} order by id`;
  return Object.fromEntries(rows.map((r) => [r.entry_key, [Number(r.partner), Number(r.program)]]));
}

async function assertBalancesEqualSums(t: Test, f: Fixture): Promise<void> {
  const [r] = await sql<{ ok: boolean }[]>`
    select (select balance_cents from partners where id = ${f.partnerId}) =
             (select coalesce(sum(partner_cents), 0) from ledger_entries where partner_id = ${f.partnerId})
       and (select balance_cents from partner_programs where id = ${f.partnerProgramId}) =
             (select coalesce(sum(program_cents), 0) from ledger_entries
              where partner_program_id = ${f.partnerProgramId}) as ok`;
  t.ok(r!.ok, 'balances equal the sums of their ledger entries');
}

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

t.test(
  'a refund deduction that overtakes its credit waits for it: the partner is not overpaid',
  async (t) => {
    const f = await partner();
    // The partner already holds 500 from another commission, so the clamp has something to take.
    const other = entries(f, await commission(f));
    await step([{ ...other.credit, amount_cents: 500 }]);
    const c = await commission(f);
    const { credit, refund } = entries(f, c);

    await step([refund]);
    t.same(await ledgerOf(c), {}, 'the deduction is not applied before its credit');
    t.same(await balances(f), { partner: 500, program: 500 }, 'nothing was taken from the other commission');
    await assertBalancesEqualSums(t, f);
    const again = await step([refund]);
    t.equal(again.applied, 0, 'a redelivery of the held deduction applies nothing');

    await step([credit]);
    t.same(
      await ledgerOf(c),
      { [credit.entry_key]: [3000, 3000], [refund.entry_key]: [-1000, -1000] },
      'the credit, then the deduction it releases',
    );
    t.same(await balances(f), { partner: 2500, program: 2500 }, '500 + 3000 - 1000');
    await assertBalancesEqualSums(t, f);
    t.equal((await step([refund, credit])).applied, 0, 'both redelivered: nothing more');
    t.same(await balances(f), { partner: 2500, program: 2500 });
  },
);

t.test('every delivery order of credit and refund gives the causal result', async (t) => {
  for (const [i, order] of permutations(['credit', 'refund'] as const).entries()) {
    for (const chunked of [false, true]) {
      const f = await partner();
      await step([{ ...entries(f, await commission(f)).credit, amount_cents: 500 }]);
      const c = await commission(f);
      const e = entries(f, c);
      const effects = order.map((k) => e[k]);
      if (chunked) await step(effects);
      else for (const x of effects) await step([x]);
      const label = `order ${i} (${order.join(', ')}), ${chunked ? 'one chunk' : 'one chunk each'}`;
      t.same(
        await ledgerOf(c),
        { [e.credit.entry_key]: [3000, 3000], [e.refund.entry_key]: [-1000, -1000] },
        label,
      );
      t.same(await balances(f), { partner: 2500, program: 2500 }, label);
      await assertBalancesEqualSums(t, f);
    }
  }
});

t.test(
  'credit, paid and the refund of a paid commission: the refund comes last in every order',
  async (t) => {
    for (const [i, order] of permutations(['credit', 'paid', 'refundPaid'] as const).entries()) {
      const f = await partner();
      const c = await commission(f);
      const e = entries(f, c);
      for (const k of order) await step([e[k]]);
      const label = `order ${i}: ${order.join(', ')}`;
      const applied = Object.entries(await ledgerOf(c));
      t.same(
        applied.at(-1),
        [e.refundPaid.entry_key, [-1000, -1000]],
        `${label}: the deduction after its credit and its payment`,
      );
      t.same(
        Object.fromEntries(applied),
        {
          [e.credit.entry_key]: [3000, 3000],
          [e.paid.entry_key]: [-3000, -3000],
          [e.refundPaid.entry_key]: [-1000, -1000],
        },
        label,
      );
      t.same(await balances(f), { partner: -1000, program: -1000 }, label);
      await assertBalancesEqualSums(t, f);
    }
  },
);

t.test('a deduction held by one transaction and its credit applied by a concurrent one meet', async (t) => {
  const f = await partner();
  await step([{ ...entries(f, await commission(f)).credit, amount_cents: 500 }]);
  const c = await commission(f);
  const { credit, refund } = entries(f, c);
  const other = createSql(stackEnv().DATABASE_URL, 2, 'svc-test-ledger-causal');
  t.teardown(() => other.end({ timeout: 5 }));
  // The refund's transaction holds the deduction, uncommitted, while the credit's transaction starts: the
  // credit waits on the partner's row lock, then must see the held deduction and apply it.
  let commit!: () => void;
  const committed = new Promise<void>((r) => (commit = r));
  let heldIt!: () => void;
  const holding = new Promise<void>((r) => (heldIt = r));
  const refundTx = sql.begin(async (tx) => {
    t.match(await applyLedgerEntries(tx, [refund]), { applied: 0, held: 1 });
    heldIt();
    await committed;
  });
  await holding;
  const creditTx = other.begin((tx) => applyLedgerEntries(tx, [credit]));
  await waitFor('the credit to wait for the partner lock', async () => {
    const [w] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where application_name = 'svc-test-ledger-causal' and wait_event_type = 'Lock'`;
    return w!.n > 0;
  });
  commit();
  await refundTx;
  t.match(await creditTx, { applied: 2, released: 1 });
  t.same(await ledgerOf(c), { [credit.entry_key]: [3000, 3000], [refund.entry_key]: [-1000, -1000] });
  t.same(await balances(f), { partner: 2500, program: 2500 });
  const [h] = await sql<
    { n: number }[]
  >`select count(*)::int as n from ledger_held where commission_id = ${c}`;
  t.equal(h!.n, 0, 'nothing left held');
  await assertBalancesEqualSums(t, f);
});
