// Attribution by partner code (CONTRACT part three "Codes as well as links"; docs/codes.md) on the real stack:
// a code alone creates its customer; fallback leaves a click's customer with its partner and takes one that
// has none; override takes the sale and the customer; a deactivated code, or a pending partner's, attributes
// nothing; processor discount ids (coupon_refs) match processor_ids; coupon_code shows in the sale, the events
// list, `sale.created` and the commission; and two codes racing for one new customer: one owner, every
// commission by the rule (many parallel /track/sale calls, and two transactions held at the unique key).
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createLink, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram } from '../helpers/partners.ts';
import type { SaleCommand } from '../../shared/contracts/commands.ts';
import type { Tx } from '../../shared/db/sql.ts';
import type { ApplyContext } from '../../shared/pipeline/command-handler.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { checkProgram, describe } from '../../shared/rollups/check.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(5).toString('hex');

const owner = await signup(svc);
const own = bearer(owner.session);
await sql`insert into webhook_endpoints (workspace_id, url, secret)
          values (${owner.workspaceId}, 'https://hooks.example/codes', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;
const origins = { allowed_origins: ['https://shop.example'] };
const fallback = await apiProgram(svc, owner, origins);
const override = await apiProgram(svc, owner, { ...origins, code_attribution: 'override' });
type Program = typeof fallback;

interface Member {
  partnerId: number;
  ppId: number;
  shortLink: string;
  code: string;
  codeId: number;
}
/** A partner of the program with a link and a code (`processor_ids` optional). */
async function member(
  p: Program,
  opts: { status?: 'pending'; processorIds?: Record<string, string> } = {},
): Promise<Member> {
  const added = await addPartner(svc, owner, p.id, opts.status ? { status: opts.status } : {});
  const link = await createLink(sql, p.id, { partnerId: added.partnerId });
  const code = `C${uniq()}`.toUpperCase();
  const r = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${p.id}/partners/${added.partnerId}/codes`),
    { code, processor_ids: opts.processorIds },
    own,
  );
  if (r.status !== 201) throw new Error(`code: ${r.status} ${r.text}`);
  return {
    partnerId: added.partnerId,
    ppId: added.ppId,
    shortLink: link.shortLink,
    code,
    codeId: (r.body.data as { id: number }).id,
  };
}

async function click(m: Member): Promise<string> {
  const r = await postJson(url('/api/v1/track/click'), {
    affiliate_url: `https://shop.example/?aff=${m.shortLink}`,
  });
  if (r.status !== 200) throw new Error(`click: ${JSON.stringify(r.body)}`);
  return r.body.click_id as string;
}
const sale = (p: Program, body: Record<string, unknown>) =>
  postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `txn-${uniq()}`, amount_cents: 10_000, ...body },
    bearer(p.token),
  );

async function commissionOf(saleAnswer: { body: Record<string, unknown> }) {
  const id = saleAnswer.body.commission_id as number;
  const [row] = await sql<{ partner_id: string }[]>`select partner_id from commissions where id = ${id}`;
  return row ? Number(row.partner_id) : null;
}
async function customer(programId: number, key: string) {
  const [row] = await sql<{ partner_id: string | null; link_id: string | null; customer_status: string }[]>`
    select partner_id, link_id, customer_status from customers where program_id = ${programId} and customer_key = ${key}`;
  return row;
}
async function saleRow(txn: string) {
  const [row] = await sql<{ coupon_code: string | null; partner_code_id: string | null }[]>`
    select coupon_code, partner_code_id from sales where transaction_id = ${txn}`;
  return row;
}

const A = await member(fallback);
const B = await member(fallback);
const OA = await member(override);
const OB = await member(override);

