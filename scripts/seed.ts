// npm run seed: the demo data of `npm start` (a live program, a partner, referral link `demo`) in
// $DATABASE_URL, after applying its migrations. Idempotent: a second run finds the same rows.
import { cli } from './lib/cli.ts';
import { DEMO_TOKEN_FILE, seedDemo } from './lib/seed.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';

const USAGE = `Usage: npm run seed

Applies the migrations $DATABASE_URL has not seen, then creates the demo data that \`npm start\` creates,
unless it exists: a live program (slug demo) with a partner and the referral link aff=demo. Prints the
program's id and its tracking token, whose clear value is kept in ${DEMO_TOKEN_FILE.replace(/^.*\/\.stack\//, '.stack/')}.

Environment: DATABASE_URL (default: the Postgres of \`npm run stack\` / \`npm start\`).`;

cli(USAGE, {});
const cfg = loadConfig();
const log = createLogger('seed', cfg.logLevel);
process.stdout.write(`seeding the demo program into ${cfg.databaseUrl.replace(/\/\/[^@]*@/, '//')} ...\n`);
await migrate(cfg.databaseUrl, log);
const sql = createSql(cfg.databaseUrl, 1, 'svc-seed');
try {
  const demo = await seedDemo(sql);
  process.stdout.write(
    `demo program ${demo.programId}, partner ${demo.partnerId}, referral link aff=${demo.shortLink}\n` +
      `tracking token: ${demo.trackingToken}\n`,
  );
} finally {
  await sql.end();
}
