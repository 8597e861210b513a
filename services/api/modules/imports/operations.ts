// The import writes, one transaction each (the unit-of-work rule: docs/architecture.md): an import created
// with its first command in the outbox (so it runs exactly when it committed), and a cancel, which ends it
// and deletes its credentials and file in the same statement (shared/importing/run.ts `endImport`).
import type { Sql } from '../../../../shared/db/sql.ts';
import { queueImportCommand } from '../../../../shared/importing/commands.ts';
import { endImport } from '../../../../shared/importing/run.ts';
import * as dal from './dal.ts';
import type { ImportRow, NewImport } from './dal.ts';

export function createImport(sql: Sql, kafkaPrefix: string, i: NewImport): Promise<ImportRow> {
  return sql.begin(async (tx) => {
    const row = await dal.insertImport(tx, i);
    await queueImportCommand(tx, kafkaPrefix, Number(row.id), 0);
    return row;
  });
}

/** Cancels a queued or running import; undefined: no such import; otherwise its row after. */
export function cancelImport(
  sql: Sql,
  kafkaPrefix: string,
  programId: number,
  importId: number,
): Promise<{ row: ImportRow; canceled: boolean } | undefined> {
  return sql.begin(async (tx) => {
    const locked = await dal.lockImport(tx, programId, importId);
    if (!locked) return undefined;
    const canceled = await endImport(tx, kafkaPrefix, Number(locked.id), 'canceled', null);
    return { row: (await dal.importOf(tx, programId, importId))!, canceled };
  });
}
