// The partner's unpaid money on GET /api/partner/programs (issue 18): pending (in its hold or held for
// review), held, approved (the next payout's) and when the next pending amount becomes payable, each what a
// commission is owed (amount less deductions), against commissions put in known states by the commission
// lifecycle (test/helpers/commissions.ts: created, held, swept, paid, refunded, taken into a payout as the
// services do it), and another partner's commissions never counted.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { invitedPartner } from '../helpers/partners.ts';
import { createPayouts, payAlone, refund, seedCommissions } from '../helpers/commissions.ts';

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
const C = await invitedPartner(svc, owner, program.id);
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
  // In a payout: approved, then taken by a payout run while it is A's only payable commission.
  const [inPayout] = await seedCommissions(sql, of(A), [{ saleCents: 160_000, amountCents: 16_000 }]);
  if ((await createPayouts(sql, program.id, [A.partnerId])).length !== 1) throw new Error('no payout');
  const [soon, , , , refundedDue, refundedHold, paid, reversed] = await seedCommissions(sql, of(A), [
    { saleCents: 10_000, amountCents: 1_000, status: 'pending', payableInDays: 2 },
    { saleCents: 20_000, amountCents: 2_000, status: 'pending', payableInDays: 5 },
    // Held for review, payable earliest of all: it counts in pending and held, not in next_payable_at.
    { saleCents: 40_000, amountCents: 4_000, status: 'pending', payableInDays: 1, heldFor: 'self_referral' },
    { saleCents: 80_000, amountCents: 8_000 },
    // Partly refunded (status refunded, the rest owed): past its hold it is the next payout's ...
    { saleCents: 30_000, amountCents: 3_000 },
    // ... still in its hold it is pending.
    { saleCents: 50_000, amountCents: 5_000, status: 'pending', payableInDays: 10 },
    { saleCents: 64_000, amountCents: 640 },
    { saleCents: 32_000, amountCents: 320 },
  ]);
  await refund(sql, refundedDue!, 3_000); // 300 of 3,000
  await refund(sql, refundedHold!, 5_000); // 500 of 5,000
  await payAlone(sql, paid!.id);
  await refund(sql, reversed!, null); // in full
  // B's commissions in the same program must not count for A.
  await seedCommissions(sql, of(B), [
    { saleCents: 70_000, amountCents: 7_000, status: 'pending', payableInDays: 1 },
    { saleCents: 90_000, amountCents: 9_000 },
  ]);
  const [soonRow] = await sql<{ payable_at: Date }[]>`
    select payable_at from commissions where id = ${soon!.id}`;
  const states = await sql<{ status: string; deducted_cents: string; payout_id: string | null }[]>`
    select status, deducted_cents, payout_id from commissions
    where id in (${inPayout!.id}, ${refundedDue!.id}, ${refundedHold!.id}, ${paid!.id}, ${reversed!.id})
    order by id`;
  const world = states.map((s) => `${s.status}:${s.deducted_cents}:${s.payout_id !== null}`).join(' ');
  if (world !== 'approved:0:true refunded:300:false refunded:500:false paid:0:false reversed:320:false')
    throw new Error(`the lifecycle made another world: ${world}`);

  const a = await moneyOf(A.session);
  t.equal(a.pending_cents, 1_000 + 2_000 + 4_000 + (5_000 - 500), 'pending: in hold or held, net');
  t.equal(a.held_cents, 4_000, 'held: the one held for review');
  t.equal(a.approved_cents, 8_000 + (3_000 - 300), 'approved: in no payout, net of the partial refund');
  t.equal(a.next_payable_at, soonRow!.payable_at.toISOString(), 'the earliest pending, not held');

  const b = await moneyOf(B.session);
  t.match(b, { pending_cents: 7_000, held_cents: 0, approved_cents: 9_000 }, "B sees only B's");

  // Held for review everywhere: nothing is payable on a date. A hold is decided when a commission is created
  // (lifecycle `create`), never laid on it later, so this world is C's: the same pending commissions (in
  // their hold, one partly refunded), each held from the start.
  const [, , cRefundedHold] = await seedCommissions(sql, of(C), [
    { saleCents: 10_000, amountCents: 1_000, status: 'pending', payableInDays: 2, heldFor: 'partner_ip' },
    { saleCents: 20_000, amountCents: 2_000, status: 'pending', payableInDays: 5, heldFor: 'partner_ip' },
    { saleCents: 50_000, amountCents: 5_000, status: 'pending', payableInDays: 10, heldFor: 'partner_ip' },
  ]);
  await refund(sql, cRefundedHold!, 5_000);
  const allHeld = await moneyOf(C.session);
  t.equal(allHeld.held_cents, allHeld.pending_cents, 'all pending held');
  t.equal(allHeld.next_payable_at, null, 'no date when every pending one is held');
});