t.test('a code alone creates its customer, which keeps buying from the partner', async (t) => {
  const key = `k-${uniq()}`;
  const txn = `txn-${uniq()}`;
  const first = await sale(fallback, {
    transaction_id: txn,
    customer_key: key,
    coupon_code: A.code.toLowerCase(),
  });
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.equal(await commissionOf(first), A.partnerId, "the code's partner earns");
  t.match(await customer(fallback.id, key), {
    partner_id: String(A.partnerId),
    customer_status: 'conversion',
  });
  t.same(
    await saleRow(txn),
    { coupon_code: A.code, partner_code_id: String(A.codeId) },
    'as the code spells it',
  );

  const later = await sale(fallback, { customer_key: key });
  t.equal(await commissionOf(later), A.partnerId, 'a later sale without the code: the same partner');

  // The commission, the events list and sale.created show the code.
  const list = await getJson(url(`/api/advertiser/affiliate-programs/${fallback.id}/commissions`), own);
  const rows = list.body.data as { id: number; coupon_code: string | null }[];
  t.equal(rows.find((c) => c.id === first.body.commission_id)?.coupon_code, A.code);
  t.equal(rows.find((c) => c.id === later.body.commission_id)?.coupon_code, null);
  const events = await getJson(
    url(`/api/tracking/events/${fallback.id}?eventType=conversion&pageSize=100`),
    own,
  );
  const ev = (events.body.data as { processor_event_id: string; coupon_code: string | null }[]).find(
    (e) => e.processor_event_id === txn,
  );
  t.equal(ev?.coupon_code, A.code, 'the events list');
  const [created] = await sql<{ payload: { data: { coupon_code: string | null; partner_id: number } } }[]>`
    select payload from outbox where payload ->> 'type' = 'sale.created' and payload -> 'data' ->> 'transaction_id' = ${txn}`;
  t.match(created?.payload.data, { coupon_code: A.code, partner_id: A.partnerId }, 'sale.created');
  const commissionCreated = await sql<{ id: number; coupon_code: string | null }[]>`
    select (payload -> 'data' ->> 'id')::int as id, payload -> 'data' ->> 'coupon_code' as coupon_code
    from outbox where payload ->> 'type' = 'commission.created'
      and (payload -> 'data' ->> 'id')::bigint in (${Number(first.body.commission_id)}, ${Number(later.body.commission_id)})
    order by 1`;
  t.same(
    commissionCreated.map((r) => [r.id, r.coupon_code]),
    [
      [first.body.commission_id, A.code],
      [later.body.commission_id, null],
    ],
    'commission.created: the code of its sale, null for the later sale without one',
  );
});

t.test(
  "fallback: a click's partner keeps its customer; a customer without a partner becomes the code's",
  async (t) => {
    const key = `k-${uniq()}`;
    const clickId = await click(A);
    const txn = `txn-${uniq()}`;
    const r = await sale(fallback, {
      transaction_id: txn,
      click_id: clickId,
      customer_key: key,
      coupon_code: B.code,
    });
    t.equal(await commissionOf(r), A.partnerId, 'the click wins');
    t.same(
      await saleRow(txn),
      { coupon_code: B.code, partner_code_id: null },
      'recorded, not attributed by it',
    );
    const list = await getJson(url(`/api/advertiser/affiliate-programs/${fallback.id}/commissions`), own);
    const c = (list.body.data as { id: number; coupon_code: string | null }[]).find(
      (x) => x.id === r.body.commission_id,
    );
    t.equal(c?.coupon_code, null, "A's commission does not show B's code");

    // A lead without a click: a customer with no partner.
    const leadKey = `k-${uniq()}`;
    const lead = await postJson(url('/api/v1/track/lead'), { customer_key: leadKey }, bearer(fallback.token));
    t.equal(lead.status, 200, JSON.stringify(lead.body));
    await waitFor('the lead', () => customer(fallback.id, leadKey));
    const byCode = await sale(fallback, { customer_key: leadKey, coupon_code: B.code });
    t.equal(await commissionOf(byCode), B.partnerId);
    t.match(await customer(fallback.id, leadKey), { partner_id: String(B.partnerId) });
  },
);

t.test('override: the code takes the sale and the customer', async (t) => {
  const clickId = await click(OA);
  const r = await sale(override, { click_id: clickId, coupon_code: OB.code });
  t.equal(await commissionOf(r), OB.partnerId);
  const [moved] = await sql<{ partner_id: string; link_id: string | null }[]>`
    select partner_id, link_id from customers where click_id = ${clickId}`;
  t.same(moved, { partner_id: String(OB.partnerId), link_id: null }, 'the customer moved, without the link');
  const later = await sale(override, { click_id: clickId });
  t.equal(await commissionOf(later), OB.partnerId, 'its later sales follow');
  const back = await sale(override, { click_id: clickId, coupon_code: OA.code });
  t.equal(await commissionOf(back), OA.partnerId, 'another code takes it again');
});

