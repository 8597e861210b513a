// npm run rollups: rebuilds the dimensional rollup (program_daily_breakdown) from the raw events, resumably,
// and checks the rollups against the raw events. USAGE says how; this is the command line only: the SQL is
// in shared/rollups/{raw,check,rebuild}.ts, the rebuild's transactions in shared/rollups/operations.ts.
import { cli } from './lib/cli.ts';
import { checkProgram, describe } from '../shared/rollups/check.ts';
import type { Difference } from '../shared/rollups/check.ts';
import type { DayRange } from '../shared/rollups/raw.ts';
import {
  fillCustomerKeys,
  finishRebuildRun,
  openRebuildRun,
  programDays,
  programIds,
} from '../shared/rollups/rebuild.ts';
import { rebuildRunDay } from '../shared/rollups/operations.ts';
import type { RebuildRun } from '../shared/rollups/rebuild.ts';
import { loadConfig } from '../shared/config.ts';
import { createSql } from '../shared/db/sql.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';

const USAGE = `Usage: npm run rollups -- (--rebuild | --check | --rebuild --check) [options]

The dimensional daily rollup (program_daily_breakdown: clicks, leads, conversions, sales, revenue and
commission per partner, link, country, device, browser, OS, referrer host and landing page) is kept by the
workers as events arrive. This rebuilds it from the raw events, for data that existed before it (or to
repair it), and checks it.

  --rebuild           First fills the attributing-click keys of customers that have none (created before
                      migration 0014), then rewrites each program's days one (program, day) at a time, each
                      in its own transaction, in program then day order, printing its progress. Safe while
                      the workers run: a day's rewrite holds that day's program_daily_stats row, as every
                      worker does before it writes the day. Resumable: the last day done is recorded in the
                      same transaction (table rollup_rebuilds), and a --rebuild of the same scope after an
                      interruption (Ctrl-C, a crash) resumes after it.
  --check             Compares program_daily_stats and program_daily_breakdown with a plain SQL aggregate
                      over the raw events (click_events, lead_events, customers, sales, commissions), in
                      one snapshot per program: every key equal, \`other\` equal to the keys past the daily
                      cap, no more than the cap. Prints each difference; exit status 1 if there is any.
                      With --rebuild it runs after the rebuild.

Options:
  --program <ids>     only these programs (comma-separated ids; default: every program)
  --from <date>       only days from this UTC day (YYYY-MM-DD; default: the first)
  --to <date>         only days up to this UTC day (YYYY-MM-DD, inclusive; default: the last)
  --restart           with --rebuild: start over instead of resuming an unfinished run of the same scope
  --max-days <n>      with --rebuild: stop after n days (the next --rebuild resumes): a long rebuild in slices
  -h, --help          this text

Environment: DATABASE_URL (default: the Postgres of \`npm start\`). Migrations are applied first.
Exit status: 0, 1 when --check found a difference, 2 for a usage error.`;

const { values, int } = cli(USAGE, {
  rebuild: { type: 'boolean' },
  check: { type: 'boolean' },
  program: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  restart: { type: 'boolean' },
  'max-days': { type: 'string' },
});

function usageError(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;
const dayArg = (name: 'from' | 'to'): string | null => {
  const v = values[name] as string | undefined;
  if (v === undefined) return null;
  if (!DAY_RE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))
    usageError(`--${name} must be a date YYYY-MM-DD (got "${v}")`);
  return v;
};
if (!values.rebuild && !values.check) usageError('say --rebuild, --check or both');
const range: DayRange = { first: dayArg('from'), last: dayArg('to') };
if (range.first !== null && range.last !== null && range.first > range.last)
  usageError('--from must not be after --to');
let only: number[] | null = null;
if (values.program !== undefined) {
  only = (values.program as string).split(',').map((s) => Number(s.trim()));
  if (only.some((n) => !Number.isSafeInteger(n) || n <= 0))
    usageError(`--program must be program ids separated by commas (got "${values.program as string}")`);
  only.sort((a, b) => a - b);
}

