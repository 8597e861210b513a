// The start-up check of the dependency fixes (shared/dependency-fixes.ts): every process refuses to run on
// a Kafka client (or postgres.js) without the project's patches, naming the missing fix. The installed packages
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
  packageDir,
  PLATFORMATIC_KAFKA,
  POSTGRES,
  UnpatchedDependencyError,
} from '../../shared/dependency-fixes.ts';
import type { PatchedPackage } from '../../shared/dependency-fixes.ts';
import type { Test } from 'tap';

const ROOT = join(import.meta.dirname, '..', '..');
const patchOf = (pkg: PatchedPackage) =>
  join(ROOT, 'patches', `${pkg.name.replace('/', '+')}+${pkg.version}.patch`);

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

/** Applies the patch again to a copy made by unpatchedCopy (`dir` is its node_modules/<name>). */
function reapply(pkg: PatchedPackage, dir: string): void {
  const root = join(dir, ...pkg.name.split('/').map(() => '..'), '..');
  execFileSync('git', ['apply', patchOf(pkg)], {
    cwd: root,
    env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(root) },
  });
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

t.test('the installed Kafka client and postgres have every fix', async (t) => {
  t.equal(dependencyProblem(PLATFORMATIC_KAFKA, packageDir(PLATFORMATIC_KAFKA.name)), null);
  t.equal(dependencyProblem(POSTGRES, packageDir('postgres')), null);
  t.doesNotThrow(() => assertPatched(PLATFORMATIC_KAFKA));
});

t.test('an unpatched Kafka client is refused, naming its missing fix and file', async (t) => {
  const message = refusal(PLATFORMATIC_KAFKA, unpatchedCopy(t, PLATFORMATIC_KAFKA));
  t.match(
    message,
    /^@platformatic\/kafka 2\.12\.1 lacks the project's fixes from patches\/@platformatic\+kafka\+2\.12\.1\.patch: /,
  );
  for (const f of PLATFORMATIC_KAFKA.fixes) t.ok(message.includes(`"${f.fix}" in ${f.file}`), f.fix);
  t.match(message, /npx patch-package/);
});

t.test('a fix with one of its parts lost is named with how many', async (t) => {
  const dir = unpatchedCopy(t, PLATFORMATIC_KAFKA);
  reapply(PLATFORMATIC_KAFKA, dir);
  const file = join(dir, 'dist/clients/consumer/messages-stream.js');
  writeFileSync(
    file,
    readFileSync(file, 'utf8').replace('/* svc: fetch again where the leader moved (refetch) */', ''),
  );
  t.match(
    refusal(PLATFORMATIC_KAFKA, dir),
    /"fetch again where the leader moved" \(1 of its parts\) in dist\/clients\/consumer\/messages-stream\.js/,
  );
});

t.test('another Kafka client version is refused: the fault suites proved this one', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'svc-deps-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const manifest = JSON.parse(
    readFileSync(join(packageDir(PLATFORMATIC_KAFKA.name), 'package.json'), 'utf8'),
  ) as Record<string, unknown>;
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ ...manifest, version: '2.99.0' }));
  t.match(
    refusal(PLATFORMATIC_KAFKA, tmp),
    /^@platformatic\/kafka 2\.99\.0 is installed, but patches\/@platformatic\+kafka\+2\.12\.1\.patch was made for 2\.12\.1/,
  );
});

t.test('an unpatched postgres.js is refused, naming the guard in each of its builds', async (t) => {
  const message = refusal(POSTGRES, unpatchedCopy(t, POSTGRES));
  for (const file of ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'])
    t.ok(message.includes(`"guarded (postgres#1208)" in ${file}`), file);
});

t.test('the patches give exactly the installed files', async (t) => {
  for (const pkg of [PLATFORMATIC_KAFKA, POSTGRES].filter((p) => p.fixes.length > 0)) {
    const dir = unpatchedCopy(t, pkg);
    reapply(pkg, dir);
    for (const f of pkg.fixes)
      t.ok(
        readFileSync(join(dir, f.file)).equals(readFileSync(join(packageDir(pkg.name), f.file))),
        `${pkg.name}/${f.file}`,
      );
  }
});
