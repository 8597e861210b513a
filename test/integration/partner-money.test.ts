// The partner's unpaid money on GET /api/partner/programs (issue 18): pending (in its hold or held for
// review), held, approved (the next payout's) and when the next pending amount becomes payable, each what a
// commission is owed (amount less deductions), against commissions put in known states by SQL as the
// pipeline leaves them (test/helpers/commissions.ts), and another partner's commissions never counted.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { invitedPartner } from '../helpers/partners.ts';
import { seedCommissions } from '../helpers/commissions.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const api = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
// USD: the seeded commissions are in USD.
const created = await send(
  'POST',
  api(`/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`),
  { name: 'Money Shop', currency: 'USD' },
  bearer(owner.session),
);
if (created.status !== 201) throw new Error(`program: ${created.text}`);
const program = created.body.data as { id: number };
const A = await invitedPartner(svc, owner, program.id);
const B = await invitedPartner(svc, owner, program.id);
const of = (p: { partnerId: number; ppId: number }) => ({
  programId: program.id,
  partnerId: p.partnerId,
  partnerProgramId: p.ppId,
});

interface Money {
  program: { id: number; currency: string };
  pending_cents: number;
  held_cents: number;
  approved_cents: number;
  next_payable_at: string | null;
  balance_cents: number;
}
const moneyOf = async (session: string) => {
  const r = await getJson(api('/api/partner/programs'), bearer(session));
  if (r.status !== 200) throw new Error(`programs: ${r.status} ${r.text}`);
  return (r.body.data as Money[]).find((p) => p.program.id === program.id)!;
};

t.test('nothing owed: zeros and no date', async (t) => {
  t.match(await moneyOf(A.session), {
    pending_cents: 0,
    held_cents: 0,
    approved_cents: 0,
    next_payable_at: null,
  });
});

t.test('pending, held, approved and next payable date, amounts net of deductions, own only', async (t) => {
  const [soon, later, held, , inPayout, refundedDue, refundedHold, paid, reversed] = await seedCommissions(
    sql,
    of(A),
    [
      { saleCents: 10_000, amountCents: 1_000, status: 'pending', payableInDays: 2 },
      { saleCents: 20_000, amountCents: 2_000, status: 'pending', payableInDays: 5 },
      // Held for review, payable earliest of all: it counts in pending and held, not in next_payable_at.
      { saleCents: 40_000, amountCents: 4_000, status: 'pending', payableInDays: 1 },
      { saleCents: 80_000, amountCents: 8_000 },
      { saleCents: 160_000, amountCents: 16_000 },
      // Partly refunded (status refunded, the rest owed): past its hold it is the next payout's ...
      { saleCents: 30_000, amountCents: 3_000 },
      // ... still in its hold it is pending.
      { saleCents: 50_000, amountCents: 5_000, status: 'pending', payableInDays: 10 },
      { saleCents: 64_000, amountCents: 640 },
      { saleCents: 32_000, amountCents: 320 },
    ],
  );
  await sql`update commissions set review_reason = 'self_referral' where id = ${held!.id}`;
  const [payout] = await sql<{ id: string }[]>`
    insert into payouts (program_id, partner_id, partner_program_id, currency, amount_cents, commissions_cents)
    values (${program.id}, ${A.partnerId}, ${A.ppId}, 'USD', 16000, 16000) returning id`;
  await sql`update commissions set payout_id = ${payout!.id} where id = ${inPayout!.id}`;
  await sql`update commissions set status = 'refunded', deducted_cents = 300 where id = ${refundedDue!.id}`;
  await sql`update commissions set status = 'refunded', deducted_cents = 500 where id = ${refundedHold!.id}`;
  await sql`update commissions set status = 'paid', paid_at = now() where id = ${paid!.id}`;
  await sql`update commissions set status = 'reversed', deducted_cents = amount_cents where id = ${reversed!.id}`;
  // B's commissions in the same program must not count for A.
  await seedCommissions(sql, of(B), [
    { saleCents: 70_000, amountCents: 7_000, status: 'pending', payableInDays: 1 },
    { saleCents: 90_000, amountCents: 9_000 },
  ]);
  const [soonRow] = await sql<{ payable_at: Date }[]>`
    select payable_at from commissions where id = ${soon!.id}`;

  const a = await moneyOf(A.session);
  t.equal(a.pending_cents, 1_000 + 2_000 + 4_000 + (5_000 - 500), 'pending: in hold or held, net');
  t.equal(a.held_cents, 4_000, 'held: the one held for review');
  t.equal(a.approved_cents, 8_000 + (3_000 - 300), 'approved: in no payout, net of the partial refund');
  t.equal(a.next_payable_at, soonRow!.payable_at.toISOString(), 'the earliest pending, not held');

  const b = await moneyOf(B.session);
  t.match(b, { pending_cents: 7_000, held_cents: 0, approved_cents: 9_000 }, "B sees only B's");

  // Held for review everywhere: nothing is payable on a date.
  await sql`update commissions set review_reason = 'partner_ip'
            where id in (${soon!.id}, ${later!.id}, ${refundedHold!.id})`;
  const allHeld = await moneyOf(A.session);
  t.equal(allHeld.held_cents, allHeld.pending_cents, 'all pending held');
  t.equal(allHeld.next_payable_at, null, 'no date when every pending one is held');
});
