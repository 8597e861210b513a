// npm run migrate: applies shared/db/migrations/*.sql to $DATABASE_URL (under an advisory lock).
import { cli } from './lib/cli.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { loadConfig } from '../shared/config.ts';

cli(
  `Usage: npm run migrate

Applies the SQL files in shared/db/migrations/ that $DATABASE_URL has not seen, in name order, each in a
transaction, under an advisory lock (safe to run from several processes at once).`,
  {},
);
const cfg = loadConfig();
const applied = await migrate(cfg.databaseUrl, createLogger('migrate', cfg.logLevel));
process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'up to date\n');