t.test("a deactivated code, or a pending partner's, attributes nothing", async (t) => {
  const C = await member(fallback);
  const off = await send(
    'DELETE',
    url(`/api/advertiser/affiliate-programs/${fallback.id}/codes/${C.codeId}`),
    undefined,
    own,
  );
  t.equal(off.status, 200);
  const fresh = await sale(fallback, { customer_key: `k-${uniq()}`, coupon_code: C.code });
  t.same(
    [fresh.status, fresh.body],
    [400, { error: 'Customer not found. Provide customer_key or click_id.' }],
  );
  const txn = `txn-${uniq()}`;
  const r = await sale(fallback, {
    transaction_id: txn,
    click_id: await click(A),
    coupon_code: C.code.toLowerCase(),
  });
  t.equal(await commissionOf(r), A.partnerId);
  t.same(await saleRow(txn), { coupon_code: C.code.toLowerCase(), partner_code_id: null }, 'as sent');

  const OC = await member(override);
  await send(
    'DELETE',
    url(`/api/advertiser/affiliate-programs/${override.id}/codes/${OC.codeId}`),
    undefined,
    own,
  );
  const ov = await sale(override, { click_id: await click(OA), coupon_code: OC.code });
  t.equal(await commissionOf(ov), OA.partnerId, 'override: an inactive code overrides nothing');

  const pending = await member(fallback, { status: 'pending' });
  const p = await sale(fallback, { customer_key: `k-${uniq()}`, coupon_code: pending.code });
  t.equal(p.status, 400, 'a pending partner’s code');
});

// ---- the applier itself: processor discount ids, and two transactions racing for one new customer ----

const applier = createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: `codes-${uniq()}` });
const ctx = (): ApplyContext => ({ rollups: new RollupBuffer(), careful: false, memo: new Map() });
const command = (p: Program, fields: Partial<SaleCommand>): SaleCommand =>
  saleCommand({
    request_id: `req-${uniq()}`,
    program_id: p.id,
    transaction_id: `txn-${uniq()}`,
    amount_cents: 5_000,
    customer_key: `k-${uniq()}`,
    ...fields,
  });
/** The worker's step: the sale applied and its rollups written, in one transaction. */
async function applyIn(tx: Tx, cmd: SaleCommand) {
  const c = ctx();
  const answer = await applier.apply(tx, cmd, c);
  await c.rollups.flush(tx);
  return answer;
}
const apply = (cmd: SaleCommand) => sql.begin((tx) => applyIn(tx, cmd));
async function partnerOfAnswer(a: { body: unknown }) {
  const id = (a.body as { commission_id?: number }).commission_id;
  if (!id) return null;
  const [row] = await sql<{ partner_id: string }[]>`select partner_id from commissions where id = ${id}`;
  return Number(row!.partner_id);
}

t.test("coupon_refs: a processor's discount id matches the code's processor_ids", async (t) => {
  const S = await member(fallback, { processorIds: { stripe: `promo_${uniq()}`, paddle: `dsc_${uniq()}` } });
  const [ids] = await sql<{ stripe: string; paddle: string }[]>`
    select processor_ids ->> 'stripe' as stripe, processor_ids ->> 'paddle' as paddle from partner_codes where id = ${S.codeId}`;
  const stripe = command(fallback, {
    coupon_refs: { processor: 'stripe', ids: ['promo_other', ids!.stripe] },
  });
  t.equal(await partnerOfAnswer(await apply(stripe)), S.partnerId, 'stripe promotion code');
  t.same(await saleRow(stripe.transaction_id), { coupon_code: S.code, partner_code_id: String(S.codeId) });
  const paddle = command(fallback, { coupon_refs: { processor: 'paddle', ids: [ids!.paddle] } });
  t.equal(await partnerOfAnswer(await apply(paddle)), S.partnerId, 'paddle discount');
  const wrong = command(fallback, { coupon_refs: { processor: 'polar', ids: [ids!.stripe] } });
  t.equal((await apply(wrong)).statusCode, 400, "another processor's id does not match");
  // A name and an id naming two codes: the name wins.
  const both = command(fallback, {
    coupon_code: A.code,
    coupon_refs: { processor: 'stripe', ids: [ids!.stripe] },
  });
  t.equal(await partnerOfAnswer(await apply(both)), A.partnerId);
});

