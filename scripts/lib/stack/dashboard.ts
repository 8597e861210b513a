// Building the dashboard SPA (services/dashboard → services/dashboard/dist, git-ignored) with Vite, and
// `ensureDashboardBuilt`, which `npm start` and `npm test` call so a fresh clone (or an edited page) is
// built before the web service reads dist. Staleness: dist has no stamp, or a source (src/**, index.html,
// partner.html, vite.config.ts, tsconfig.json, package-lock.json) is newer than it. A lock directory keeps two runs in
// one checkout from building at once (docs/dashboard.md "Build").
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { gzipSync } from 'node:zlib';
import type { Logger } from '../../../shared/logger.ts';

// Not stack.ts's ROOT: that module loads the embedded Postgres, which the image's build stage does not need.
const ROOT = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

export interface DashboardPaths {
  /** services/dashboard: index.html, vite.config.ts, src/ */
  dir: string;
  /** What else a rebuild depends on (package-lock.json: a changed preact or vite). */
  extraInputs: string[];
}

export const DASHBOARD_PATHS: DashboardPaths = {
  dir: join(ROOT, 'services', 'dashboard'),
  // The API contract the dashboard shares (lists and shapes the API defines) and its HTTP client.
  extraInputs: [
    join(ROOT, 'package-lock.json'),
    join(ROOT, 'shared', 'contracts', 'management.ts'),
    join(ROOT, 'shared', 'http', 'client.ts'),
  ],
};

export const distOf = (p: DashboardPaths) => join(p.dir, 'dist');
export const stampOf = (p: DashboardPaths) => join(p.dir, 'dist', '.build-stamp');
const lockOf = (p: DashboardPaths) => join(p.dir, '.build-lock');

export interface BuildResult {
  seconds: number;
  /** All the JavaScript of the build, raw and gzipped. */
  jsBytes: number;
  jsGzipBytes: number;
  cssBytes: number;
  /**
   * What each page's first load fetches (its module script and the chunks it preloads), gzipped, by
   * entry: `index` (the dashboard), `partner` (the portal and the public program pages). The issues'
   * budget is 150 KB gzipped for either.
   */
  firstLoadGzipBytes?: Record<string, number>;
}

async function mtimeMs(path: string): Promise<number | null> {
  const s = await stat(path).catch(() => null);
  return s ? s.mtimeMs : null;
}

async function newestUnder(path: string): Promise<{ path: string; mtimeMs: number } | null> {
  const s = await stat(path).catch(() => null);
  if (!s) return null;
  if (!s.isDirectory()) return { path, mtimeMs: s.mtimeMs };
  let newest: { path: string; mtimeMs: number } | null = { path, mtimeMs: s.mtimeMs };
  for (const name of await readdir(path)) {
    const n = await newestUnder(join(path, name));
    if (n && (!newest || n.mtimeMs > newest.mtimeMs)) newest = n;
  }
  return newest;
}

/** Why dist must be (re)built, or null when it is up to date. */
export async function staleReason(p: DashboardPaths = DASHBOARD_PATHS): Promise<string | null> {
  const stamp = await mtimeMs(stampOf(p));
  if (stamp === null || (await mtimeMs(join(distOf(p), 'index.html'))) === null) return 'not built';
  const inputs = [
    join(p.dir, 'src'),
    join(p.dir, 'index.html'),
    join(p.dir, 'partner.html'),
    join(p.dir, 'vite.config.ts'),
    join(p.dir, 'tsconfig.json'),
    join(p.dir, 'public'),
    ...p.extraInputs,
  ];
  for (const input of inputs) {
    const n = await newestUnder(input);
    if (n && n.mtimeMs > stamp) return `${relative(p.dir, n.path) || n.path} changed`;
  }
  return null;
}

