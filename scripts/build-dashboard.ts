// npm run build:dashboard: the dashboard SPA (services/dashboard) built with Vite into services/dashboard/dist,
// which the web process serves at the base URL. `npm start` and `npm test` do this themselves when dist is
// missing or stale (scripts/lib/stack/dashboard.ts); this script always builds.
import { cli } from './lib/cli.ts';
import {
  DASHBOARD_PATHS,
  buildDashboard,
  distOf,
  firstLoadText,
  kb,
  staleReason,
} from './lib/stack/dashboard.ts';

const USAGE = `Usage: npm run build:dashboard [-- --if-stale]

Builds the advertiser dashboard and the partner portal (services/dashboard, Vite + Preact, two entries:
index.html and partner.html) into services/dashboard/dist and writes
dist/.build-stamp. The web service reads dist once at boot: restart it to serve a new build.

Options:
  --if-stale    build only when dist is missing or older than its sources (what npm start and npm test do)
  -h, --help    this text`;

const { values } = cli(USAGE, { 'if-stale': { type: 'boolean' } });
const out = distOf(DASHBOARD_PATHS).replace(`${process.cwd()}/`, '');
if (values['if-stale']) {
  const reason = await staleReason();
  if (reason === null) {
    process.stdout.write(`dashboard is up to date in ${out}\n`);
    process.exit(0);
  }
  process.stdout.write(`dashboard: ${reason}\n`);
}
process.stdout.write(`building the dashboard into ${out} ...\n`);
const r = await buildDashboard();
process.stdout.write(
  `built in ${r.seconds.toFixed(1)} s: JavaScript ${kb(r.jsBytes)} (${kb(r.jsGzipBytes)} gzipped), CSS ${kb(r.cssBytes)}\n` +
    `first load, JavaScript gzipped: ${firstLoadText(r)} (budget 150 KB each)\n`,
);
