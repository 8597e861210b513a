// An import survives the crash of its worker (docs/importing.md "Running: one page per command"), reached by
// construction, never by a pause: (1) the worker kills itself (SIGKILL) right after a page's transaction
// committed and before its Kafka offset did (IMPORT_CRASH_AFTER_SEQ): the command comes again to the new
// worker, is stale, and the import goes on from the next page; (2) the worker is killed while the source
// holds its request for a page: nothing of that page was written, the new worker reads it again. Either way
// the import completes with every row once: partners, links, codes, customers, commissions, sales and
// ledger entries, its counts equal to the rows, the ledger equal to the balances.
import t from 'tap';
import type { Test } from 'tap';
import { randomBytes } from 'node:crypto';
import { startServices, testSql, waitFor } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { apiProgram } from '../helpers/partners.ts';
import { assertMoney } from '../helpers/money.ts';
import { TEST_IMPORT_KEY, finished, postImport } from '../helpers/imports.ts';
import type { Import } from '../helpers/imports.ts';
import { rewardfulFixture, startRewardful } from '../../scripts/lib/seed/source-doubles.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'outbox-relay'], {
  IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
  IMPORT_RATE_LIMIT: '1000/1s',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  OUTBOX_POLL_MS: '50',
});
const owner = await signup(svc);
const SECRET = `rw_${randomBytes(4).toString('hex')}`;

/** A program and a Rewardful account of 250 affiliates and 400 commissions: 14 pages of 100. */
async function setUp() {
  const program = await apiProgram(svc, owner);
  const data = rewardfulFixture({ affiliates: 250, commissions: 400, tag: randomBytes(3).toString('hex') });
  const double = await startRewardful(data, SECRET, { limit: null });
  t.teardown(() => double.close());
  return { program, double };
}

/** Every row once, the counts equal to the rows, the ledger equal to the balances. */
async function assertOnce(t: Test, programId: number, done: Import) {
  t.equal(done.status, 'completed', done.error ?? '');
  const [n] = await sql<Record<string, number>[]>`
    select (select count(*)::int from partner_programs where program_id = ${programId}) as partners,
           (select count(*)::int from referral_links where program_id = ${programId}) as links,
           (select count(*)::int from partner_codes where program_id = ${programId}) as codes,
           (select count(*)::int from customers where program_id = ${programId}) as customers,
           (select count(*)::int from commissions where program_id = ${programId}) as commissions,
           (select count(*)::int from sales where program_id = ${programId} and import_id is not null) as sales,
           (select count(*)::int from ledger_entries e join commissions c on c.id = e.commission_id
            where c.program_id = ${programId} and e.kind = 'commission_created') as credits`;
  t.same(n, {
    partners: 250,
    links: 250,
    codes: 250,
    customers: 250,
    commissions: 400,
    sales: 400,
    credits: 400,
  });
  for (const k of ['partners', 'links', 'codes', 'customers', 'commissions'])
    t.same(
      done.counts[k],
      { created: n![k], updated: 0, skipped: 0, failed: 0 },
      `${k}: each page applied once`,
    );
  const pps = await sql<{ partner_id: string; id: string }[]>`
    select partner_id, id from partner_programs where program_id = ${programId}`;
  await assertMoney(
    t,
    sql,
    programId,
    pps.map((p) => ({ partnerId: Number(p.partner_id), partnerProgramId: Number(p.id) })),
  );
}

t.test(
  'a crash after a page committed: the command comes again, stale, and the import goes on',
  async (t) => {
    svc.env.IMPORT_CRASH_AFTER_SEQ = '2';
    const worker = await svc.start('import-worker');
    const { program, double } = await setUp();
    const r = await postImport(svc, owner, program.id, {
      source: 'rewardful',
      credentials: { api_secret: SECRET },
      options: { api_base_url: double.url },
    });
    const id = (r.body.data as Import).id;
    const code = await worker.exited;
    t.equal(code, null, 'the worker died (SIGKILL)');
    const [at] = await sql<
      { seq: number; status: string }[]
    >`select seq, status from imports where id = ${id}`;
    t.same(at, { seq: 3, status: 'running' }, 'its page 2 was committed, the next not started');
    delete svc.env.IMPORT_CRASH_AFTER_SEQ;
    await svc.start('import-worker');
    await assertOnce(t, program.id, await finished(svc, owner, program.id, id));
  },
);

t.test('a kill while the source holds a page: the page is read again', async (t) => {
  const { program, double } = await setUp();
  const held = double.hold((path, q) => path === '/v1/commissions' && q.get('page') === '2');
  const r = await postImport(svc, owner, program.id, {
    source: 'rewardful',
    credentials: { api_secret: SECRET },
    options: { api_base_url: double.url },
  });
  const id = (r.body.data as Import).id;
  await waitFor('the second commissions page to be asked for', async () => held.waiting() > 0, 120_000);
  const [before] = await sql<{ seq: number }[]>`select seq from imports where id = ${id}`;
  await svc.kill('import-worker');
  held.release();
  const [still] = await sql<{ seq: number; n: number }[]>`
    select seq, (select count(*)::int from commissions where program_id = ${program.id}) as n
    from imports where id = ${id}`;
  t.same(still, { seq: before!.seq, n: 100 }, 'nothing of the held page was written');
  await svc.start('import-worker');
  await assertOnce(t, program.id, await finished(svc, owner, program.id, id));
  t.equal(
    double.requests.filter((q) => q.path === '/v1/commissions' && q.query.get('page') === '2').length,
    2,
    'the page was read again by the new worker',
  );
});
