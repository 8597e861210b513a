// npm run seed: the demo data of `npm start` (a live program, two partners and their links, a demo owner,
// about 30 days of traffic) in $DATABASE_URL, after applying its migrations. Idempotent: a second run finds
// the same rows and adds nothing.
import { cli } from './lib/cli.ts';
import { DEMO_PASSWORD_FILE, DEMO_TOKEN_FILE, seedFullDemo } from './lib/seed/seed.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createLogger } from '../shared/logger.ts';
import { createSql } from '../shared/db/sql.ts';
import { loadConfig } from '../shared/config.ts';

const USAGE = `Usage: npm run seed

Applies the migrations $DATABASE_URL has not seen, then creates the demo data that \`npm start\` creates,
unless it exists: a live program (slug demo) with two partners and the referral links aff=demo and
aff=demo-blog, about 30 days of clicks, leads, sales, commissions and two refunds, and the dashboard user
demo@example.com, owner of the program's workspace, and the partner portal account partner@demo.example
(the program's public page is /p/demo). Prints the program's id, its tracking token and the
demo owner's and demo partner's passwords, whose clear values are kept in ${DEMO_TOKEN_FILE.replace(/^.*\/\.stack\//, '.stack/')} and
${DEMO_PASSWORD_FILE.replace(/^.*\/\.stack\//, '.stack/')}. It seeds whatever DATABASE_URL names: point it only
at a database meant for a demo (\`npm start\` seeds only its embedded Postgres).

Environment: DATABASE_URL (default: the Postgres of \`npm run stack\` / \`npm start\`).`;

cli(USAGE, {});
const cfg = loadConfig();
const log = createLogger('seed', cfg.logLevel);
process.stdout.write(`seeding the demo data into ${cfg.databaseUrl.replace(/\/\/[^@]*@/, '//')} ...\n`);
await migrate(cfg.databaseUrl, log);
const sql = createSql(cfg.databaseUrl, 1, 'svc-seed');
try {
  const demo = await seedFullDemo(sql);
  const t = demo.traffic;
  process.stdout.write(
    `demo program ${demo.programId}, partner ${demo.partnerId}, referral link aff=${demo.shortLink}\n` +
      `tracking token: ${demo.trackingToken}\n` +
      `dashboard login: ${demo.owner.email} / ${demo.owner.password}\n` +
      `partner portal login (/partner/): ${demo.partner.email} / ${demo.partner.password}\n` +
      (t.seeded
        ? `demo traffic: ${t.clicks} clicks, ${t.leads} leads, ${t.sales} sales, ${t.refunds} refunds\n`
        : 'demo traffic: already there\n'),
  );
} finally {
  await sql.end();
}
