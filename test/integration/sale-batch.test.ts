// The sale applier on a whole chunk (applyBatch) against the same rules applied one command at a time
// (`apply`, which is applyBatch on one command), in order: on the real database, random chunks mixing every
// branch of the sale step (401, test mode, 409 against the database and within the chunk, customer
// resolution by key and by click id, 400s, the cookie window, one-time / recurring-months / per-product
// commission policies, first sales) must get the same answers, effects, rollup deltas and rows: a chunk's
// in-memory state must match what committed rows give the next command. Each chunk runs twice from the same
// committed fixtures, each run rolled back. Replay a run with SALE_BATCH_SEED=<seed>.
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import type { Tx } from '../../shared/db/sql.ts';
import type { SaleCommand } from '../../shared/contracts/commands.ts';
import type { Applied, ApplyContext, CommandApplier } from '../../shared/pipeline/command-handler.ts';
import { CarefulPassNeeded } from '../../shared/pipeline/command-handler.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';
import { Snowflake, formatClickId } from '../../shared/domain/ids.ts';
import { DUPLICATE_SALE, createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import { createLink, createProgram, testSql } from '../helpers/stack.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';
import type { LinkFixture } from '../helpers/stack.ts';

const sql = testSql(t);
const run = randomBytes(4).toString('hex');
const SEED = Number(process.env.SALE_BATCH_SEED ?? 20260120);
const CHUNKS = 40;
const DAY = 86_400_000;
// Chunks span 20:30 → past midnight (two rollup days); a few sales come 40 days later (past windows, periods).
const T0 = Date.UTC(2026, 0, 20, 23, 30);
const UNKNOWN_PROGRAM = 9_000_000_000_000;
const ROLLBACK = new Error('rollback');
const newCtx = (): ApplyContext => ({ rollups: new RollupBuffer(), careful: false, memo: new Map() });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** mulberry32: a seeded PRNG so a failing random run can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Prog = 'A' | 'B' | 'C' | 'D';
type Status = 'click' | 'lead' | 'conversion';
type Days = number | null;
// program, link, status, customer_key, has click_id, days ago of last click / first purchase / first commission
type Spec = [Prog, number, Status, string | null, boolean, Days, Days, Days, ('noPartner' | 'noPP')?];
const SPECS: Spec[] = [
  ['A', 0, 'click', 'k1', true, 1, null, null],
  ['A', 0, 'click', null, true, 2, null, null],
  ['A', 1, 'click', null, true, 45, null, null], // cookie window (30 d) expired via click id
  ['A', 1, 'click', 'k4', true, 45, null, null], // expired via click id, not via key
  ['A', 2, 'click', null, true, null, null, null], // no last click: expired
  ['A', 2, 'lead', 'k6', true, 45, null, null], // a lead is not bound to the window
  ['A', 0, 'lead', 'k7', false, 3, null, null],
  ['A', 1, 'lead', null, true, 3, null, null],
  ['A', 2, 'conversion', 'k9', true, 30, 20, 5], // recurring, 1 month: still earning
  ['A', 0, 'conversion', 'k10', true, 100, 90, 60], // recurring period ended
  ['A', 1, 'conversion', 'k11', false, 15, 10, null],
  ['A', 2, 'conversion', null, true, 50, 4, 3],
  ['A', 0, 'click', 'k13', true, 1, null, null, 'noPartner'],
  ['A', 1, 'lead', 'k14', true, 1, null, null, 'noPP'],
  ['A', 2, 'click', 'shared', true, 10, null, null],
  ['A', 0, 'lead', 'k16', true, 29, null, null],
  ['A', 1, 'click', 'k17', true, 29, null, null],
  ['B', 0, 'click', 'shared', true, 1, null, null], // same key as an A customer
  ['B', 1, 'click', null, true, 10, null, null], // B's window is 7 d: expired
  ['B', 0, 'lead', 'k20', true, 10, null, null],
  ['B', 1, 'conversion', 'k21', true, 120, 100, 100], // one_time: already earned
  ['B', 0, 'conversion', 'k22', false, 30, 20, null],
  ['B', 1, 'click', 'k23', true, 2, null, null],
  ['B', 0, 'lead', null, true, 5, null, null],
  ['C', 0, 'click', 'k25', true, 1, null, null],
  ['C', 0, 'conversion', 'k26', true, 500, 400, 400], // default policy: lifetime recurring
  ['C', 0, 'lead', null, true, 90, null, null],
  ['C', 0, 'click', 'k28', true, 70, null, null],
  ['D', 0, 'click', 'k29', true, 1, null, null], // customer of the deleted program
];

interface Customer {
  id: number;
  prog: Prog;
  key: string | null;
  click: string | null;
}
interface Fixtures {
  programs: Record<Prog, number>;
  links: Record<Prog, LinkFixture[]>;
  customers: Customer[];
  preTxns: string[];
}

async function buildFixtures(): Promise<Fixtures> {
  const policies: Record<Prog, string> = {
    A: '{"type": "percentage", "percent": 12.5, "recurring": {"mode": "recurring", "months": 1}, "product_rules": [{"product_id": "pro", "type": "flat", "amount_cents": 500}]}',
    B: '{"type": "flat", "amount_cents": 1500, "recurring": {"mode": "one_time"}, "product_rules": [{"product_id": "free", "type": "percentage", "percent": 0}]}',
    C: '{"type": "bogus"}', // unparseable: the default policy applies
    D: '{"type": "percentage", "percent": 50}',
  };
  const windows: Record<Prog, number> = { A: 30, B: 7, C: 60, D: 30 };
  const programs = {} as Record<Prog, number>;
  const links = {} as Record<Prog, LinkFixture[]>;
  for (const p of ['A', 'B', 'C', 'D'] as const) {
    programs[p] = (await createProgram(sql, { cookieWindowDays: windows[p] })).id;
    await sql`update programs set commission = ${sql.json(JSON.parse(policies[p]))} where id = ${programs[p]}`;
    links[p] = [];
    for (let i = 0; i < { A: 3, B: 2, C: 1, D: 1 }[p]; i++) {
      // B's first partner is also A's first partner.
      const partnerId = p === 'B' && i === 0 ? links.A[0]!.partnerId : undefined;
      links[p].push(await createLink(sql, programs[p], partnerId === undefined ? {} : { partnerId }));
    }
  }
  const ago = (d: Days) => (d === null ? null : new Date(T0 - d * DAY));
  const customers: Customer[] = [];
  for (const [i, [prog, li, status, key, hasClick, last, fpd, fca, flag]] of SPECS.entries()) {
    const link = links[prog][li]!;
    const c: Customer = {
      id: 0,
      prog,
      key: key === null ? null : `${run}-${key}`,
      click: hasClick ? formatClickId(link.partnerProgramId, BigInt(1000 + i)) : null,
    };
    const [row] = await sql<{ id: string }[]>`
      insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                             customer_key, first_click_at, last_click_at, first_purchase_date, first_commission_at)
      values (${programs[prog]}, ${flag === 'noPartner' ? null : link.partnerId},
              ${flag === undefined ? link.partnerProgramId : null}, ${link.id}, ${c.click}, ${status}, ${c.key},
              ${ago(last)}, ${ago(last)}, ${ago(fpd)}, ${ago(fca)})
      returning id`;
    c.id = Number(row!.id);
    customers.push(c);
  }
  // Sales already recorded: their transaction_ids are taken (globally, test sales included).
  const preProgs: Prog[] = ['A', 'A', 'B', 'C', 'B'];
  const preCustomers = [8, 9, 20, null, null]; // null: a test sale
  const preTxns: string[] = [];
  for (const [i, prog] of preProgs.entries()) {
    const ci = preCustomers[i]!;
    const c = ci === null ? null : customers[ci]!;
    const link = links[prog][0]!;
    const txn = `${run}-pre${i}`;
    await sql`
      insert into sales (request_id, program_id, customer_id, partner_id, partner_program_id, transaction_id,
                         amount_cents, currency, sale_type, is_test, sale_date)
      values (${`pre-${txn}`}, ${programs[prog]}, ${c?.id ?? null}, ${c ? link.partnerId : null},
              ${c ? link.partnerProgramId : null}, ${txn}, 1000, 'USD', 'payment', ${c === null}, ${new Date(T0 - DAY)})`;
    preTxns.push(txn);
  }
  return { programs, links, customers, preTxns };
}

function saleCmd(
  p: Partial<SaleCommand> & Pick<SaleCommand, 'request_id' | 'program_id' | 'transaction_id'>,
): SaleCommand {
  return saleCommand({ ts: T0, amount_cents: 10_000, currency: 'USD', ...p });
}

function genChunk(rnd: () => number, fx: Fixtures, ci: number): SaleCommand[] {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
  const P = fx.programs;
  const active = fx.customers.filter((c) => c.prog !== 'D');
  const keyed = active.filter((c) => c.key !== null);
  const clicked = fx.customers.filter((c) => c.click !== null);
  const unknownClicks = [formatClickId(fx.links.A[0]!.partnerProgramId, 9001n), 'not-a-click-id'];
  const n = 1 + Math.floor(rnd() * 60);
  const txns: string[] = [];
  const out: SaleCommand[] = [];
  for (let i = 0; i < n; i++) {
    let program: number;
    let key: string | null = null;
    let click: string | null = null;
    let isTest = false;
    const kind = rnd();
    if (kind < 0.3) {
      const c = pick(keyed); // by key, sometimes with another customer's click id
      [program, key] = [P[c.prog], c.key];
      if (rnd() < 0.3) click = pick(clicked).click;
    } else if (kind < 0.6) {
      const c = pick(clicked); // by click id; sometimes an unknown key first, or another program
      [program, click] = [P[c.prog], c.click];
      if (rnd() < 0.25) key = `${run}-nokey`;
      if (rnd() < 0.1) program = P[pick(['A', 'B', 'C'] as const)];
    } else if (kind < 0.68) {
      const c = pick(keyed); // a key looked up in a random program
      [program, key, click] = [P[pick(['A', 'B', 'C'] as const)], c.key, rnd() < 0.5 ? c.click : null];
    } else if (kind < 0.78) {
      program = P[pick(['A', 'B', 'C'] as const)]; // nobody
      key = rnd() < 0.5 ? `${run}-nokey` : null;
      click = pick([null, ...unknownClicks]);
    } else if (kind < 0.85) {
      const c = pick(active);
      [program, key, click] = [pick([P.D, UNKNOWN_PROGRAM]), c.key, c.click];
    } else {
      const c = pick(active);
      isTest = true;
      [program, key, click] = [pick([P.A, P.B, P.C, P.D, UNKNOWN_PROGRAM]), c.key, c.click];
    }
    const tr = rnd();
    const txn =
      tr < 0.18 && txns.length > 0 ? pick(txns) : tr < 0.25 ? pick(fx.preTxns) : `${run}-c${ci}-t${i}`;
    txns.push(txn);
    const sub = rnd() < 0.3;
    out.push(
      saleCmd({
        request_id: `${run}-c${ci}-r${i}`,
        ts: T0 - 3 * 3_600_000 + i * 240_000 + Math.floor(rnd() * 1_200_000) + (rnd() < 0.05 ? 40 * DAY : 0),
        program_id: program,
        transaction_id: txn,
        amount_cents: rnd() < 0.1 ? 0 : Math.floor(rnd() * 100_000),
        currency: pick(['USD', 'EUR']),
        customer_key: key,
        click_id: click,
        sale_type: sub ? 'subscription' : 'payment',
        is_recurring: sub,
        subscription_id: sub ? `sub-${i}` : null,
        subscription_interval: sub ? 'monthly' : null,
        line_items: rnd() < 0.2 ? [{ sku: 'x', quantity: 2 }] : null,
        product_id: pick([null, null, 'pro', 'free', 'other']),
        is_test: isTest,
      }),
    );
  }
  return out;
}

/** Answers and rows of one run, every sale / commission id replaced by its sale's transaction_id. */
async function capture(tx: Tx, fx: Fixtures, cmds: SaleCommand[], answers: Applied[]) {
  const txns = [...new Set(cmds.map((c) => c.transaction_id))];
  // Rows in id order: ids are dropped below, but their order (command order for apply) is compared.
  const sales = await tx<Record<string, unknown>[]>`
    select id, transaction_id, request_id, program_id, customer_id, partner_id, partner_program_id, click_id,
           customer_key, amount_cents, currency, sale_type, payment_status, is_recurring, subscription_id,
           subscription_interval, product_id, line_items, is_test, sale_date
    from sales where transaction_id = any(${txns}::text[]) order by id`;
  const commissions = await tx<Record<string, unknown>[]>`
    select c.id, s.transaction_id as sale, c.program_id, c.partner_id, c.partner_program_id, c.customer_id,
           c.status, c.amount_cents, c.currency, c.deducted_cents, c.refund_reason, c.paid_at
    from commissions c join sales s on s.id = c.sale_id
    where s.transaction_id = any(${txns}::text[]) order by c.id`;
  const customers = await tx<Record<string, unknown>[]>`
    select id, program_id, partner_id, partner_program_id, click_id, customer_key, customer_status, last_click_at,
           first_purchase_date, first_commission_at, updated_at >= now() as touched
    from customers where id = any(${fx.customers.map((c) => c.id)}::bigint[]) order by id`;
  const rollups = await tx<Record<string, unknown>[]>`
    select program_id, day::text, clicks, leads, conversions, sales, revenue_cents, commission_cents
    from program_daily_stats where program_id = any(${Object.values(fx.programs)}::bigint[])
    order by program_id, day`;
  const saleTxn = new Map(sales.map((s) => [String(s.id), s.transaction_id]));
  const comTxn = new Map(commissions.map((c) => [String(c.id), c.sale]));
  const sid = (v: unknown) => (typeof v === 'number' ? `sale<${saleTxn.get(String(v)) ?? `?${v}`}>` : v);
  const cid = (v: unknown) => (typeof v === 'number' ? `commission<${comTxn.get(String(v)) ?? `?${v}`}>` : v);
  return {
    answers: answers.map((a) => {
      const body = { ...a.body };
      if ('sale_id' in body) body.sale_id = sid(body.sale_id);
      if ('commission_id' in body) body.commission_id = cid(body.commission_id);
      const data = body.data as Record<string, unknown> | undefined;
      if (data && typeof data.eventId === 'string')
        body.data = { ...data, eventId: `${sid(Number(data.eventId))}` };
      const effects = (a.effects ?? []).map((e) =>
        e.topic === 'ledger'
          ? {
              ...e,
              commission_id: cid(e.commission_id),
              entry_key: `commission:${cid(e.commission_id)}:created`,
            }
          : e,
      );
      return { programId: a.programId, statusCode: a.statusCode, body, effects };
    }),
    sales: sales.map(({ id: _id, ...s }) => s),
    commissions: commissions.map(({ id: _id, ...c }) => c),
    customers: customers.map((c) => ({ ...c })),
    rollups: rollups.map((r) => ({ ...r })),
  };
}

type Capture = Awaited<ReturnType<typeof capture>>;
type Mode = (tx: Tx, cmds: SaleCommand[], ctx: ApplyContext) => Promise<Applied[]>;
/** The reference: `apply` on each command in order, in the same transaction and context. */
const sequential =
  (applier: CommandApplier<SaleCommand>): Mode =>
  async (tx, cmds, ctx) => {
    const answers: Applied[] = [];
    for (const c of cmds) answers.push(await applier.apply(tx, c, ctx));
    return answers;
  };

/** Applies the chunk in one transaction, flushes its rollups, captures, and rolls back. */
async function runChunk(
  fx: Fixtures,
  cmds: SaleCommand[],
  mode: Mode,
): Promise<Capture | { thrown: string }> {
  let out: Capture | undefined;
  try {
    await sql.begin(async (tx) => {
      const ctx = newCtx();
      const answers = await mode(tx, cmds, ctx);
      await ctx.rollups.flush(tx);
      out = await capture(tx, fx, cmds, answers);
      throw ROLLBACK;
    });
  } catch (err) {
    if (err !== ROLLBACK)
      return { thrown: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
  return out!;
}

t.test('applyBatch answers and writes exactly what apply on each command in order does', async (t) => {
  const applier = createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: 'test.' });
  if (typeof applier.applyBatch !== 'function')
    return void t.fail('createSaleApplier().applyBatch is missing');
  const batch: Mode = (tx, cmds, ctx) => applier.applyBatch!(tx, cmds, ctx);
  const fx = await buildFixtures();
  t.comment(`seed ${SEED} (replay with SALE_BATCH_SEED=${SEED}), ${CHUNKS} chunks`);
  const rnd = prng(SEED);
  const progName = new Map<unknown, string>(Object.entries(fx.programs).map(([k, v]) => [v, k]));
  const seen = new Map<string, number>();
  const note = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);
  let agreed = 0;
  for (let ci = 0; ci < CHUNKS; ci++) {
    const cmds = genChunk(rnd, fx, ci);
    const b = await runChunk(fx, cmds, batch);
    const s = await runChunk(fx, cmds, sequential(applier));
    if ('thrown' in s) {
      const bs = 'thrown' in b ? `threw ${b.thrown}` : 'returned';
      return void t.fail(
        `seed ${SEED} chunk ${ci}: the sequential apply threw ${s.thrown} (applyBatch ${bs})`,
      );
    }
    if (!isDeepStrictEqual(b, s)) {
      const short = (a: Capture['answers'][number] | undefined) =>
        a ? `${a.statusCode} ${JSON.stringify(a.body)} effects=${JSON.stringify(a.effects)}` : '-';
      const lines = cmds.map((c, i) => {
        const ba = 'thrown' in b ? undefined : b.answers[i];
        const mark = isDeepStrictEqual(ba, s.answers[i]) ? '  ' : '!!';
        return (
          `${mark} #${i} txn=${c.transaction_id} prog=${progName.get(c.program_id) ?? c.program_id} ` +
          `key=${c.customer_key} click=${c.click_id} test=${c.is_test} amount=${c.amount_cents} ` +
          `product=${c.product_id} ts=${new Date(c.ts).toISOString()}\n` +
          (mark === '!!'
            ? `     seq:   ${short(s.answers[i])}\n     batch: ${short(ba)}`
            : `     both:  ${s.answers[i]!.statusCode} ${String(s.answers[i]!.body.message ?? s.answers[i]!.body.error)}`)
        );
      });
      t.comment(`seed ${SEED}, chunk ${ci} (${cmds.length} commands) differs:\n${lines.join('\n')}`);
      if ('thrown' in b) t.fail(`seed ${SEED} chunk ${ci}: applyBatch threw ${b.thrown}`);
      else t.same(b, s, `seed ${SEED} chunk ${ci}: applyBatch matches sequential apply`);
      t.comment(`commands of chunk ${ci}: ${JSON.stringify(cmds)}`);
      break;
    }
    agreed++;
    // What the chunk exercised (to show the comparison was not vacuous).
    const rejected = new Set<string>();
    for (const [i, a] of s.answers.entries()) {
      const txn = cmds[i]!.transaction_id;
      if (a.statusCode === 200 && (a.body.data as { test_mode?: boolean } | undefined)?.test_mode)
        note('test mode');
      else if (a.statusCode === 200 && a.body.commission_id !== null) note('commission');
      else if (a.statusCode === 200) note(`no commission: ${String(a.body.message)}`);
      else note(`${a.statusCode}${a.statusCode === 400 ? `: ${String(a.body.error)}` : ''}`);
      if (a.statusCode === 200 && rejected.has(txn)) note('txn accepted after an earlier rejection');
      if (a.statusCode === 400 || a.statusCode === 401) rejected.add(txn);
    }
    const requests = new Set(cmds.map((c) => c.request_id));
    const perCustomer = new Map<unknown, number>();
    for (const r of s.sales)
      if (requests.has(r.request_id as string) && r.customer_id !== null)
        perCustomer.set(r.customer_id, (perCustomer.get(r.customer_id) ?? 0) + 1);
    if ([...perCustomer.values()].some((n) => n >= 2)) note('chunk with two sales for one customer');
    if (s.rollups.some((r) => Number(r.conversions) > 0)) note('conversions counted');
  }
  t.comment(`exercised: ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
  t.equal(agreed, CHUNKS, `all ${CHUNKS} chunks agree`);
  if (agreed < CHUNKS) return;
  for (const k of [
    'commission',
    'test mode',
    '409',
    '401',
    '400: Customer not found. Provide customer_key or click_id.',
    '400: No affiliate attribution found for this customer in this program',
    '400: No partner-program relationship found for this customer',
    'no commission: Attribution window expired',
    'no commission: One-time commission already earned for this customer',
    'no commission: Recurring commission period of 1 months has ended',
    'no commission: The commission policy gives no commission for this sale',
    'txn accepted after an earlier rejection',
    'chunk with two sales for one customer',
    'conversions counted',
  ]) {
    t.ok(seen.get(k), `exercised: ${k}`);
  }
});

t.test('applyBatch waits for the customer of a click id minted moments ago, as apply does', async (t) => {
  // The wait is the applier's prepare, run before the transaction; apply and applyBatch then find the click.
  const program = await createProgram(sql, { cookieWindowDays: 30 });
  const link = await createLink(sql, program.id);
  const applier = createSaleApplier({ recentClickWaitMs: 2000, kafkaPrefix: 'test.' });
  if (typeof applier.applyBatch !== 'function')
    return void t.fail('createSaleApplier().applyBatch is missing');
  const flake = new Snowflake(7);
  const key = `${run}-known`;
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, customer_status, customer_key)
    values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, 'lead', ${key})`;
  const attempt = async (label: string, batch: boolean): Promise<Applied[] | CarefulPassNeeded> => {
    // The click's customer row does not exist yet; another connection commits it ~300 ms into the chunk.
    const click = formatClickId(link.partnerProgramId, flake.next().id);
    const now = Date.now();
    const cmd = (i: number, txn: string, p: Partial<SaleCommand>) =>
      saleCmd({
        program_id: program.id,
        ts: now,
        request_id: `${run}-${label}-${i}`,
        transaction_id: txn,
        ...p,
      });
    const cmds = [
      cmd(0, `${run}-${label}-a`, { customer_key: key }),
      cmd(1, `${run}-${label}-b`, { click_id: click }),
      cmd(2, `${run}-${label}-a`, { customer_key: key }), // the first one's transaction_id: 409
    ];
    const late = sleep(300).then(
      () => sql`
        insert into customers (program_id, partner_id, partner_program_id, link_id, click_id, customer_status,
                               first_click_at, last_click_at)
        values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, ${click}, 'click',
                ${new Date(now)}, ${new Date(now)})`,
    );
    let result: Applied[] | CarefulPassNeeded | undefined;
    try {
      // The wait happens before the transaction, holding no lock (as the command handler calls it).
      await applier.prepare!(sql, cmds);
      await sql.begin(async (tx) => {
        const ctx = newCtx();
        result = await (batch ? applier.applyBatch!(tx, cmds, ctx) : sequential(applier)(tx, cmds, ctx));
        throw ROLLBACK;
      });
    } catch (err) {
      if (err instanceof CarefulPassNeeded) result = err;
      else if (err !== ROLLBACK) throw err;
    } finally {
      await late;
    }
    return result!;
  };
  const expectAnswers = (answers: Applied[], who: string) => {
    t.same(
      answers.map((a) => `${a.statusCode} ${typeof a.body.commission_id} ${a.effects?.length ?? 0}`),
      ['200 number 1', '200 number 1', '409 undefined 0'],
      `${who}: the recent click's sale waits for its customer and earns a commission`,
    );
  };
  const seq = await attempt('seq', false);
  if (seq instanceof CarefulPassNeeded) return void t.fail('apply never throws CarefulPassNeeded');
  expectAnswers(seq, 'apply');
  const batch = await attempt('batch', true);
  if (batch instanceof CarefulPassNeeded)
    t.pass(`applyBatch handed the chunk to the careful pass: ${batch.message}`);
  else expectAnswers(batch, 'applyBatch');
});

t.test('a click id claiming a future time is not waited for (it would hold the partition up)', async (t) => {
  const program = await createProgram(sql);
  const link = await createLink(sql, program.id);
  // Minted "in" a day's time; with a wait of ten minutes, waiting for it would time this test out.
  const future = new Snowflake(9, () => Date.now() + DAY).next().id;
  const cmds = [
    saleCmd({
      program_id: program.id,
      ts: Date.now(),
      request_id: `${run}-future`,
      transaction_id: `${run}-future`,
      click_id: formatClickId(link.partnerProgramId, future),
    }),
  ];
  const applier = createSaleApplier({ recentClickWaitMs: 600_000, kafkaPrefix: 'test.' });
  for (const [who, run] of [
    ['apply', sequential(applier)],
    ['applyBatch', applier.applyBatch!],
  ] as const) {
    let answers: Applied[] = [];
    await applier.prepare!(sql, cmds);
    await sql
      .begin(async (tx) => {
        answers = await run(tx, cmds, newCtx());
        throw ROLLBACK;
      })
      .catch((err: unknown) => {
        if (err !== ROLLBACK) throw err;
      });
    t.same(
      answers.map((a) => [a.statusCode, a.body.error]),
      [[400, 'Customer not found. Provide customer_key or click_id.']],
      `${who}: answered at once`,
    );
  }
});

t.test(
  'a transaction_id taken concurrently after the check: 409 for one careful command, else the careful pass',
  async (t) => {
    const program = await createProgram(sql);
    const link = await createLink(sql, program.id);
    const key = `${run}-concurrent`;
    await sql`
    insert into customers (program_id, partner_id, partner_program_id, link_id, customer_status, customer_key)
    values (${program.id}, ${link.partnerId}, ${link.partnerProgramId}, ${link.id}, 'lead', ${key})`;
    const applier = createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: 'test.' });
    const other = testSql(t);
    for (const careful of [true, false]) {
      const txn = `${run}-concurrent-${careful}`;
      const cmd = saleCmd({
        program_id: program.id,
        request_id: txn,
        transaction_id: txn,
        customer_key: key,
      });
      // A second connection holds the same transaction_id uncommitted: the applier's check misses it, its
      // insert waits on the unique index, and the rival commits once it waits.
      let commit!: () => void;
      const committed = new Promise<void>((r) => (commit = r));
      let held!: (pid: number) => void;
      const holding = new Promise<number>((r) => (held = r));
      const rival = other.begin(async (tx) => {
        await tx`
        insert into sales (request_id, program_id, transaction_id, amount_cents, currency, sale_type, sale_date)
        values (${`${txn}-rival`}, ${program.id}, ${txn}, 1, 'USD', 'payment', now())`;
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        held(me!.pid);
        await committed;
      });
      const rivalPid = await holding;
      const ctx: ApplyContext = { rollups: new RollupBuffer(), careful, memo: new Map() };
      const result = sql
        .begin((tx) => applier.apply(tx, cmd, ctx))
        .then(
          (a) => a,
          (err: unknown) => err,
        );
      await waitUntilBlocked(rivalPid);
      commit();
      await rival;
      const got = await result;
      if (careful) {
        t.match(got, { statusCode: 409, body: { error: DUPLICATE_SALE } }, 'careful: 409');
        const [n] = await sql`select count(*)::int as n from commissions c join sales s on s.id = c.sale_id
                            where s.transaction_id = ${txn}`;
        t.equal(n!.n, 0, 'careful: no commission');
      } else {
        t.type(got, CarefulPassNeeded, 'optimistic: handed to the careful pass');
      }
    }

    // Only a backend blocked by the rival's own backend counts: every test connection, of every file
    // sharing the database, is 'svc-test'.
    async function waitUntilBlocked(rivalPid: number): Promise<void> {
      for (let i = 0; i < 1200; i++) {
        const [w] = await other`
        select count(*)::int as n from pg_stat_activity
        where pg_blocking_pids(pid) @> array[${rivalPid}]::int[] and query like '%insert into sales%'`;
        if (w!.n > 0) return;
        await sleep(25);
      }
      throw new Error('the applier never waited on the rival insert');
    }
  },
);
