// The partners' progress towards a bonus, as the dashboard's Groups page reads it (GET …/bonuses/:bonusId/progress,
// docs/rewards.md "Bonuses"): the partners with progress in the bonus's current period (once; this UTC month for a
// calendar_month bonus), highest first, each with its group and whether its commission was made; a partner
// without progress is not listed; another program's, a deleted or a stranger's bonus is 404. The progress rows are
// written as the sale path leaves them (bonus_progress); how sales make them is rewards-bonuses.test.ts's.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram } from '../helpers/partners.ts';
import type { AddedPartner } from '../helpers/partners.ts';
import { createGroup } from '../helpers/rewards.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const own = bearer(owner.session);
const DAY = 86_400_000;

const program = await apiProgram(svc, owner);
const other = await apiProgram(svc, owner);
const gold = await createGroup(svc, owner, program.id, { name: 'Gold' });
const ana = await addPartner(svc, owner, program.id, { name: 'Ana' });
const ben = await addPartner(svc, owner, program.id, { name: 'Ben' });
const cy = await addPartner(svc, owner, program.id, { name: 'Cy' });
await send(
  'PUT',
  url(`/api/advertiser/affiliate-programs/${program.id}/partners/${ben.partnerId}/group`),
  { group_id: gold.id },
  own,
);

async function newBonus(programId: number, body: Record<string, unknown>): Promise<number> {
  const r = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${programId}/bonuses`),
    {
      name: 'Big month',
      metric: 'sales_cents',
      threshold: 30_000,
      amount_cents: 5000,
      period: 'once',
      ends_at: new Date(Date.now() + 30 * DAY).toISOString(),
      ...body,
    },
    own,
  );
  if (r.status !== 201) throw new Error(`bonus: ${r.status} ${r.text}`);
  return (r.body.data as { id: number }).id;
}
const progress = (bonusId: number, period: string, p: AddedPartner, value: number, awarded = false) =>
  sql`insert into bonus_progress (bonus_id, partner_program_id, period, value, awarded_at)
      values (${bonusId}, ${p.ppId}, ${period}, ${value}, ${awarded ? new Date() : null})`;
const read = (programId: number, bonusId: number, auth = own) =>
  getJson(url(`/api/advertiser/affiliate-programs/${programId}/bonuses/${bonusId}/progress`), auth);

t.test(
  'once: the partners with progress, highest first, with their group and whether it was paid',
  async (t) => {
    const bonus = await newBonus(program.id, {});
    await progress(bonus, 'once', ana, 12_000);
    await progress(bonus, 'once', ben, 31_000, true);
    await progress(bonus, 'once', cy, 0);
    const r = await read(program.id, bonus);
    t.equal(r.status, 200, r.text);
    t.same(r.body.data, [
      {
        partner_id: ben.partnerId,
        partner_name: 'Ben',
        group_name: 'Gold',
        period: 'once',
        value: 31_000,
        awarded: true,
      },
      {
        partner_id: ana.partnerId,
        partner_name: 'Ana',
        group_name: 'Default',
        period: 'once',
        value: 12_000,
        awarded: false,
      },
    ]);
  },
);

t.test("calendar_month: this UTC month's progress only", async (t) => {
  const bonus = await newBonus(program.id, {
    period: 'calendar_month',
    metric: 'customers',
    threshold: 3,
    starts_at: new Date(Date.now() - 60 * DAY).toISOString(),
  });
  const month = new Date().toISOString().slice(0, 7);
  const before = new Date(Date.now() - 40 * DAY).toISOString().slice(0, 7);
  await progress(bonus, before, ana, 5, true);
  await progress(bonus, month, ana, 1);
  const r = await read(program.id, bonus);
  t.same(r.body.data, [
    {
      partner_id: ana.partnerId,
      partner_name: 'Ana',
      group_name: 'Default',
      period: month,
      value: 1,
      awarded: false,
    },
  ]);
});

t.test("another program's, a deleted, and a stranger's read are 404", async (t) => {
  const theirs = await newBonus(other.id, {});
  t.same(
    [(await read(program.id, theirs)).status, (await read(program.id, theirs)).body],
    [404, { error: 'Bonus not found' }],
  );
  const gone = await newBonus(program.id, {});
  await send(
    'DELETE',
    url(`/api/advertiser/affiliate-programs/${program.id}/bonuses/${gone}`),
    undefined,
    own,
  );
  t.equal((await read(program.id, gone)).status, 404, 'deleted');
  // A path that is no id (schemathesis sent `null,null`): 404 as any unknown bonus, not a 500.
  for (const notAnId of ['null%2Cnull', 'abc', '0', '99999999999999999999']) {
    const r = await getJson(
      url(`/api/advertiser/affiliate-programs/${program.id}/bonuses/${notAnId}/progress`),
      own,
    );
    t.same([r.status, r.body], [404, { error: 'Bonus not found' }], `bonus ${notAnId}`);
  }
  const stranger = await signup(svc);
  t.same((await read(program.id, theirs, bearer(stranger.session))).body, { error: 'Program not found' });
});