/** Two transactions, one holding the new customer's row (uncommitted), the other waiting on its key. */
async function heldRace(p: Program, first: Member, second: Member) {
  const key = `k-${uniq()}`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let holderPid = 0;
  const created = new Promise<void>((resolve, reject) => {
    sql
      .begin(async (tx) => {
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        holderPid = me!.pid;
        const a = await applyIn(tx, command(p, { customer_key: key, coupon_code: first.code }));
        if (a.statusCode !== 200) throw new Error(JSON.stringify(a.body));
        resolve();
        await released;
      })
      .catch(reject);
  });
  await created;
  const waiting = apply(command(p, { customer_key: key, coupon_code: second.code }));
  await waitFor('the second transaction to wait for the first', async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where pg_blocking_pids(pid) @> array[${holderPid}]::int[]`;
    return r!.n > 0;
  });
  release();
  return { key, second: await waiting };
}

t.test('two transactions racing for one new customer: the first to commit owns it', async (t) => {
  const fb = await heldRace(fallback, A, B);
  t.equal(await partnerOfAnswer(fb.second), A.partnerId, 'fallback: the later sale follows the owner');
  t.match(await customer(fallback.id, fb.key), { partner_id: String(A.partnerId) });
  const ov = await heldRace(override, OA, OB);
  t.equal(await partnerOfAnswer(ov.second), OB.partnerId, "override: the later sale is its code's");
  t.match(await customer(override.id, ov.key), { partner_id: String(OB.partnerId) });
});

t.test('many parallel sales with two codes for one new customer', async (t) => {
  for (const [p, x, y] of [
    [fallback, A, B],
    [override, OA, OB],
  ] as const) {
    const key = `k-${uniq()}`;
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => sale(p, { customer_key: key, coupon_code: (i % 2 ? x : y).code })),
    );
    t.same(
      answers.filter((a) => a.status !== 200).map((a) => a.body),
      [],
      'every sale recorded',
    );
    const rows = await sql<{ id: string; coupon_code: string; partner_id: string; earner: string }[]>`
      select s.id, s.coupon_code, s.partner_id, c.partner_id as earner
      from sales s join customers cu on cu.id = s.customer_id join commissions c on c.sale_id = s.id
      where cu.program_id = ${p.id} and cu.customer_key = ${key} order by s.id`;
    t.equal(rows.length, 24, 'one commission per sale');
    const partnerOf = (code: string) => String(code === x.code ? x.partnerId : y.partnerId);
    const owner = (await customer(p.id, key))!.partner_id;
    if (p === fallback) {
      t.equal(owner, partnerOf(rows[0]!.coupon_code), 'fallback: the first sale’s code owns the customer');
      t.same(new Set(rows.map((r) => r.earner)), new Set([owner]), 'and earns every commission');
    } else {
      t.same(
        rows.map((r) => r.earner),
        rows.map((r) => partnerOf(r.coupon_code)),
        "override: each commission is its sale's code's",
      );
      t.equal(owner, partnerOf(rows.at(-1)!.coupon_code), 'the last sale’s code owns the customer');
    }
  }
});

t.test('the rollups equal the plain SQL over the rows, customers moved by codes included', async (t) => {
  // Every lead, sale and commission counts under the partner and link its customer had when it was
  // recorded (the rebuild too): a code that moves the customer later moves nothing counted before.
  for (const p of [fallback, override]) {
    const diffs = await checkProgram(sql, p.id, { first: null, last: null });
    t.same(diffs.map(describe), [], `program ${p.id} (${p === fallback ? 'fallback' : 'override'})`);
  }
});
