// The start-up check of the dependency fixes (shared/dependency-fixes.ts): every process refuses to run on
// a kafkajs (or postgres.js) without the project's patches, naming the missing fix. The installed packages
// pass; copies with the patch reversed (`git apply -R`, in a temporary directory: the shared node_modules
// is never touched) are refused, with each missing fix named; another version is refused as such.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  assertPatched,
  dependencyProblem,
  KAFKAJS,
  packageDir,
  POSTGRES,
  UnpatchedDependencyError,
} from '../../shared/dependency-fixes.ts';
import type { PatchedPackage } from '../../shared/dependency-fixes.ts';
import type { Test } from 'tap';

const ROOT = join(import.meta.dirname, '..', '..');
const patchOf = (pkg: PatchedPackage) => join(ROOT, 'patches', `${pkg.name}+${pkg.version}.patch`);

/**
 * A copy of the installed package's patched files (and its package.json) under <tmp>/node_modules/<name>,
 * with the patch (or only `include`'s part of it) reversed: the package as npm installs it, unpatched.
 */
function unpatchedCopy(t: Test, pkg: PatchedPackage, include?: string): string {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-deps-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const dir = join(tmp, 'node_modules', pkg.name);
  for (const file of ['package.json', ...new Set(pkg.fixes.map((f) => f.file))]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    cpSync(join(packageDir(pkg.name), file), join(dir, file));
  }
  const only = include ? [`--include=node_modules/${pkg.name}/${include}`] : [];
  // The ceiling keeps git from treating an enclosing repository's root as the patch's base.
  execFileSync('git', ['apply', '-R', ...only, patchOf(pkg)], {
    cwd: tmp,
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(tmp) },
  });
  return dir;
}

const refusal = (pkg: PatchedPackage, dir: string): string => {
  try {
    assertPatched(pkg, dir);
  } catch (err) {
    if (err instanceof UnpatchedDependencyError) return err.message;
    throw err;
  }
  return 'not refused';
};

t.test('the installed kafkajs and postgres have every fix', async (t) => {
  t.equal(dependencyProblem(KAFKAJS, packageDir('kafkajs')), null);
  t.equal(dependencyProblem(POSTGRES, packageDir('postgres')), null);
  t.doesNotThrow(() => assertPatched(KAFKAJS));
});

t.test('an unpatched kafkajs is refused, every missing fix named with its file', async (t) => {
  const message = refusal(KAFKAJS, unpatchedCopy(t, KAFKAJS));
  t.match(message, /^kafkajs 2\.2\.4 lacks the project's fixes from patches\/kafkajs\+2\.2\.4\.patch: /);
  for (const f of KAFKAJS.fixes) t.ok(message.includes(`"${f.fix}" in ${f.file}`), f.fix);
  t.match(message, /npx patch-package/);
});

t.test('a kafkajs without the send-retry fix alone is refused, naming that fix only', async (t) => {
  const message = refusal(KAFKAJS, unpatchedCopy(t, KAFKAJS, 'src/producer/sendMessages.js'));
  t.match(message, /: "acknowledged per partition" in src\/producer\/sendMessages\.js\. /);
  for (const f of KAFKAJS.fixes.filter((f) => f.fix !== 'acknowledged per partition'))
    t.notOk(message.includes(f.fix), `${f.fix} is not named`);
});

t.test('a fix with one of its parts lost is named with how many', async (t) => {
  const dir = unpatchedCopy(t, KAFKAJS, 'src/network/requestQueue/index.js');
  const file = join(dir, 'src/producer/sendMessages.js');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace(' /* svc: acknowledged per partition (keep) */', ''),
  );
  const message = refusal(KAFKAJS, dir);
  t.match(message, /"acknowledged per partition" \(1 of its parts\) in src\/producer\/sendMessages\.js/);
  t.match(message, /"no negative timeout" in src\/network\/requestQueue\/index\.js/);
});

t.test('another kafkajs version is refused: the patch must be regenerated', async (t) => {
  const dir = unpatchedCopy(t, KAFKAJS);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...manifest, version: '2.2.5' }));
  t.match(
    refusal(KAFKAJS, dir),
    /^kafkajs 2\.2\.5 is installed, but patches\/kafkajs\+2\.2\.4\.patch was made for 2\.2\.4: regenerate/,
  );
});

t.test('an unpatched postgres.js is refused, naming the guard in each of its builds', async (t) => {
  const message = refusal(POSTGRES, unpatchedCopy(t, POSTGRES));
  for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'])
    t.ok(message.includes(`"guarded (postgres#1208)" in ${file}`), file);
});

t.test('the patches give exactly the installed files', async (t) => {
  for (const pkg of [KAFKAJS, POSTGRES]) {
    const dir = unpatchedCopy(t, pkg);
    execFileSync('git', ['apply', patchOf(pkg)], {
      cwd: dirname(dirname(dir)),
      env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(dirname(dirname(dir))) },
    });
    for (const f of pkg.fixes)
      t.ok(
        readFileSync(join(dir, f.file)).equals(readFileSync(join(packageDir(pkg.name), f.file))),
        `${pkg.name}/${f.file}`,
      );
  }
});
