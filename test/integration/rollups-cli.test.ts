// npm run rollups: --check finds rollups that differ from the raw events (exit 1) and --rebuild repairs them
// (the demo's 30 days of traffic with its breakdown wiped and its customers' keys forgotten, as data from
// before migration 0014 looks); an interrupted rebuild (--max-days, and kill -9) resumes where it stopped.
import t from 'tap';
import { spawn } from 'node:child_process';
import { testSql, stackEnv, waitFor } from '../helpers/stack.ts';
import { seedFullDemo } from '../../scripts/lib/seed/seed.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { programDays } from '../../shared/rollups/rebuild.ts';

const sql = testSql(t);
const demo = await seedFullDemo(sql);
const P = demo.programId;

interface Run {
  code: number | null;
  out: string;
}
function rollups(args: string[], onLine?: (line: string, kill: () => void) => void): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/rollups.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...stackEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const kill = () => child.kill('SIGKILL');
    child.stdout.on('data', (b: Buffer) => {
      const text = b.toString();
      out += text;
      for (const line of text.split('\n')) if (line) onLine?.(line, kill);
    });
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

const forget = async () => {
  await sql`delete from program_daily_breakdown where program_id = ${P}`;
  await sql`delete from program_weekly_breakdown where program_id = ${P}`;
  await sql`update customers set attr_country = null, attr_device = null, attr_browser = null, attr_os = null,
                                 attr_referrer = null, attr_landing_page = null where program_id = ${P}`;
};
const breakdownRows = async () =>
  (
    await sql<{ n: number }[]>`select count(*)::int as n from program_daily_breakdown where program_id = ${P}`
  )[0]!.n;

t.test('--help, and usage errors exit 2', async (t) => {
  const help = await rollups(['--help']);
  t.equal(help.code, 0);
  t.match(help.out, /Usage: npm run rollups -- \(--rebuild \| --check/);
  t.equal((await rollups([])).code, 2, 'neither --rebuild nor --check');
  t.equal((await rollups(['--check', '--from', '2025-13-01'])).code, 2, 'a bad date');
  t.equal((await rollups(['--check', '--program', 'x'])).code, 2, 'a bad program id');
});

t.test('--check: the workers-kept demo is equal; a wiped breakdown is not (exit 1)', async (t) => {
  const ok = await rollups(['--check', '--program', String(P)]);
  t.equal(ok.code, 0, ok.out);
  t.match(ok.out, `program ${P}: equal`);
  await forget();
  const bad = await rollups(['--check', '--program', String(P)]);
  t.equal(bad.code, 1);
  t.match(bad.out, /differences/);
});

t.test('--rebuild in slices resumes after the last day done, then --check is equal', async (t) => {
  await forget();
  const first = await rollups(['--rebuild', '--program', String(P), '--max-days', '7']);
  t.equal(first.code, 0, first.out);
  t.match(first.out, /attributing-click keys filled on \d+ customers/);
  t.match(first.out, /stopped after 7 days/);
  const [run] = await sql<{ id: string; chunks: number; done_day: string }[]>`
    select id::text, chunks::int, done_day::text from rollup_rebuilds where finished_at is null order by id desc limit 1`;
  t.equal(run!.chunks, 7, 'seven days recorded');
  const second = await rollups(['--rebuild', '--check', '--program', String(P)]);
  t.equal(second.code, 0, second.out);
  t.match(second.out, `resuming rebuild #${run!.id} after program ${P}, day ${run!.done_day} (7 days done)`);
  const days = (await programDays(sql, P, { first: null, last: null })).length;
  t.match(second.out, `${days - 7} days to rebuild`, 'the remaining days, not all again');
  t.match(second.out, `finished: ${days} days`);
  t.match(second.out, `program ${P}: equal`);
});

t.test('a rebuild killed with -9 resumes and ends equal', async (t) => {
  await forget();
  let killed = false;
  const first = await rollups(['--rebuild', '--program', String(P)], (line, kill) => {
    if (!killed && /days to rebuild/.test(line)) {
      killed = true;
      kill();
    }
  });
  t.ok(killed, 'killed mid-run');
  t.not(first.code, 0);
  const again = await rollups(['--rebuild', '--check', '--program', String(P)]);
  t.equal(again.code, 0, again.out);
  t.match(again.out, /resuming rebuild #\d+/);
  t.match(again.out, `program ${P}: equal`);
  await waitFor('rows', async () => (await breakdownRows()) > 0);
  const restart = await rollups(['--rebuild', '--restart', '--program', String(P)]);
  t.match(restart.out, /rebuild #\d+ started/, '--restart: a new run');
});
