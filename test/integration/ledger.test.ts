// The balance ledger on the real database and broker: credits, the refund clamp (spec 3: at zero unless the
// commission was paid; a clamped deduction takes at most what its own commission holds), each entry_key applied
// once (in a chunk, across chunks, across concurrent transactions), balances equal to the sums of their
// ledger columns at all times, and the ledger and notification workers end to end through Kafka with
// duplicates and poison.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { Test } from 'tap';
import { createSql } from '../../shared/db/sql.ts';
import { createKafka, readTopic } from '../../shared/pipeline/kafka.ts';
import { topicName } from '../../shared/contracts/topics.ts';
import { createLogger } from '../../shared/logger.ts';
import type { LedgerEffect, NotificationEffect } from '../../shared/contracts/commands.ts';
import { createApplyLedgerStep } from '../../services/workers/ledger/apply.ts';
import { balanceDifferences, commissionsWithoutCredit } from '../../shared/ledger/check.ts';
import { createInsertNotificationsStep } from '../../services/workers/notifications/apply.ts';
import { createLink, createProgram, stackEnv, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { createCommissionsUncredited } from '../helpers/commissions.ts';

const sql = testSql(t);
const step = createApplyLedgerStep({ sql });
const run = randomBytes(4).toString('hex');
let seq = 0;
const newKey = (label: string) => `test:${run}:${label}:${++seq}`;

interface Fixture {
  programId: number;
  partnerId: number;
  partnerProgramId: number;
  commissionId: number;
}

/** A partner in a program (a new partner unless one is given) with one commission to hang entries on. */
async function fixture(programId: number, partnerId?: number): Promise<Fixture> {
  const link = await createLink(sql, programId, partnerId === undefined ? {} : { partnerId });
  const tx = `tx-${run}-${++seq}`;
  const [sale] = await sql<{ id: string }[]>`
    insert into sales (request_id, program_id, partner_id, partner_program_id, transaction_id, amount_cents,
                       currency, sale_type, is_test, sale_date)
    values (${`req-${tx}`}, ${programId}, ${link.partnerId}, ${link.partnerProgramId}, ${tx}, 10000, 'USD',
            'payment', false, now())
    returning id`;
  // Created by the lifecycle as the attribution worker creates it; its credit is left unapplied (the tests
  // hang the entries they apply on it).
  const { ids } = await createCommissionsUncredited(sql, [
    {
      sale_id: Number(sale!.id),
      program_id: programId,
      partner_id: link.partnerId,
      partner_program_id: link.partnerProgramId,
      customer_id: null,
      amount_cents: 3000,
      currency: 'USD',
      sale_ts: Date.now(),
      hold_days: 30,
    },
  ]);
  return {
    programId,
    partnerId: link.partnerId,
    partnerProgramId: link.partnerProgramId,
    commissionId: ids[0]!,
  };
}

function effect(
  f: Fixture,
  amountCents: number,
  opts: { clamp?: boolean; key?: string; kind?: LedgerEffect['kind'] } = {},
): LedgerEffect {
  return {
    topic: 'ledger',
    entry_key: opts.key ?? newKey('e'),
    kind: opts.kind ?? (amountCents >= 0 ? 'commission_created' : 'commission_refunded'),
    partner_id: f.partnerId,
    partner_program_id: f.partnerProgramId,
    commission_id: f.commissionId,
    amount_cents: amountCents,
    clamp_at_zero: opts.clamp ?? true,
  };
}

async function balances(f: Fixture): Promise<{ partner: number; program: number }> {
  const [r] = await sql<{ partner: string; program: string }[]>`
    select p.balance_cents as partner, pp.balance_cents as program
    from partners p join partner_programs pp on pp.partner_id = p.id
    where p.id = ${f.partnerId} and pp.id = ${f.partnerProgramId}`;
  return { partner: Number(r!.partner), program: Number(r!.program) };
}

async function entry(key: string) {
  const rows = await sql<{ requested: string; partner: string; program: string }[]>`
    select requested_cents as requested, partner_cents as partner, program_cents as program
    from ledger_entries where entry_key = ${key}`;
  return rows.map((r) => ({
    requested: Number(r.requested),
    partner: Number(r.partner),
    program: Number(r.program),
  }));
}

/** Every given partner's and partner-program's balance equals the sum of its ledger column. */
async function assertBalancesEqualSums(t: Test, fixtures: Fixture[]): Promise<void> {
  const partnerIds = [...new Set(fixtures.map((f) => f.partnerId))];
  const programIds = [...new Set(fixtures.map((f) => f.partnerProgramId))];
  const partners = await sql<{ id: string; balance: string; sum: string }[]>`
    select p.id, p.balance_cents as balance,
           (select coalesce(sum(partner_cents), 0) from ledger_entries e where e.partner_id = p.id)::text as sum
    from partners p where p.id = any(${partnerIds}::bigint[]) order by p.id`;
  const programs = await sql<{ id: string; balance: string; sum: string }[]>`
    select pp.id, pp.balance_cents as balance,
           (select coalesce(sum(program_cents), 0) from ledger_entries e
            where e.partner_program_id = pp.id)::text as sum
    from partner_programs pp where pp.id = any(${programIds}::bigint[]) order by pp.id`;
  t.equal(partners.length, partnerIds.length);
  t.equal(programs.length, programIds.length);
  t.same(
    partners.filter((r) => r.balance !== r.sum),
    [],
    'every partner balance equals the sum of its partner_cents',
  );
  t.same(
    programs.filter((r) => r.balance !== r.sum),
    [],
    'every partner-program balance equals the sum of its program_cents',
  );
}

/**
 * The balance rule, written independently of the step: the oracle for the random runs. `room` is what the
 * entry's commission holds (its credits less its deductions so far), which a clamped deduction stops at.
 */
function expectedMove(room: number, amount: number, clamp: boolean): number {
  if (amount >= 0 || !clamp) return amount;
  return Math.max(amount, -Math.max(room, 0));
}

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

t.test('a credit adds its full amount to both balances', async (t) => {
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  const e = effect(f, 1000);
  t.same(await step([e]), { applied: 1, duplicates: 0 });
  t.same(await balances(f), { partner: 1000, program: 1000 });
  t.same(await entry(e.entry_key), [{ requested: 1000, partner: 1000, program: 1000 }]);
  await assertBalancesEqualSums(t, [f]);
});

t.test('a deduction of an unpaid commission stops at zero', async (t) => {
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  await step([effect(f, 300)]);
  const deduct = effect(f, -500, { clamp: true });
  t.same(await step([deduct]), { applied: 1, duplicates: 0 });
  t.same(await balances(f), { partner: 0, program: 0 }, 'balance 300, deduct 500 → 0');
  t.same(await entry(deduct.entry_key), [{ requested: -500, partner: -300, program: -300 }]);
  const again = effect(f, -100, { clamp: true });
  await step([again]);
  t.same(await entry(again.entry_key), [{ requested: -100, partner: 0, program: 0 }], 'nothing from zero');
  t.same(await balances(f), { partner: 0, program: 0 });
  await assertBalancesEqualSums(t, [f]);
});

t.test('a deduction of a paid commission is applied in full and may go negative', async (t) => {
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  await step([effect(f, 300)]);
  const paid = effect(f, -500, { clamp: false, kind: 'commission_reversed' });
  await step([paid]);
  t.same(await balances(f), { partner: -200, program: -200 });
  t.same(await entry(paid.entry_key), [{ requested: -500, partner: -500, program: -500 }]);
  // A clamped deduction takes nothing from a negative balance (it does not push it further down).
  const unpaid = effect(f, -100, { clamp: true });
  await step([unpaid]);
  t.same(await entry(unpaid.entry_key), [{ requested: -100, partner: 0, program: 0 }]);
  t.same(await balances(f), { partner: -200, program: -200 });
  // Later credits pay the negative balance back first.
  await step([effect(f, 250)]);
  t.same(await balances(f), { partner: 50, program: 50 });
  await assertBalancesEqualSums(t, [f]);
});

t.test('the same entry_key is applied once, in one chunk or in two', async (t) => {
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  const e = effect(f, 700);
  t.same(await step([e, { ...e }, e]), { applied: 1, duplicates: 2 }, 'three copies in one chunk');
  t.same(await step([e]), { applied: 0, duplicates: 1 }, 'a later chunk');
  const other = effect(f, 50);
  t.same(await step([e, other, other]), { applied: 1, duplicates: 2 }, 'mixed with a new entry');
  t.same(await balances(f), { partner: 750, program: 750 });
  const [n] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_entries where entry_key = any(${[e.entry_key, other.entry_key]})`;
  t.equal(n!.n, 2);
  // A clamped deduction redelivered after the balance changed must not be recomputed either.
  const deduct = effect(f, -1000, { clamp: true });
  await step([deduct]);
  await step([effect(f, 400)]);
  t.same(await step([deduct]), { applied: 0, duplicates: 1 });
  t.same(await balances(f), { partner: 400, program: 400 });
  await assertBalancesEqualSums(t, [f]);
});

t.test(
  'a clamped deduction takes at most what its own commission holds, from both balances alike',
  async (t) => {
    const programA = await createProgram(sql);
    const programB = await createProgram(sql);
    const a = await fixture(programA.id);
    const b = await fixture(programB.id, a.partnerId);
    await step([effect(a, 1000), effect(b, 500)]);
    t.same(await balances(a), { partner: 1500, program: 1000 });
    t.same(await balances(b), { partner: 1500, program: 500 });

    // Commission b holds 500: the deduction of 800 stops there, in the partner balance too.
    const d1 = effect(b, -800, { clamp: true });
    await step([d1]);
    t.same(await entry(d1.entry_key), [{ requested: -800, partner: -500, program: -500 }]);
    t.same(await balances(b), { partner: 1000, program: 0 });

    // A paid reversal on A takes program A below zero: a clawback the partner owes.
    await step([effect(a, -1200, { clamp: false })]);
    t.same(await balances(a), { partner: -200, program: -200 });

    // A new commission c on program A: its refund takes back all of c, and leaves the clawback owed. (A
    // clamp at the balance would have stopped at 100 and forgiven 200 of what the partner owes.)
    const c = await fixture(programA.id, a.partnerId);
    t.equal(c.partnerProgramId, a.partnerProgramId);
    await step([effect(c, 300)]);
    t.same(await balances(c), { partner: 100, program: 100 });
    const d2 = effect(c, -300, { clamp: true });
    await step([d2]);
    t.same(await entry(d2.entry_key), [{ requested: -300, partner: -300, program: -300 }]);
    t.same(await balances(c), { partner: -200, program: -200 });

    // Nothing more from c, which holds nothing now, whatever the balances hold.
    await step([effect(b, 300)]);
    const d3 = effect(c, -50, { clamp: true });
    await step([d3]);
    t.same(await entry(d3.entry_key), [{ requested: -50, partner: 0, program: 0 }]);
    t.same(await balances(b), { partner: 100, program: 300 });
    await assertBalancesEqualSums(t, [a, b, c]);
  },
);

t.test('entries within one chunk see the balances left by the entries before them', async (t) => {
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  const chunk = [
    effect(f, 100),
    effect(f, -300),
    effect(f, 50),
    effect(f, -20),
    effect(f, -100, { clamp: false }),
  ];
  t.same(await step(chunk), { applied: 5, duplicates: 0 });
  const got = await Promise.all(chunk.map((e) => entry(e.entry_key)));
  t.same(
    got.map((r) => r[0]!.partner),
    [100, -100, 50, -20, -100],
  );
  t.same(await balances(f), { partner: -70, program: -70 });
});

t.test('a random mixed run: balances follow the rule and equal the sums of their entries', async (t) => {
  const seed = Date.now() % 1_000_000;
  t.comment(`seed ${seed}`);
  const rnd = prng(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const programA = await createProgram(sql);
  const programB = await createProgram(sql);
  const fixtures: Fixture[] = [];
  for (let i = 0; i < 4; i++) {
    const f = await fixture(programA.id);
    fixtures.push(f);
    if (i < 2) fixtures.push(await fixture(programB.id, f.partnerId));
  }

  const effects: LedgerEffect[] = [];
  for (let i = 0; i < 200; i++) {
    if (effects.length > 0 && rnd() < 0.1) {
      effects.push({ ...pick(effects) }); // a redelivery
      continue;
    }
    const credit = rnd() < 0.55;
    const amount = credit ? 1 + Math.floor(rnd() * 2000) : -(1 + Math.floor(rnd() * 3000));
    effects.push(effect(pick(fixtures), amount, { clamp: rnd() < 0.7 }));
  }

  // The oracle: apply in order, first occurrence of a key only.
  const partnerBal = new Map<number, number>();
  const programBal = new Map<number, number>();
  const room = new Map<number, number>();
  const expected = new Map<string, { partner: number; program: number }>();
  for (const e of effects) {
    if (expected.has(e.entry_key)) continue;
    const pb = partnerBal.get(e.partner_id) ?? 0;
    const gb = programBal.get(e.partner_program_id) ?? 0;
    const r = room.get(e.commission_id!) ?? 0;
    const move = expectedMove(r, e.amount_cents, e.clamp_at_zero);
    partnerBal.set(e.partner_id, pb + move);
    programBal.set(e.partner_program_id, gb + move);
    room.set(e.commission_id!, r + move);
    expected.set(e.entry_key, { partner: move, program: move });
  }

  let applied = 0;
  let duplicates = 0;
  for (let i = 0; i < effects.length;) {
    const size = 1 + Math.floor(rnd() * 30);
    const r = await step(effects.slice(i, i + size));
    applied += r.applied;
    duplicates += r.duplicates;
    i += size;
  }
  t.equal(applied, expected.size, 'each distinct key applied once');
  t.equal(duplicates, effects.length - expected.size);

  const rows = await sql<{ entry_key: string; partner: string; program: string }[]>`
    select entry_key, partner_cents as partner, program_cents as program from ledger_entries
    where entry_key = any(${[...expected.keys()]})`;
  t.equal(rows.length, expected.size);
  const wrong = rows.filter((r) => {
    const x = expected.get(r.entry_key)!;
    return Number(r.partner) !== x.partner || Number(r.program) !== x.program;
  });
  t.same(wrong, [], 'every entry moved the balances as the rule says');
  for (const f of fixtures) {
    t.same(
      await balances(f),
      { partner: partnerBal.get(f.partnerId) ?? 0, program: programBal.get(f.partnerProgramId) ?? 0 },
      `partner ${f.partnerId} / partner-program ${f.partnerProgramId}`,
    );
  }
  await assertBalancesEqualSums(t, fixtures);
});

t.test(
  "the ledger's check names a commission without its credit and a balance that is not its entries",
  async (t) => {
    const program = await createProgram(sql);
    const f = await fixture(program.id);
    t.same(
      (await commissionsWithoutCredit(sql, program.id)).map((r) => Number(r.id)),
      [f.commissionId],
      'a commission before its credit',
    );
    await step([effect(f, 3000, { kind: 'commission_created' })]);
    t.same(await commissionsWithoutCredit(sql, program.id), [], 'credited');
    t.same(await balanceDifferences(sql, program.id), [], 'the balances are the sums of their entries');

    // Written behind the ledger's back (no entry): the check names both balances.
    // world-by-hand: the corruption the ledger's check exists to find, which no lifecycle path makes
    await sql`update partners set balance_cents = balance_cents + 1 where id = ${f.partnerId}`;
    await sql`update partner_programs set balance_cents = balance_cents - 2 where id = ${f.partnerProgramId}`;
    t.same(await balanceDifferences(sql, program.id), [
      `partner ${f.partnerId}: balance 3001, ledger 3000`,
      `partner-program ${f.partnerProgramId}: balance 2998, ledger 3000`,
    ]);
    // world-by-hand: the same corruption undone
    await sql`update partners set balance_cents = balance_cents - 1 where id = ${f.partnerId}`;
    await sql`update partner_programs set balance_cents = balance_cents + 2 where id = ${f.partnerProgramId}`;
    t.same(await balanceDifferences(sql, program.id), [], 'put back');
  },
);

t.test('concurrent transactions over the same partners: no deadlock, each key once', async (t) => {
  const seed = (Date.now() + 1) % 1_000_000;
  t.comment(`seed ${seed}`);
  const rnd = prng(seed);
  const pool = createSql(stackEnv().DATABASE_URL, 12, 'svc-test-ledger');
  t.teardown(() => pool.end({ timeout: 5 }));
  const concurrentStep = createApplyLedgerStep({ sql: pool });
  const programA = await createProgram(sql);
  const programB = await createProgram(sql);
  const fixtures: Fixture[] = [];
  for (let i = 0; i < 4; i++) {
    const f = await fixture(programA.id);
    fixtures.push(f, await fixture(programB.id, f.partnerId));
  }
  await step(fixtures.map((f) => effect(f, 2000)));

  const effects = Array.from({ length: 160 }, () => {
    const f = fixtures[Math.floor(rnd() * fixtures.length)]!;
    const credit = rnd() < 0.4;
    return effect(f, credit ? 1 + Math.floor(rnd() * 1500) : -(1 + Math.floor(rnd() * 1500)), {
      clamp: rnd() < 0.8,
    });
  });
  // Eight workers, each with 60 effects drawn from the same 160 (so keys overlap across them), in its own
  // order, applied as chunks of 15: many transactions locking overlapping sets of rows at once.
  const workers = Array.from({ length: 8 }, () => {
    const mine = [...effects].sort(() => rnd() - 0.5).slice(0, 60);
    return async () => {
      let applied = 0;
      for (let i = 0; i < mine.length; i += 15)
        applied += (await concurrentStep(mine.slice(i, i + 15))).applied;
      return { applied, keys: mine.map((e) => e.entry_key) };
    };
  });
  const results = await Promise.all(workers.map((w) => w()));
  const used = new Set(results.flatMap((r) => r.keys));
  t.equal(
    results.reduce((a, r) => a + r.applied, 0),
    used.size,
    'the applied counts add up to the distinct keys',
  );
  const [n] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_entries where entry_key = any(${effects.map((e) => e.entry_key)})`;
  t.equal(n!.n, used.size, 'one ledger entry per distinct key');

  // Entries of one partner (and of one partner-program) are written under its row lock, so their id order
  // is the order in which they were applied: replaying them through the rule must give every entry's
  // movement and the final balances, whatever the interleaving was.
  const rows = await sql<
    {
      entry_key: string;
      partner_id: string;
      partner_program_id: string;
      commission_id: string;
      requested: string;
      partner: string;
      program: string;
    }[]
  >`
    select entry_key, partner_id, partner_program_id, commission_id, requested_cents as requested,
           partner_cents as partner, program_cents as program
    from ledger_entries where partner_id = any(${fixtures.map((f) => f.partnerId)}::bigint[]) order by id`;
  const clampOf = new Map(effects.map((e) => [e.entry_key, e.clamp_at_zero]));
  const partnerBal = new Map<string, number>();
  const programBal = new Map<string, number>();
  const room = new Map<string, number>();
  const wrong: string[] = [];
  for (const r of rows) {
    const clamp = clampOf.get(r.entry_key) ?? true;
    const pb = partnerBal.get(r.partner_id) ?? 0;
    const gb = programBal.get(r.partner_program_id) ?? 0;
    const cr = room.get(r.commission_id) ?? 0;
    const move = expectedMove(cr, Number(r.requested), clamp);
    if (move !== Number(r.partner) || move !== Number(r.program)) {
      wrong.push(`${r.entry_key}: ${r.partner}/${r.program}, expected ${move}/${move}`);
    }
    partnerBal.set(r.partner_id, pb + move);
    programBal.set(r.partner_program_id, gb + move);
    room.set(r.commission_id, cr + move);
  }
  t.same(wrong, [], 'replayed in id order, every entry moved the balances as the rule says');
  for (const f of fixtures) {
    t.same(await balances(f), {
      partner: partnerBal.get(String(f.partnerId)),
      program: programBal.get(String(f.partnerProgramId)),
    });
  }
  await assertBalancesEqualSums(t, fixtures);
});

t.test('the notification step stores each notification_key once', async (t) => {
  const insert = createInsertNotificationsStep({
    sql,
    cfg: { kafkaPrefix: 'ledger-test.', publicUrl: 'http://127.0.0.1:1' },
  });
  const program = await createProgram(sql);
  const f = await fixture(program.id);
  const n = (key: string): NotificationEffect => ({
    topic: 'notifications',
    notification_key: key,
    recipient_type: 'partner',
    partner_id: f.partnerId,
    workspace_id: null,
    program_id: program.id,
    kind: 'commission_created',
    title: 'New commission',
    body: 'You earned $30.00',
    data: { commission_id: f.commissionId },
  });
  const k1 = newKey('n');
  const k2 = newKey('n');
  t.same(await insert([n(k1), n(k1), n(k2)]), { inserted: 2, duplicates: 1, mailed: 0 });
  t.same(await insert([n(k1)]), { inserted: 0, duplicates: 1, mailed: 0 });
  const rows =
    await sql`select notification_key, data from notifications where notification_key = any(${[k1, k2]}) order by id`;
  t.equal(rows.length, 2);
  t.same(rows[0]!.data, { commission_id: f.commissionId });
});

t.test('end to end through Kafka: ledger and notification workers, duplicates and poison', async (t) => {
  const log = createLogger('test', 'warn');
  const kafka = createKafka(
    { kafkaBrokers: stackEnv().KAFKA_BROKERS.split(','), kafkaClientId: 'test' },
    log,
  );
  const svc = await startServices(t, ['ledger-worker', 'notification-worker']);
  const producer = kafka.producer();
  await producer.connect();
  t.teardown(() => producer.disconnect());
  const ledgerTopic = topicName(svc.prefix, 'ledger');
  const notificationsTopic = topicName(svc.prefix, 'notifications');

  const programA = await createProgram(sql);
  const programB = await createProgram(sql);
  const a = await fixture(programA.id);
  const b = await fixture(programB.id, a.partnerId);
  const stranger = await fixture(programB.id);
  const credit = effect(a, 1000);
  const deduct = effect(a, -1500, { clamp: true });
  const sentinel = effect(b, 200);
  const mismatched = { ...effect(a, 999), partner_program_id: stranger.partnerProgramId };
  const wrongTopic = {
    topic: 'notifications',
    notification_key: 'x',
    recipient_type: 'partner',
    program_id: 1,
    kind: 'k',
    title: 't',
    body: 'b',
  };
  const json = (v: unknown) => JSON.stringify(v);
  // One partition, in order: the clamp must see the credit first; the poison must not stop the partition.
  await producer.send({
    topic: ledgerTopic,
    messages: [
      { key: 'lp1', value: '{not json' },
      { key: String(a.partnerId), value: json(credit) },
      { key: String(a.partnerId), value: json(credit) },
      { key: 'lp2', value: json(wrongTopic) },
      { key: String(a.partnerId), value: json(deduct) },
      { key: 'lp3', value: json(mismatched) },
    ].map((m) => ({ ...m, partition: 0 })),
  });
  // Redeliveries in later sends, then the sentinel.
  await producer.send({ topic: ledgerTopic, messages: [{ key: 'x', value: json(credit), partition: 1 }] });
  await producer.send({ topic: ledgerTopic, messages: [{ key: 'x', value: json(deduct), partition: 0 }] });
  await producer.send({
    topic: ledgerTopic,
    messages: [{ key: String(b.partnerId), value: json(sentinel), partition: 0 }],
  });

  const [ws] = await sql<
    { workspace_id: string }[]
  >`select workspace_id from programs where id = ${programA.id}`;
  const note = (key: string, over: Partial<NotificationEffect> = {}): NotificationEffect => ({
    topic: 'notifications',
    notification_key: key,
    recipient_type: 'partner',
    partner_id: a.partnerId,
    workspace_id: null,
    program_id: programA.id,
    kind: 'commission_created',
    title: 'New commission',
    body: 'You earned $10.00',
    data: { entry_key: credit.entry_key },
    ...over,
  });
  const n1 = newKey('n');
  const n2 = newKey('n');
  const n3 = newKey('n');
  const n4 = newKey('n');
  await producer.send({
    topic: notificationsTopic,
    messages: [
      { key: n1, value: json(note(n1)) },
      {
        key: n2,
        value: json(
          note(n2, {
            recipient_type: 'advertiser',
            partner_id: null,
            workspace_id: Number(ws!.workspace_id),
            kind: 'sale',
          }),
        ),
      },
      { key: n1, value: json(note(n1)) },
      { key: 'np1', value: json({ ...note(newKey('n')), recipient_type: 'nobody' }) },
      { key: n3, value: json(note(n3, { title: 'nul\u0000byte' })) },
      { key: n4, value: json(note(n4)) },
    ].map((m) => ({ ...m, partition: 0 })),
  });
  await producer.send({
    topic: notificationsTopic,
    messages: [{ key: n1, value: json(note(n1)), partition: 2 }],
  });

  await waitFor('ledger sentinel applied', async () => (await entry(sentinel.entry_key)).length === 1);
  const ledgerDead = await waitFor('ledger dead letters', async () => {
    const r = await sql<{ step: string; reason: string; payload: Buffer }[]>`
      select step, reason, payload from dead_letters where source_topic = ${ledgerTopic} order by source_offset`;
    return r.length === 3 ? r : null;
  });
  t.same(
    ledgerDead.map((d) => [d.step, d.reason]),
    [
      ['parse', 'not JSON'],
      ['parse', 'expected a ledger effect, got notifications'],
      [
        'apply',
        `partner_program ${stranger.partnerProgramId} belongs to partner ${stranger.partnerId}, not ${a.partnerId}`,
      ],
    ],
  );
  t.equal(ledgerDead[0]!.payload.toString(), '{not json', 'original bytes kept');
  t.same(await entry(credit.entry_key), [{ requested: 1000, partner: 1000, program: 1000 }]);
  t.same(await entry(deduct.entry_key), [{ requested: -1500, partner: -1000, program: -1000 }]);
  t.same(await balances(a), { partner: 200, program: 0 });
  t.same(await balances(b), { partner: 200, program: 200 });
  t.same(await balances(stranger), { partner: 0, program: 0 }, 'the mismatched entry touched nothing');
  await assertBalancesEqualSums(t, [a, b, stranger]);

  await waitFor(
    'notification sentinel stored',
    async () => (await sql`select 1 from notifications where notification_key = ${n4}`).length === 1,
  );
  const notesDead = await waitFor('notification dead letters', async () => {
    const r = await sql<{ step: string; reason: string }[]>`
      select step, reason from dead_letters where source_topic = ${notificationsTopic} order by source_offset`;
    return r.length === 2 ? r : null;
  });
  t.same(notesDead[0], { step: 'parse', reason: 'bad recipient_type' });
  t.equal(notesDead[1]!.step, 'apply', 'a NUL byte is rejected by Postgres and dead-lettered alone');
  const notes = await sql<
    { notification_key: string; recipient_type: string; workspace_id: string | null }[]
  >`
    select notification_key, recipient_type, workspace_id from notifications
    where notification_key = any(${[n1, n2, n3, n4]}) order by id`;
  t.same(
    notes.map((r) => r.notification_key),
    [n1, n2, n4],
    'each notification once; the poison none',
  );
  t.equal(notes[1]!.workspace_id, ws!.workspace_id);

  // The dead-letter topic carries the same five, with their reasons in the headers.
  const seen: string[] = [];
  const reader = await readTopic(
    kafka,
    { topic: topicName(svc.prefix, 'deadLetter'), groupId: `${svc.prefix}dlq-reader` },
    (m) => {
      seen.push(`${m.headers!['dlq-source-topic']!.toString()} ${m.headers!['dlq-step']!.toString()}`);
    },
  );
  await waitFor('5 messages on the dead-letter topic', async () => seen.length >= 5, 30_000);
  await reader.close();
  t.same(seen.sort(), [
    `${ledgerTopic} apply`,
    `${ledgerTopic} parse`,
    `${ledgerTopic} parse`,
    `${notificationsTopic} apply`,
    `${notificationsTopic} parse`,
  ]);
});
