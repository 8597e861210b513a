// The import's own rows, in the caller's transaction (the page's): what each imported row became here
// (import_refs: twice is once), the error rows, and the counts. docs/importing.md "Twice is once".
import { createHash } from 'node:crypto';
import type { Tx } from '../db/sql.ts';
import { COUNT_KEYS, OUTCOMES } from './types.ts';
import type { Counts, Kind, Outcome, RowError, SourceName } from './types.ts';

/** The import a page is applied for, as the importer needs it. */
export interface ImportScope {
  importId: number;
  programId: number;
  workspaceId: number | null;
  source: SourceName;
  /** The source's name in rule text and messages ('Rewardful'). */
  label: string;
  dryRun: boolean;
  /** The program's currency and hold (a commission without the source's due date). */
  currency: string;
  holdDays: number;
  kafkaPrefix: string;
}

/** What a page did, gathered as it is applied, written with it. */
export class PageResult {
  readonly counts: Counts;
  readonly errors: RowError[] = [];
  constructor() {
    this.counts = Object.fromEntries(
      Object.values(COUNT_KEYS).map((k) => [k, Object.fromEntries(OUTCOMES.map((o) => [o, 0]))]),
    ) as Counts;
  }
  count(kind: Kind, outcome: Outcome, n = 1) {
    this.counts[COUNT_KEYS[kind]][outcome] += n;
  }
  /** An error row about a row that was brought (its discount could not be): counted as it was. */
  note(e: RowError) {
    this.errors.push(e);
  }
  /** A row not brought: counted `failed` or `skipped`, with its error row. */
  error(e: RowError, outcome: 'failed' | 'skipped') {
    this.errors.push(e);
    this.count(e.kind, outcome);
  }
}

/** Counts of a page added to the import's. */
export function addCounts(total: Partial<Counts> | null, page: Counts): Counts {
  const out = {} as Counts;
  for (const k of Object.values(COUNT_KEYS)) {
    out[k] = Object.fromEntries(OUTCOMES.map((o) => [o, (total?.[k]?.[o] ?? 0) + page[k][o]])) as Record<
      Outcome,
      number
    >;
  }
  return out;
}

/** A short fingerprint of what the source said of a row: a later run updates only what changed. */
export const fingerprint = (v: unknown): string =>
  createHash('sha256').update(JSON.stringify(v)).digest('base64url').slice(0, 22);

export interface Ref {
  local_id: number;
  fingerprint: string;
}

/**
 * The rows the program already has for these external ids of `kind` from this source; in a dry run, also
 * those its earlier pages would have created (local_id 0).
 */
export async function findRefs(tx: Tx, s: ImportScope, kind: Kind, ids: string[]): Promise<Map<string, Ref>> {
  if (ids.length === 0) return new Map();
  const rows = await tx<{ external_id: string; local_id: string; fingerprint: string }[]>`
    select external_id, local_id, fingerprint from import_refs
    where ((program_id = ${s.programId} and source = ${s.source} and dry_run_of is null)
           ${s.dryRun ? tx`or dry_run_of = ${s.importId}` : tx``})
      and kind = ${kind} and external_id = any(${[...new Set(ids)]}::text[])
    order by dry_run_of nulls first`;
  const out = new Map<string, Ref>();
  for (const r of rows)
    if (!out.has(r.external_id))
      out.set(r.external_id, { local_id: Number(r.local_id), fingerprint: r.fingerprint });
  return out;
}

/** Records (or, for a row seen before, updates) what each external id became. A dry run's go apart. */
export async function saveRefs(
  tx: Tx,
  s: ImportScope,
  kind: Kind,
  rows: { external_id: string; local_id: number; fingerprint: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  if (s.dryRun) {
    await tx`
      insert into import_refs (program_id, source, kind, external_id, local_id, fingerprint, import_id, dry_run_of)
      select ${s.programId}, ${s.source}, ${kind}, e, 0, f, ${s.importId}, ${s.importId}
      from unnest(${col('external_id')}::text[], ${col('fingerprint')}::text[]) as v(e, f)
      on conflict do nothing`;
    return;
  }
  await tx`
    insert into import_refs (program_id, source, kind, external_id, local_id, fingerprint, import_id)
    select ${s.programId}, ${s.source}, ${kind}, e, l, f, ${s.importId}
    from unnest(${col('external_id')}::text[], ${col('local_id')}::bigint[], ${col('fingerprint')}::text[])
      as v(e, l, f)
    on conflict (program_id, source, kind, external_id) where dry_run_of is null do update set
      local_id = excluded.local_id, fingerprint = excluded.fingerprint, import_id = excluded.import_id,
      updated_at = now()`;
}

/** The page's error rows (each once per import, kind, external id and code). */
export async function writeErrors(tx: Tx, importId: number, errors: RowError[]): Promise<void> {
  if (errors.length === 0) return;
  const col = <K extends keyof RowError>(k: K) => errors.map((e) => e[k]);
  await tx`
    insert into import_errors (import_id, kind, external_id, code, message)
    select ${importId}, k, e, c, m
    from unnest(${col('kind')}::text[], ${col('external_id')}::text[], ${col('code')}::text[],
                ${col('message').map((m) => m.slice(0, 1000))}::text[]) as v(k, e, c, m)
    on conflict do nothing`;
}
