// ensureDashboardBuilt (scripts/lib/stack/dashboard.ts): builds when dist or its stamp is missing or a source is
// newer than the stamp, not otherwise; concurrent calls build once. The build itself is replaced by a fake
// that writes dist the way Vite would.
import t from 'tap';
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDashboardBuilt, staleReason, stampOf } from '../../scripts/lib/stack/dashboard.ts';
import type { DashboardPaths } from '../../scripts/lib/stack/dashboard.ts';
import { createLogger } from '../../shared/logger.ts';

const log = createLogger('test', 'silent');
const root = await mkdtemp(join(tmpdir(), 'svc-dash-'));
t.teardown(() => rm(root, { recursive: true, force: true }));
const p: DashboardPaths = { dir: join(root, 'dashboard'), extraInputs: [join(root, 'package-lock.json')] };
await mkdir(join(p.dir, 'src', 'pages'), { recursive: true });
await writeFile(join(p.dir, 'index.html'), '<html>');
await writeFile(join(p.dir, 'vite.config.ts'), '');
await writeFile(join(p.dir, 'src', 'pages', 'Overview.tsx'), '');
await writeFile(join(root, 'package-lock.json'), '{}');

let builds = 0;
async function fakeBuild(paths: DashboardPaths) {
  builds++;
  await new Promise((r) => setTimeout(r, 50));
  await mkdir(join(paths.dir, 'dist'), { recursive: true });
  await writeFile(join(paths.dir, 'dist', 'index.html'), '<html>');
  await writeFile(stampOf(paths), '{}');
  return { seconds: 0.05, jsBytes: 1, jsGzipBytes: 1, cssBytes: 1 };
}
/** Makes `path` look modified `seconds` from now. */
const touch = (path: string, seconds: number) => {
  const when = new Date(Date.now() + seconds * 1000);
  return utimes(path, when, when);
};

t.test('missing, fresh, stale', async (t) => {
  t.equal(await staleReason(p), 'not built');
  const both = await Promise.all([
    ensureDashboardBuilt(log, p, fakeBuild),
    ensureDashboardBuilt(log, p, fakeBuild),
  ]);
  t.equal(builds, 1, 'two concurrent calls build once');
  t.equal(both.filter((r) => r !== null).length, 1);
  t.equal(await staleReason(p), null);
  t.equal(await ensureDashboardBuilt(log, p, fakeBuild), null, 'up to date: nothing to do');
  t.equal(builds, 1);

  await touch(join(p.dir, 'src', 'pages', 'Overview.tsx'), 5);
  t.equal(await staleReason(p), 'src/pages/Overview.tsx changed');
  await ensureDashboardBuilt(log, p, fakeBuild);
  t.equal(builds, 2, 'a newer page rebuilds');
  await touch(stampOf(p), 10);

  for (const input of ['index.html', 'vite.config.ts']) {
    await touch(join(p.dir, input), 20);
    t.equal(await staleReason(p), `${input} changed`);
    await touch(join(p.dir, input), 0);
  }
  await touch(join(root, 'package-lock.json'), 20);
  t.match(await staleReason(p), /package-lock\.json changed/);
  await touch(join(root, 'package-lock.json'), 0);
  t.equal(await staleReason(p), null);

  await rm(join(p.dir, 'dist', 'index.html'));
  t.equal(await staleReason(p), 'not built', 'a stamp without index.html is not a build');
  await rm(join(p.dir, 'dist'), { recursive: true });
  await ensureDashboardBuilt(log, p, fakeBuild);
  t.equal(builds, 3, 'a deleted dist rebuilds');
});

t.test('a failed build leaves no lock behind and is retried next time', async (t) => {
  await rm(join(p.dir, 'dist'), { recursive: true });
  await t.rejects(
    ensureDashboardBuilt(log, p, async () => {
      throw new Error('syntax error in a page');
    }),
    /syntax error/,
  );
  await ensureDashboardBuilt(log, p, fakeBuild);
  t.equal(builds, 4, 'retried');
  t.equal(await stat(join(p.dir, '.build-lock')).catch(() => null), null, 'no lock left');
});