/** Sizes of the build's JavaScript and CSS, and of each HTML entry's first load. */
async function measure(dist: string): Promise<Omit<BuildResult, 'seconds'>> {
  let jsBytes = 0;
  let jsGzipBytes = 0;
  let cssBytes = 0;
  const gzipped = new Map<string, number>();
  const assets = join(dist, 'assets');
  for (const name of await readdir(assets).catch(() => [] as string[])) {
    const body = await readFile(join(assets, name));
    if (name.endsWith('.js')) {
      const gz = gzipSync(body, { level: 9 }).length;
      gzipped.set(`/assets/${name}`, gz);
      jsBytes += body.length;
      jsGzipBytes += gz;
    } else if (name.endsWith('.css')) cssBytes += body.length;
  }
  // An entry's first load: the scripts its HTML names (the module and its modulepreloads), each once.
  const firstLoadGzipBytes: Record<string, number> = {};
  for (const name of await readdir(dist)) {
    if (!name.endsWith('.html')) continue;
    const html = await readFile(join(dist, name), 'utf8');
    const scripts = new Set([...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!));
    firstLoadGzipBytes[name.replace(/\.html$/, '')] = [...scripts].reduce(
      (sum, s) => sum + (gzipped.get(s) ?? 0),
      0,
    );
  }
  return { jsBytes, jsGzipBytes, cssBytes, firstLoadGzipBytes };
}

/** "dashboard 46.8 KB, portal 39.5 KB": each entry's first load, gzipped. */
export function firstLoadText(r: BuildResult): string {
  const names: Record<string, string> = { index: 'dashboard', partner: 'portal' };
  return Object.entries(r.firstLoadGzipBytes ?? {})
    .map(([entry, bytes]) => `${names[entry] ?? entry} ${kb(bytes)}`)
    .join(', ');
}

/** Runs `vite build` with services/dashboard/vite.config.ts and writes the stamp. */
export async function buildDashboard(p: DashboardPaths = DASHBOARD_PATHS): Promise<BuildResult> {
  const started = Date.now();
  // Imported here: vite is a dev dependency, absent from the runtime image (which copies a built dist).
  const { build } = await import('vite');
  await build({ configFile: join(p.dir, 'vite.config.ts'), logLevel: 'warn', clearScreen: false });
  const sizes = await measure(distOf(p));
  const seconds = (Date.now() - started) / 1000;
  await writeFile(
    stampOf(p),
    JSON.stringify({ built_at: new Date().toISOString(), seconds, ...sizes }, null, 2) + '\n',
  );
  return { seconds, ...sizes };
}

/** A failed build's message without the terminal colours Vite puts in it (for a JSON log line). */
export const buildError = (err: unknown) => stripVTControlCharacters((err as Error).message ?? String(err));

export const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

/** Takes the build lock (a directory; mkdir is atomic), waiting for another build to finish. */
async function lock(p: DashboardPaths, log: Logger): Promise<() => Promise<void>> {
  const dir = lockOf(p);
  const deadline = Date.now() + 5 * 60_000;
  let told = false;
  for (;;) {
    try {
      await mkdir(dir);
      return () => rm(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const age = Date.now() - ((await mtimeMs(dir)) ?? Date.now());
    // A lock older than two minutes belongs to a build that died (a build takes seconds).
    if (age > 120_000 || Date.now() > deadline) {
      log.warn({ lock: dir }, 'removing a stale dashboard build lock');
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    if (!told) log.info('waiting for another dashboard build to finish');
    told = true;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Builds the dashboard when dist is missing or older than its sources (see staleReason); otherwise does
 * nothing. `build` is replaceable for tests.
 */
export async function ensureDashboardBuilt(
  log: Logger,
  p: DashboardPaths = DASHBOARD_PATHS,
  build: (p: DashboardPaths) => Promise<BuildResult> = buildDashboard,
): Promise<BuildResult | null> {
  if ((await staleReason(p)) === null) return null;
  const unlock = await lock(p, log);
  try {
    // Another run may have built it while this one waited for the lock.
    const reason = await staleReason(p);
    if (reason === null) return null;
    log.info({ reason }, 'building the dashboard');
    const r = await build(p);
    log.info(
      {
        seconds: r.seconds.toFixed(1),
        js: kb(r.jsBytes),
        js_gzip: kb(r.jsGzipBytes),
        first_load_gzip: firstLoadText(r),
        css: kb(r.cssBytes),
      },
      'dashboard built',
    );
    return r;
  } finally {
    await unlock();
  }
}
