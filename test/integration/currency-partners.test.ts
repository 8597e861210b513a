// Issue 10 item 4, the rest of it: amounts of two currencies are never added. A program's currency is fixed
// once it has partners or sales (its rollups and its partners' balances are sums in that currency), and a
// partner's programs share one currency (the partner's balance_cents is one amount).
import t from 'tap';
import { createLink, postJson, startServices, testSql } from '../helpers/stack.ts';
import { bearer, send, signup } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const LOCKED = 'currency cannot be changed once the program has partners or sales';

async function program(owner: User, currency: string): Promise<number> {
  const r = await postJson(
    url(`/api/advertiser/affiliate-programs?workspace_id=${owner.workspaceId}`),
    { name: `P ${currency} ${Math.random()}`, currency },
    bearer(owner.session),
  );
  if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
  return (r.body.data as { id: number }).id;
}
const addPartner = (owner: User, programId: number, email: string) =>
  send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${programId}/partners`),
    { name: 'Pat', email },
    bearer(owner.session),
  );
const setCurrency = (owner: User, programId: number, currency: string) =>
  send('PUT', url(`/api/advertiser/affiliate-programs/${programId}`), { currency }, bearer(owner.session));

t.test("a program's currency changes freely until it has a partner, then never", async (t) => {
  const owner = await signup(svc);
  const id = await program(owner, 'USD');
  const free = await setCurrency(owner, id, 'EUR');
  t.equal(free.status, 200);
  t.equal((free.body.data as { currency: string }).currency, 'EUR');
  t.equal((await addPartner(owner, id, 'pat@example.com')).status, 201);
  const locked = await setCurrency(owner, id, 'USD');
  t.same([locked.status, locked.body], [409, { error: LOCKED }]);
  t.equal((await setCurrency(owner, id, 'EUR')).status, 200, 'the same currency again is no change');
  const [row] = await sql<{ currency: string }[]>`select currency from programs where id = ${id}`;
  t.equal(row!.currency, 'EUR');
});

t.test('a program with a sale keeps its currency', async (t) => {
  const owner = await signup(svc);
  const id = await program(owner, 'USD');
  const link = await createLink(sql, id);
  await sql`delete from partner_programs where id = ${link.partnerProgramId}`.catch(() => undefined);
  await sql`insert into sales (request_id, program_id, transaction_id, amount_cents, currency, sale_type, sale_date)
            values (${`r-${id}`}, ${id}, ${`txn-cur-${id}`}, 100, 'USD', 'payment', now())`;
  const r = await setCurrency(owner, id, 'GBP');
  t.same([r.status, r.body], [409, { error: LOCKED }]);
});

t.test("a partner's programs share one currency", async (t) => {
  const owner = await signup(svc);
  const usd = await program(owner, 'USD');
  const usd2 = await program(owner, 'USD');
  const eur = await program(owner, 'EUR');
  t.equal((await addPartner(owner, usd, 'sam@example.com')).status, 201);
  t.equal((await addPartner(owner, usd2, 'sam@example.com')).status, 201, 'another USD program: fine');
  const r = await addPartner(owner, eur, 'sam@example.com');
  t.equal(r.status, 409);
  t.equal(
    r.body.error,
    "Partner earns in USD in its other programs; a partner's programs share one currency (its balance is one amount)",
  );
  t.equal((await addPartner(owner, eur, 'sam-eur@example.com')).status, 201, 'another partner record: fine');
  const rows = await sql`
    select 1 from partner_programs pp join partners p on p.id = pp.partner_id
    where pp.program_id = ${eur} and p.email = 'sam@example.com'`;
  t.equal(rows.length, 0, 'the refused join left nothing');
});
