// Tier rules (CONTRACT part four "Tiers"; docs/rewards.md) on the real stack: the ladder's API and its 400s;
// 20 concurrent sales crossing a threshold at the tenth, through the real path with two attribution workers,
// give exactly one move (one `partner.group_changed`, one notification, one mail) and exactly 10 commissions
// at each rate; a sale decided while another transaction holds the crossing waits for it and is priced by
// the new group (constructed with two transactions); carry_existing_customers false keeps old customers at
// the old rate; a locked partner does not move; a refund never moves a partner back; the customers metric
// counts each customer once; the portal shows the next rule's progress.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { spawnService } from '../../scripts/lib/stack/services.ts';
import type { ServiceProcess } from '../../scripts/lib/stack/services.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';
import { commissionsOf, createGroup, customerOf, trackSale } from '../helpers/rewards.ts';
import { postJson } from '../helpers/stack.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { deliverNotifications } from '../helpers/notifications.ts';
import { saleCommand } from '../../scripts/lib/bench/sale-command.ts';
import { createSaleApplier } from '../../services/workers/attribution/apply-sale.ts';
import type { ApplyContext } from '../../shared/pipeline/command-handler.ts';
import { RollupBuffer } from '../../shared/rollups/dal.ts';

const sql = testSql(t);
// No relay: the outbox rows of this file's prefix stay where the moves wrote them, to be counted, and the
// notifications are stored (and mailed) by the notification worker's own step (deliverNotifications).
const svc = await startServices(t, ['web', 'attribution-worker', 'reversal-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(5).toString('hex');
const owner = await signup(svc);
const own = bearer(owner.session);
await sql`insert into webhook_endpoints (workspace_id, url, secret)
          values (${owner.workspaceId}, 'https://hooks.example/tiers', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;

/** A program at 10% whose Gold group pays 30%, with `rule` from its default group to Gold. */
async function ladder(rule: Record<string, unknown>) {
  const program = await apiProgram(svc, owner, { commission: { type: 'percentage', percent: 10 } });
  const gold = await createGroup(svc, owner, program.id, {
    name: 'Gold',
    commission: { type: 'percentage', percent: 30 },
  });
  const [dflt] = await sql<{ id: string }[]>`
    select id from program_groups where program_id = ${program.id} and is_default`;
  const from = Number(dflt!.id);
  const r = await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/tier-rules`),
    [{ from_group_id: from, to_group_id: gold.id, metric: 'sales_cents', window: 'lifetime', ...rule }],
    own,
  );
  if (r.status !== 200) throw new Error(`tier rules: ${r.status} ${r.text}`);
  return { program, gold, from, rule: (r.body.data as { id: number }[])[0]! };
}

/**
 * The partner's figures as a sale from before left them (zero here): existing rows, so that concurrent sales
 * meet on their row locks, not on the insert of new ones.
 */
const figuresExist = (ppId: number) => sql`
  insert into partner_metrics (partner_program_id, period)
  values (${ppId}, '1970-01-01'), (${ppId}, date_trunc('month', now() at time zone 'UTC')::date)
  on conflict do nothing`;

const groupOf = async (ppId: number) =>
  Number(
    (await sql<{ group_id: string }[]>`select group_id from partner_programs where id = ${ppId}`)[0]!
      .group_id,
  );

/** Rows of this file's outbox: webhook events of `type`, notifications of `kind`, mails to `to`. */
async function outbox(
  topic: 'webhookEvents' | 'notifications' | 'mail',
  where: (p: Record<string, unknown>) => boolean,
) {
  const rows = await sql<{ payload: Record<string, unknown> }[]>`
    select payload from outbox where topic = ${outboxTopic(svc.prefix, topic)} order by id`;
  return rows.map((r) => r.payload).filter(where);
}

