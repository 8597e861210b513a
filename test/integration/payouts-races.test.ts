// Payouts under real concurrency (ARCHITECTURE invariant 12), each race run several rounds against the real
// API and the real reversal and ledger workers: concurrent creations for one program (no commission in two
// payouts), mark-paid racing refunds of its commissions, mark-paid twice (one 200, the rest 409), cancel
// racing mark-paid (one wins, consistently), creation racing a commission's own mark-paid and rejection.
// After each round, once the ledger has caught up: balances = their ledger entries, and paid + balance =
// earned - deductions, to the cent.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { Test } from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, send, signup } from '../helpers/accounts.ts';
import { assertMoney, ledgerCaughtUp } from '../helpers/money.ts';
import { seedCommissions } from '../helpers/commissions.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'reversal-worker', 'ledger-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const programsUrl = url('/api/advertiser/affiliate-programs');
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
const ROUNDS = 4;

interface Setup {
  programId: number;
  token: string;
  partners: { partnerId: number; partnerProgramId: number }[];
}
async function setup(partnerCount = 2): Promise<Setup> {
  const r = await send('POST', programsUrl, { name: `Race ${uniq()}`, hold_days: 0 }, auth);
  const program = r.body.data as { id: number; api_token: string };
  const partners = [];
  for (let i = 0; i < partnerCount; i++) {
    const p = await send(
      'POST',
      `${programsUrl}/${program.id}/partners`,
      { name: `P${i}`, email: `p-${uniq()}@example.com` },
      auth,
    );
    const d = p.body.data as { partner: { id: number }; partner_program: { id: number } };
    partners.push({ partnerId: d.partner.id, partnerProgramId: d.partner_program.id });
  }
  return { programId: program.id, token: program.api_token, partners };
}

const post = (path: string, body: unknown = {}) => send('POST', url(path), body, auth);
const createPayouts = (programId: number) => post(`/api/advertiser/affiliate-programs/${programId}/payouts`);
const refund = (s: Setup, transactionId: string, cents?: number) =>
  postJson(
    url('/api/v1/track/refund'),
    { transaction_id: transactionId, ...(cents === undefined ? {} : { refund_amount_cents: cents }) },
    bearer(s.token),
  );

async function settled(t: Test, s: Setup) {
  await waitFor(
    'the ledger to catch up',
    () =>
      ledgerCaughtUp(
        sql,
        s.partners.map((p) => p.partnerProgramId),
      ),
    60_000,
  );
  await assertMoney(t, sql, s.programId, s.partners);
}

t.test('concurrent creations for one program: every commission in exactly one payout', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const s = await setup(3);
    const seeded = [];
    for (const p of s.partners) {
      seeded.push(
        ...(await seedCommissions(
          sql,
          { programId: s.programId, ...p },
          Array.from({ length: 8 }, (_, i) => ({ saleCents: 10_000, amountCents: 100 + i })),
        )),
      );
    }
    const results = await Promise.all(Array.from({ length: 5 }, () => createPayouts(s.programId)));
    t.same(
      results.map((r) => r.status),
      [201, 201, 201, 201, 201],
    );
    const payouts = results.flatMap((r) => r.body.data as { partner_id: number; commission_ids: number[] }[]);
    t.equal(payouts.length, 3, `round ${round}: one payout per partner, whichever creation made it`);
    const ids = payouts.flatMap((p) => p.commission_ids).sort((a, b) => a - b);
    t.same(
      ids,
      seeded.map((c) => c.id).sort((a, b) => a - b),
      'every commission once',
    );
    await settled(t, s);
  }
});

t.test('mark-paid racing refunds of its commissions', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const s = await setup(1);
    const p = s.partners[0]!;
    const seeded = await seedCommissions(
      sql,
      { programId: s.programId, ...p },
      Array.from({ length: 6 }, () => ({ saleCents: 10_000, amountCents: 1000 })),
    );
    const [payout] = (await createPayouts(s.programId)).body.data as { id: number }[];
    // A full refund and a partial one of two of its commissions, at once with the payment.
    const [paid, full, partial] = await Promise.all([
      post(`/api/advertiser/payouts/${payout!.id}/mark-paid`, { reference: `r${round}` }),
      refund(s, seeded[round % 6]!.transactionId),
      refund(s, seeded[(round + 1) % 6]!.transactionId, 2_500),
    ]);
    t.equal(paid.status, 200, paid.text);
    t.match(full.body, { success: true, status: 'reversed' });
    t.match(partial.body, { success: true, status: 'refunded', deductionAmount: 2.5 });
    await settled(t, s);
    // The refunds became clawbacks either way: the next payout recovers them.
    await seedCommissions(sql, { programId: s.programId, ...p }, [{ saleCents: 10_000, amountCents: 5000 }]);
    const [next] = (await createPayouts(s.programId)).body.data as {
      id: number;
      recovered_cents: number;
      amount_cents: number;
    }[];
    t.same([next!.recovered_cents, next!.amount_cents], [1250, 3750], 'the clawbacks are recovered');
    t.equal((await post(`/api/advertiser/payouts/${next!.id}/mark-paid`)).status, 200);
    await settled(t, s);
    t.equal(
      Number(
        (await sql`select balance_cents from partner_programs where id = ${p.partnerProgramId}`)[0]!
          .balance_cents,
      ),
      0,
      'nothing owed either way',
    );
  }
});

