// SQL of imports (0030_imports.sql): create one, read them, read their error rows. The pages themselves are
// written by the import worker (shared/importing/run.ts).
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { Counts, ImportOptions, SourceName } from '../../../../shared/importing/types.ts';

export interface ImportRow {
  id: string;
  program_id: string;
  source: SourceName;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'canceled';
  step: string;
  dry_run: boolean;
  options: ImportOptions;
  counts: Partial<Counts>;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

// Never the credentials, never the file: what the API answers is read without them.
const COLUMNS = (db: Sql | Tx) =>
  db`id, program_id, source, status, step, dry_run, options, counts, error, created_at, started_at, finished_at`;

export interface NewImport {
  programId: number;
  source: SourceName;
  step: string;
  dryRun: boolean;
  options: ImportOptions;
  credentials: Buffer | null;
  csv: string | null;
}

export async function insertImport(tx: Tx, i: NewImport): Promise<ImportRow> {
  const [row] = await tx<ImportRow[]>`
    insert into imports (program_id, source, step, dry_run, options, credentials, csv)
    values (${i.programId}, ${i.source}, ${i.step}, ${i.dryRun}, ${tx.json(i.options as never)}, ${i.credentials},
            ${i.csv})
    returning ${COLUMNS(tx)}`;
  return row!;
}

export function importsOf(db: Sql, programId: number, limit: number) {
  return db<ImportRow[]>`
    select ${COLUMNS(db)} from imports where program_id = ${programId} order by id desc limit ${limit}`;
}

export async function importOf(
  db: Sql | Tx,
  programId: number,
  importId: number,
): Promise<ImportRow | undefined> {
  if (!Number.isSafeInteger(importId)) return undefined;
  const [row] = await db<ImportRow[]>`
    select ${COLUMNS(db)} from imports where id = ${importId} and program_id = ${programId}`;
  return row;
}

/** The import, locked for a change of its status (undefined: none of the program). */
export async function lockImport(tx: Tx, programId: number, importId: number) {
  if (!Number.isSafeInteger(importId)) return undefined;
  const [row] = await tx<{ id: string; status: ImportRow['status'] }[]>`
    select id, status from imports where id = ${importId} and program_id = ${programId} for update`;
  return row;
}

export function errorsOf(db: Sql, importId: number, limit: number) {
  return db<{ kind: string; external_id: string; code: string; message: string }[]>`
    select kind, external_id, code, message from import_errors where import_id = ${importId}
    order by id limit ${limit}`;
}