t.test('the ladder: bad input names the field and changes nothing', async (t) => {
  const { program, gold, from, rule } = await ladder({ threshold: 100_000 });
  const path = url(`/api/advertiser/affiliate-programs/${program.id}/tier-rules`);
  const other = await apiProgram(svc, owner);
  const theirs = await createGroup(svc, owner, other.id, { name: 'Theirs' });
  const good = {
    from_group_id: from,
    to_group_id: gold.id,
    metric: 'customers',
    window: 'calendar_month',
    threshold: 3,
  };
  const cases: [unknown, string][] = [
    [{ nope: 1 }, 'Request body must be a JSON array of at most 50 tier rules'],
    [[{ ...good, to_group_id: from }], 'tier_rules[0].to_group_id must differ from from_group_id'],
    [
      [good, { ...good, from_group_id: theirs.id }],
      'tier_rules[1].from_group_id must be the id of a group of this program',
    ],
    [
      [{ ...good, to_group_id: 999_999_999 }],
      'tier_rules[0].to_group_id must be the id of a group of this program',
    ],
    [
      [good, { ...good, from_group_id: gold.id, to_group_id: from }],
      `tier_rules form a cycle (groups ${from} → ${gold.id} → ${from}): a partner could move back and forth`,
    ],
    [[{ ...good, threshold: 0 }], 'tier_rules[0].threshold must be a positive integer'],
    [[{ ...good, threshold: -5 }], 'tier_rules[0].threshold must be a positive integer'],
    [
      [{ ...good, metric: 'clicks' }],
      'tier_rules[0].metric must be one of sales_cents, customers, commission_cents',
    ],
    [[{ ...good, window: 'week' }], 'tier_rules[0].window must be one of lifetime, calendar_month'],
    [[5], 'tier_rules[0] must be a JSON object'],
  ];
  for (const [body, error] of cases) {
    const r = await send('PUT', path, body, own);
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body));
  }
  const read = await getJson(path, own);
  t.same(read.body.data, [{ ...rule }], 'the ladder as it was');
  t.equal(
    (await getJson(path, bearer((await signup(svc)).session))).status,
    404,
    "another workspace's session",
  );
});

t.test('20 concurrent sales cross at the tenth: one move, 10 commissions at each rate', async (t) => {
  // A second attribution worker: the sales' partitions are shared by two processes deciding at once.
  const second: ServiceProcess = spawnService('attribution-worker', { env: svc.env, onLine: () => {} });
  t.teardown(() => second.stop());
  await waitFor(
    'both attribution workers owning partitions',
    async () => {
      const [r] = await sql<{ n: number }[]>`
        select count(*)::int as n from consumer_heartbeats
        where group_id = ${`${svc.prefix}attribution-worker`} and cardinality(partitions) > 0
          and beat_at > now() - interval '2 seconds'`;
      return r!.n === 2;
    },
    180_000,
    200,
  );
  const { program, gold, from, rule } = await ladder({ threshold: 10 * 10_000 });
  const partner = await invitedPartner(svc, owner, program.id);
  await figuresExist(partner.ppId);
  const customers = await Promise.all(Array.from({ length: 20 }, () => customerOf(sql, program.id, partner)));
  const answers = await Promise.all(customers.map((c) => trackSale(svc, program.token, { customer_key: c })));
  t.same(
    answers.map((a) => a.status),
    Array(20).fill(200),
  );
  const all = await commissionsOf(svc, owner, program.id);
  const mine = answers.map((a) => all.get(a.body.commission_id as number)!);
  t.same(
    mine.map((c) => c.amount_cents).sort(),
    [...Array(10).fill(1000), ...Array(10).fill(3000)].sort(),
    '10 at the old rate, 10 at the new',
  );
  t.equal(mine.filter((c) => c.group_id === gold.id).length, 10, '10 priced by Gold');
  t.equal(mine.filter((c) => c.group_id === from).length, 10, '10 by the group it left');
  t.equal(await groupOf(partner.ppId), gold.id, 'moved');
  const changes = await sql`select * from partner_group_changes where partner_program_id = ${partner.ppId}`;
  t.equal(changes.length, 1, 'one move');
  const events = await outbox(
    'webhookEvents',
    (p) =>
      p.type === 'partner.group_changed' &&
      (p.data as { partner_program_id: number }).partner_program_id === partner.ppId,
  );
  t.equal(events.length, 1, 'one partner.group_changed');
  t.match(events[0]!.data, {
    partner_id: partner.partnerId,
    program_id: program.id,
    from_group_id: from,
    to_group_id: gold.id,
    reason: 'tier_rule',
    rule_id: rule.id,
  });
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const notices = await sql<{ title: string }[]>`
    select title from notifications where partner_id = ${partner.partnerId} and kind = 'group_changed'`;
  t.same(
    notices.map((n) => n.title),
    ['You moved up to Gold'],
    'one notification',
  );
  const mails = await outbox('mail', (p) => p.to === partner.email);
  t.same(
    mails.filter((m) => (m.data as { title: string }).title === 'You moved up to Gold').length,
    1,
    'one mail',
  );
  // The portal: in Gold now, no rule up from it.
  const portal = await getJson(url('/api/partner/programs'), bearer(partner.session));
  t.match(
    (portal.body.data as Record<string, unknown>[]).find(
      (p) => (p.program as { id: number }).id === program.id,
    ),
    {
      group: { id: gold.id, name: 'Gold' },
      tier: null,
      commission: { percent: 30 },
    },
  );
});

