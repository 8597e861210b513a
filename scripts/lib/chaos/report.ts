// The tables of `npm run chaos`: per fault, how callers saw it (first failure, the failures, the first 200
// after the recovery) measured from the load's attempts, what was lost or duplicated, and the targets.
import { percentile } from '../../../shared/stats.ts';
import type { Fault, FaultExtra } from './cluster.ts';
import { KINDS } from './load.ts';
import type { Attempt, Kind, Logical } from './load.ts';

export interface Result {
  fault: Fault;
  extra: FaultExtra;
  at: number;
  recovered: number;
  firstFail: number | null;
  failures: Attempt[];
  firstOk: { kind: Kind; ms: number } | null;
  settled: boolean;
  exits: string[];
  lost: number;
  dup: number;
  phase: number;
}

/**
 * The row of a fault from the attempts: `at` the fault, `recovered` its recovery, `until` the end of its
 * phase; requests sent before `since` (the previous phase's end) belong to the previous phase. `unexpected`:
 * the exits nobody caused.
 */
export function measure(
  attempts: Attempt[],
  unexpected: { at: number; name: string; code: number | null }[],
  fault: Fault,
  extra: FaultExtra,
  at: number,
  recovered: number,
  until: number,
  ph: number,
  settled: boolean,
  since: number,
): Result {
  // Requests sent before the previous phase ended belong to it, even when they are answered late.
  const window = attempts.filter((a) => a.answered >= at && a.sent >= since && a.sent <= until);
  const failures = window.filter(
    (a) => a.status !== 200 && !(typeof a.status === 'number' && a.status < 500),
  );
  const firstFail = failures.length ? Math.min(...failures.map((a) => a.answered)) - at : null;
  let firstOk: Result['firstOk'] = null;
  // The kinds the fault hit (any kind, when none failed): a kind that never failed says nothing here.
  const hit = KINDS.filter((k) => failures.some((f) => f.kind === k));
  for (const k of hit.length ? hit : KINDS) {
    const oks = attempts.filter((a) => a.kind === k && a.status === 200 && a.answered >= recovered);
    if (oks.length === 0) continue;
    const ms = Math.min(...oks.map((a) => a.answered)) - recovered;
    if (!firstOk || ms > firstOk.ms) firstOk = { kind: k, ms };
  }
  const exits = unexpected.filter((u) => u.at >= at && u.at <= until).map((u) => `${u.name} (${u.code})`);
  return {
    fault,
    extra,
    at,
    recovered,
    firstFail,
    failures,
    firstOk,
    settled,
    exits,
    lost: 0,
    dup: 0,
    phase: ph,
  };
}

export const fmt = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** The fault's row of the table; `settleMaxMs`: the longest wait for recovery. */
export function row(r: Result, settleMaxMs: number): string[] {
  const byStatus = new Map<string, number>();
  for (const f of r.failures) {
    const k = `${f.kind} ${f.status}`;
    byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
  }
  const durs = r.failures.map((f) => f.answered - f.sent);
  const failMax = durs.length ? Math.max(...durs) : 0;
  const firstOkMs = r.firstOk?.ms ?? null;
  const targets = [
    failMax <= 2500 ? '' : 'failure > 2.5 s',
    r.settled && firstOkMs !== null && firstOkMs <= 2000 ? '' : 'first 200 > 2 s',
    ...accountingMisses(r),
  ].filter(Boolean);
  return [
    r.fault.name,
    fmt(r.firstFail),
    byStatus.size ? [...byStatus].map(([s, n]) => `${s}×${n}`).join(' ') : 'none',
    durs.length ? `${fmt(percentile(durs, 50))} / ${fmt(failMax)}` : '-',
    r.settled ? `${fmt(firstOkMs)} (${r.firstOk?.kind})` : `not within ${settleMaxMs / 1000} s`,
    String(r.lost),
    String(r.dup),
    r.exits.length ? r.exits.join(', ') : '0',
    targets.length ? `MISSED: ${targets.join(', ')}` : 'met',
  ];
}

export function accountingMisses(r: Result): string[] {
  return [
    r.lost === 0 ? '' : 'lost',
    r.dup === 0 ? '' : 'duplicated',
    r.exits.length === 0 ? '' : 'other exit',
  ].filter(Boolean);
}

export function table(rows: string[][]): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(w[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.slice(1).map(line)].join(
    '\n',
  );
}

/** The table of every fault (row), with its header. */
export function faultTable(results: Result[], settleMaxMs: number): string {
  const header = [
    'fault',
    'first fail',
    'failures (kind status×n)',
    'fail p50 / max',
    'first 200 after recovery',
    'lost',
    'dup',
    'other exits',
    'targets',
  ];
  return table([header, ...results.map((r) => row(r, settleMaxMs))]);
}

/** The 4xx answers (answers, not failures: a retry would not change them), one line per kind and error. */
export function fourxxLines(logical: Logical[]): string[] {
  const fourxx = new Map<string, number>();
  for (const l of logical)
    if (!l.ok && l.answer && typeof l.answer.error === 'string')
      fourxx.set(`${l.kind}: ${l.answer.error}`, (fourxx.get(`${l.kind}: ${l.answer.error}`) ?? 0) + 1);
  return [...fourxx].map(([what, n]) => `  4xx answer ${what} ×${n}`);
}
