// Forward-only migrations: plain SQL files in shared/db/migrations, applied in name order, each in its own
// transaction, under a session advisory lock so concurrent starters wait for each other.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Logger } from '../logger.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
const LOCK_ID = 727_274_001;

export async function migrate(databaseUrl: string, log: Pick<Logger, 'info'>): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('set client_min_messages = warning');
    await client.query('select pg_advisory_lock($1)', [LOCK_ID]);
    await client.query(`create table if not exists schema_migrations (
      name text primary key, checksum text not null, applied_at timestamptz not null default now())`);
    const done = new Map<string, string>(
      (
        await client.query<{ name: string; checksum: string }>('select name, checksum from schema_migrations')
      ).rows.map((r) => [r.name, r.checksum]),
    );
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
    for (const file of files) {
      const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
      const checksum = createHash('sha256').update(text).digest('hex');
      const seen = done.get(file);
      if (seen !== undefined) {
        if (seen !== checksum)
          throw new Error(`migration ${file} changed after it was applied; add a new file instead`);
        continue;
      }
      await client.query('begin');
      try {
        await client.query(text);
        await client.query('insert into schema_migrations (name, checksum) values ($1, $2)', [
          file,
          checksum,
        ]);
        await client.query('commit');
      } catch (err) {
        await client.query('rollback');
        throw new Error(`migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(file);
      log.info({ migration: file }, 'migration applied');
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_ID]).catch(() => {});
    await client.end();
  }
  return applied;
}