const maxDays = int('max-days', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);

const cfg = loadConfig();
await migrate(cfg.databaseUrl, createLogger('rollups', 'warn'));
const sql = createSql(cfg.databaseUrl, 2, 'svc-rollups');
let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  process.stdout.write('\ninterrupted: stopping after this day (run the same command again to resume)\n');
});

const say = (s: string) => process.stdout.write(`${s}\n`);

async function programs(): Promise<number[]> {
  const ids = await programIds(sql, only);
  if (only !== null) {
    const missing = only.filter((id) => !ids.includes(id));
    if (missing.length > 0) usageError(`no program ${missing.join(', ')}`);
  }
  return ids;
}

/** The unfinished run of this scope (to resume), or a new one. */
async function startRun(): Promise<RebuildRun> {
  const run = await openRebuildRun(sql, { only, range }, values.restart === true);
  if (!run.resumed) say(`rebuild #${run.id} started`);
  else
    say(
      run.doneProgram === null
        ? `resuming rebuild #${run.id} (nothing done yet)`
        : `resuming rebuild #${run.id} after program ${run.doneProgram}, day ${run.doneDay} (${run.chunks} days done)`,
    );
  return run;
}

async function rebuild(): Promise<boolean> {
  const ids = await programs();
  const run = await startRun();
  const started = Date.now();
  let done = 0;
  let lastLine = 0;
  for (const [i, programId] of ids.entries()) {
    if (run.doneProgram !== null && programId < run.doneProgram) continue;
    const filled = await fillCustomerKeys(sql, programId);
    const days = (await programDays(sql, programId, range)).filter(
      (d) => run.doneProgram !== programId || run.doneDay === null || d > run.doneDay,
    );
    say(
      `program ${programId} (${i + 1} of ${ids.length}): ${days.length} days to rebuild` +
        (filled > 0 ? `, attributing-click keys filled on ${filled} customers` : ''),
    );
    for (const [j, day] of days.entries()) {
      if (interrupted) return false;
      if (done >= maxDays) {
        say(`stopped after ${done} days (--max-days); run it again to resume rebuild #${run.id}`);
        return true;
      }
      await rebuildRunDay(sql, run, programId, day);
      done++;
      if (Date.now() - lastLine > 2000 || j === days.length - 1) {
        lastLine = Date.now();
        const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
        say(
          `  program ${programId}: day ${day} (${j + 1} of ${days.length}); ${run.chunks + done} days done, ` +
            `${rate.toFixed(1)} days/s`,
        );
      }
    }
  }
  await finishRebuildRun(sql, run);
  say(
    `rebuild #${run.id} finished: ${run.chunks + done} days in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return true;
}

/**
 * Each program's rollups against the raw events, each program in one read-only snapshot: the workers may be
 * writing meanwhile. The script opens it (the unit-of-work rule: shared/rollups/check.ts is SQL, it takes the tx).
 */
async function check(): Promise<number> {
  let found = 0;
  for (const programId of await programs()) {
    const diffs = await sql.begin('isolation level repeatable read read only', (tx) =>
      checkProgram(tx, programId, range),
    );
    report(programId, diffs);
    found += diffs.length;
  }
  say(found === 0 ? 'check: the rollups equal the raw events' : `check: ${found} differences`);
  return found;
}

function report(programId: number, diffs: Difference[]): void {
  if (diffs.length === 0) {
    say(`program ${programId}: equal`);
    return;
  }
  say(`program ${programId}: ${diffs.length} differences`);
  for (const d of diffs.slice(0, 20)) say(`  ${describe(d)}`);
  if (diffs.length > 20) say(`  ... and ${diffs.length - 20} more`);
}

let status = 0;
try {
  if (values.rebuild && !(await rebuild())) status = 130;
  if (status === 0 && values.check && (await check()) > 0) status = 1;
} finally {
  await sql.end({ timeout: 5 });
}
process.exit(status);
