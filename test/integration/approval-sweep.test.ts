// The approval sweep under faults (CONTRACT part two: pending → approved within a minute of payable_at,
// unless held; one runner at a time whatever the number of replicas, surviving restarts, idempotent): many
// due commissions, the ledger worker killed with kill -9 while it approves them, a second replica started,
// the first restarted. Every due commission ends approved with exactly one `commission.updated` event; held
// and not-yet-due ones stay pending with none.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { spawnService } from '../../scripts/lib/stack/services.ts';
import { createLink, createProgram, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { createCommissions } from '../helpers/commissions.ts';

const DUE = 20_000;
const sql = testSql(t);
const svc = await startServices(t, [], { APPROVAL_SWEEP_MS: '100' });

t.test(
  'kill -9 mid-sweep and restart, with a second replica: nothing approved twice, nothing missed',
  async (t) => {
    const program = await createProgram(sql);
    // Webhook events are written only for a workspace with an enabled endpoint: this one has.
    await sql`insert into webhook_endpoints (workspace_id, url, secret)
      select workspace_id, 'https://hooks.example/sweep', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
      from programs where id = ${program.id}`;
    const link = await createLink(sql, program.id);
    const run = randomBytes(4).toString('hex');
    // Due commissions, plus some held for review and some still in their hold: those must not move. Sales of
    // two days ago; their commissions made by the lifecycle (`create`, as the attribution worker does): a hold
    // of one day (due a day ago), or of five for one in 110 (due in three days); one in 110 held for review by
    // the self-referral rule (its customer has the partner's email).
    const sales = await sql<{ id: string; g: number }[]>`
      insert into sales (request_id, program_id, partner_id, partner_program_id, transaction_id, amount_cents,
                         currency, sale_type, sale_date)
      select ${`sweep-${run}-`} || g, ${program.id}, ${link.partnerId}, ${link.partnerProgramId},
             ${`sweep-${run}-`} || g, 1000, 'USD', 'payment', now() - interval '2 days'
      from generate_series(1, ${DUE + 200}) g
      returning id, split_part(transaction_id, '-', 3)::int as g`;
    const heldGs = sales.filter((s) => s.g % 110 === 2).map((s) => s.g);
    const customers = await sql<{ id: string; g: number }[]>`
      insert into customers (program_id, partner_id, partner_program_id, customer_status, customer_key, email)
      select ${program.id}, pa.id, ${link.partnerProgramId}, 'lead', ${`sweep-${run}-`} || g, pa.email
      from partners pa, unnest(${heldGs}::int[]) g where pa.id = ${link.partnerId}
      returning id, split_part(customer_key, '-', 3)::int as g`;
    const customerOf = new Map(customers.map((c) => [c.g, Number(c.id)]));
    const twoDaysAgo = Date.now() - 2 * 86_400_000;
    await createCommissions(
      sql,
      sales.map((s) => ({
        sale_id: Number(s.id),
        program_id: program.id,
        partner_id: link.partnerId,
        partner_program_id: link.partnerProgramId,
        customer_id: customerOf.get(s.g) ?? null,
        amount_cents: 100,
        currency: 'USD',
        sale_ts: twoDaysAgo,
        hold_days: s.g % 110 === 1 ? 5 : 1,
      })),
      svc.prefix,
    );
    const [counts] = await sql<{ due: number; held: number; later: number }[]>`
    select count(*) filter (where review_reason is null and payable_at <= now())::int as due,
           count(*) filter (where review_reason is not null)::int as held,
           count(*) filter (where payable_at > now())::int as later
    from commissions where program_id = ${program.id}`;
    t.ok(
      counts!.held > 0 && counts!.later > 0,
      `${counts!.due} due, ${counts!.held} held, ${counts!.later} later`,
    );
    const approvedCount = async () =>
      Number(
        (
          await sql`select count(*) as n from commissions where program_id = ${program.id} and status = 'approved'`
        )[0]!.n,
      );

    await svc.start('ledger-worker');
    const atKill = await waitFor(
      'the sweep to be under way',
      async () => {
        const n = await approvedCount();
        return n > 0 ? n : null;
      },
      120_000,
      10,
    );
    await svc.kill('ledger-worker');
    const afterKill = await approvedCount();
    t.ok(afterKill < counts!.due, `killed mid-run: ${afterKill} of ${counts!.due} approved (seen ${atKill})`);

    // A second replica (its own process, the same deployment) and the first one restarted: both sweep.
    const second = spawnService('ledger-worker', { env: svc.env, onLine: () => {} });
    t.teardown(() => second.stop());
    await svc.start('ledger-worker');
    await waitFor(
      'every due commission approved',
      async () => (await approvedCount()) === counts!.due,
      300_000,
      200,
    );

    const [after] = await sql<{ approved: number; pending_held: number; pending_later: number }[]>`
    select count(*) filter (where status = 'approved')::int as approved,
           count(*) filter (where status = 'pending' and review_reason is not null)::int as pending_held,
           count(*) filter (where status = 'pending' and payable_at > now())::int as pending_later
    from commissions where program_id = ${program.id}`;
    t.same(
      after,
      { approved: counts!.due, pending_held: counts!.held, pending_later: counts!.later },
      'nothing missed, nothing extra',
    );

    // Events: one per approved commission, none for the others (every deployment's topic: see payouts-api).
    const events = await sql<{ id: string; n: number; statuses: string[] }[]>`
    select o.payload->'data'->>'id' as id, count(*)::int as n, array_agg(o.payload->'data'->>'status') as statuses
    from outbox o
    where o.topic like '%webhook-events' and o.payload->>'type' = 'commission.updated'
      and (o.payload->'data'->>'program_id')::bigint = ${program.id}
    group by 1`;
    t.equal(events.length, counts!.due, 'an event for every approved commission');
    t.same(
      events.filter((e) => e.n !== 1 || e.statuses[0] !== 'approved'),
      [],
      'exactly one commission.updated (approved) each: nothing approved twice',
    );
  },
);