t.test('a sale decided while another holds the crossing waits for it, and gets the new rate', async (t) => {
  const { program, gold, from } = await ladder({ threshold: 3 * 10_000 });
  const partner = await addPartner(svc, owner, program.id);
  await figuresExist(partner.ppId);
  const keys = await Promise.all(Array.from({ length: 4 }, () => customerOf(sql, program.id, partner)));
  const applier = createSaleApplier({ recentClickWaitMs: 0, kafkaPrefix: svc.prefix });
  const ctx = (): ApplyContext => ({ rollups: new RollupBuffer(), careful: false, memo: new Map() });
  const cmd = (key: string) => {
    const txn = `held-${uniq()}`;
    return saleCommand({
      program_id: program.id,
      request_id: txn,
      transaction_id: txn,
      customer_key: key,
      amount_cents: 10_000,
      currency: 'USD',
      ts: Date.now(),
    });
  };
  const other = testSql(t);
  let commit!: () => void;
  const committed = new Promise<void>((r) => (commit = r));
  let held!: (pid: number) => void;
  const holding = new Promise<number>((r) => (held = r));
  // T1 decides the first three sales (the third crosses) and holds its transaction open.
  const first = other.begin(async (tx) => {
    const answers = await applier.applyBatch!(tx, keys.slice(0, 3).map(cmd), ctx());
    const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
    held(me!.pid);
    await committed;
    return answers;
  });
  const pid = await holding;
  // T2, the fourth sale, must wait for T1's figures, then read the move.
  const second = sql.begin((tx) => applier.applyBatch!(tx, [cmd(keys[3]!)], ctx()));
  await waitFor(
    'the fourth sale blocked by the crossing one',
    async () => {
      const [w] = await other`
        select count(*)::int as n from pg_stat_activity where pg_blocking_pids(pid) @> array[${pid}]::int[]`;
      return w!.n > 0;
    },
    30_000,
    25,
  );
  commit();
  const [a, b] = await Promise.all([first, second]);
  const ids = [...a, ...b].map((x) => x.body.commission_id as number);
  const rows = await sql<{ id: string; amount_cents: string; group_id: string }[]>`
    select id, amount_cents, group_id from commissions where id = any(${ids}::bigint[]) order by id`;
  t.same(
    rows.map((r) => [Number(r.amount_cents), Number(r.group_id)]),
    [
      [1000, from],
      [1000, from],
      [1000, from],
      [3000, gold.id],
    ],
    'the crossing sale at the old rate, the one after it at the new',
  );
});