t.test('mark-paid five times at once: one 200, four 409', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const s = await setup(1);
    await seedCommissions(sql, { programId: s.programId, ...s.partners[0]! }, [
      { saleCents: 1000, amountCents: 300 },
      { saleCents: 1000, amountCents: 400 },
    ]);
    const [payout] = (await createPayouts(s.programId)).body.data as { id: number }[];
    const results = await Promise.all(
      Array.from({ length: 5 }, () => post(`/api/advertiser/payouts/${payout!.id}/mark-paid`)),
    );
    t.same(results.map((r) => r.status).sort(), [200, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) t.same(r.body, { error: 'Payout already paid' });
    const [n] = await sql<{ n: number }[]>`
      select count(*)::int as n from ledger_entries where payout_id = ${payout!.id}`;
    t.equal(n!.n, 2, 'one payment entry per commission');
    await settled(t, s);
  }
});

t.test('cancel racing mark-paid: one wins, and the state agrees with it', async (t) => {
  const winners = new Set<string>();
  for (let round = 0; round < ROUNDS * 2; round++) {
    const s = await setup(1);
    const seeded = await seedCommissions(sql, { programId: s.programId, ...s.partners[0]! }, [
      { saleCents: 1000, amountCents: 250 },
      { saleCents: 1000, amountCents: 350 },
    ]);
    const [payout] = (await createPayouts(s.programId)).body.data as { id: number }[];
    const [paid, canceled] = await Promise.all([
      post(`/api/advertiser/payouts/${payout!.id}/mark-paid`),
      post(`/api/advertiser/payouts/${payout!.id}/cancel`),
    ]);
    t.same([paid.status, canceled.status].sort(), [200, 409], `round ${round}: exactly one of them`);
    const rows = await sql<{ status: string; payout_id: string | null; paid_at: Date | null }[]>`
      select status, payout_id, paid_at from commissions where id = any(${seeded.map((c) => c.id)}::bigint[])`;
    if (paid.status === 200) {
      winners.add('paid');
      t.same(canceled.body, { error: 'A paid payout cannot be canceled' });
      t.ok(rows.every((r) => r.status === 'paid' && r.payout_id === String(payout!.id)));
    } else {
      winners.add('canceled');
      t.same(paid.body, { error: 'A canceled payout cannot be marked paid' });
      t.ok(rows.every((r) => r.status === 'approved' && r.payout_id === null && r.paid_at === null));
      const [n] = await sql<
        { n: number }[]
      >`select count(*)::int as n from ledger_entries where payout_id = ${payout!.id}`;
      t.equal(n!.n, 0, 'a canceled payout wrote no ledger entry');
    }
    await settled(t, s);
  }
  t.comment(`winners seen: ${[...winners].join(', ')}`);
});

t.test('creation racing a commission paid alone and a commission rejected', async (t) => {
  for (let round = 0; round < ROUNDS; round++) {
    const s = await setup(1);
    const seeded = await seedCommissions(
      sql,
      { programId: s.programId, ...s.partners[0]! },
      Array.from({ length: 5 }, () => ({ saleCents: 1000, amountCents: 200 })),
    );
    const [created, alone, rejected] = await Promise.all([
      createPayouts(s.programId),
      post(`/api/advertiser/commissions/${seeded[0]!.id}/mark-paid`),
      post(`/api/advertiser/commissions/${seeded[1]!.id}/reject`, { reason: 'race' }),
    ]);
    t.equal(created.status, 201);
    const inPayout = new Set(
      (created.body.data as { commission_ids: number[] }[]).flatMap((p) => p.commission_ids),
    );
    // Either the payout took the commission first (the other call is 409) or the other call did (the payout
    // does not hold it): never both.
    t.equal(
      alone.status === 200,
      !inPayout.has(seeded[0]!.id),
      `paid alone xor in the payout (${alone.status})`,
    );
    t.equal(
      rejected.status === 200,
      !inPayout.has(seeded[1]!.id),
      `rejected xor in the payout (${rejected.status})`,
    );
    for (const p of created.body.data as { id: number }[]) {
      t.equal((await post(`/api/advertiser/payouts/${p.id}/mark-paid`)).status, 200);
    }
    await settled(t, s);
  }
});
