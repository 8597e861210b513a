// The import's Kafka command (topic `imports`, keyed by import id): "apply the page the import waits for".
// It travels through the outbox, written in the transaction that created the import or applied its last
// page, so a committed page always has its next command and a rolled-back one never does; `seq` makes a
// command delivered twice (the relay may publish a row twice, Kafka may redeliver) a no-op.
import type { Sql, Tx } from '../db/sql.ts';
import { outboxTopic, writeOutbox } from '../db/outbox.ts';

export interface ImportCommand {
  /** The outbox's stable id of the message: `import:<id>:<seq>`. */
  id: string;
  v: 1;
  type: 'import_page';
  import_id: number;
  seq: number;
}

export function queueImportCommand(tx: Tx | Sql, kafkaPrefix: string, importId: number, seq: number) {
  const payload: ImportCommand = {
    id: `import:${importId}:${seq}`,
    v: 1,
    type: 'import_page',
    import_id: importId,
    seq,
  };
  return writeOutbox(tx, [{ topic: outboxTopic(kafkaPrefix, 'imports'), key: String(importId), payload }]);
}

/** The command in a message's bytes, or why it is not one (a dead letter). */
export function parseImportCommand(bytes: Buffer | null): ImportCommand | string {
  try {
    const v = JSON.parse(bytes?.toString('utf8') ?? '') as Partial<ImportCommand>;
    if (v.type === 'import_page' && Number.isSafeInteger(v.import_id) && Number.isSafeInteger(v.seq))
      return v as ImportCommand;
  } catch {
    // below
  }
  return 'not an import command';
}