t.test('carry_existing_customers false: customers from before keep the old rate', async (t) => {
  const { program, gold } = await ladder({ threshold: 2 * 10_000, carry_existing_customers: false });
  const partner = await addPartner(svc, owner, program.id);
  const old = await customerOf(sql, program.id, partner);
  const other = await customerOf(sql, program.id, partner);
  const s1 = await trackSale(svc, program.token, { customer_key: old });
  const s2 = await trackSale(svc, program.token, { customer_key: other }); // crosses
  t.equal(await groupOf(partner.ppId), gold.id);
  const fresh = await customerOf(sql, program.id, partner);
  const s3 = await trackSale(svc, program.token, { customer_key: old });
  const s4 = await trackSale(svc, program.token, { customer_key: fresh });
  const all = await commissionsOf(svc, owner, program.id);
  const amount = (s: { body: Record<string, unknown> }) =>
    all.get(s.body.commission_id as number)!.amount_cents;
  t.same(
    [amount(s1), amount(s2), amount(s3), amount(s4)],
    [1000, 1000, 1000, 3000],
    'old customer 10%, new 30%',
  );
});

t.test('a locked partner does not move; a refund never moves a partner back', async (t) => {
  const { program, gold, from } = await ladder({ threshold: 2 * 10_000 });
  const locked = await addPartner(svc, owner, program.id);
  const r = await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/partners/${locked.partnerId}/group`),
    { group_id: from, locked: true },
    own,
  );
  t.equal(r.status, 200);
  for (let i = 0; i < 3; i++)
    await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, locked) });
  t.equal(await groupOf(locked.ppId), from, 'locked: still in its group');

  const mover = await addPartner(svc, owner, program.id);
  const txns = [`r1-${uniq()}`, `r2-${uniq()}`];
  for (const transaction_id of txns)
    await trackSale(svc, program.token, {
      customer_key: await customerOf(sql, program.id, mover),
      transaction_id,
    });
  t.equal(await groupOf(mover.ppId), gold.id, 'moved up');
  for (const transaction_id of txns) {
    const refund = await postJson(url('/api/v1/track/refund'), { transaction_id }, bearer(program.token));
    t.match(refund.body, { success: true });
  }
  // Refunded again: counted once.
  const again = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: txns[0] },
    bearer(program.token),
  );
  t.match(again.body, { status: 'skipped' });
  const [m] = await sql<{ sales_cents: string; commission_cents: string }[]>`
    select sales_cents::text, commission_cents::text from partner_metrics
    where partner_program_id = ${mover.ppId} and period = '1970-01-01'`;
  t.same([Number(m!.sales_cents), Number(m!.commission_cents)], [0, 0], 'the figures lost both sales, once');
  t.equal(await groupOf(mover.ppId), gold.id, 'still in Gold');
});

t.test('customers: each customer counts once; the portal shows the progress', async (t) => {
  const { program, gold } = await ladder({ metric: 'customers', window: 'calendar_month', threshold: 3 });
  const partner = await invitedPartner(svc, owner, program.id);
  const a = await customerOf(sql, program.id, partner);
  for (let i = 0; i < 4; i++) await trackSale(svc, program.token, { customer_key: a });
  await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, partner) });
  const portal = await getJson(url('/api/partner/programs'), bearer(partner.session));
  t.match(
    (portal.body.data as Record<string, unknown>[]).find(
      (p) => (p.program as { id: number }).id === program.id,
    ),
    {
      tier: {
        metric: 'customers',
        window: 'calendar_month',
        value: 2,
        threshold: 3,
        next_group_name: 'Gold',
      },
    },
  );
  t.not(await groupOf(partner.ppId), gold.id, 'two customers: not yet');
  await trackSale(svc, program.token, { customer_key: await customerOf(sql, program.id, partner) });
  t.equal(await groupOf(partner.ppId), gold.id, 'the third customer moves it');
});
