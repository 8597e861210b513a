// The fixes this project carries for two dependencies, and the start-up check that refuses to run without
// them. The fixes are patches/<package>+<version>.patch, applied by patch-package at `npm install`/`npm ci`
// (the postinstall script); `npm ci --ignore-scripts` skips them, and an upgrade leaves them behind. Each
// hunk of a patch writes a marker comment `/* svc: <fix> */` (or `/* svc: <fix> (<part>) */`) into the
// code it changes; the check reads the patched files for those markers and the package's version, and
// names what is missing. Each client's creation runs it for its library: createKafka (every process that
// talks to Kafka: web, every worker, the scripts) for @platformatic/kafka, createSql for postgres.
// Updating a patched package: docs/operations.md "Dependency fixes".
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export interface DependencyFix {
  /** The marker's name: `/* svc: <fix> *\/`, or one marker per part: `/* svc: <fix> (<part>) *\/`. */
  fix: string;
  /** The patched file, relative to the package's directory. */
  file: string;
  /** The hunks of a fix that changes several places, each with its marker. */
  parts?: string[];
}

export interface PatchedPackage {
  name: string;
  /** The version the patch was made for (patches/<name>+<version>.patch). */
  version: string;
  fixes: DependencyFix[];
}

// The Kafka client, held to the version the fault suites proved.
export const PLATFORMATIC_KAFKA: PatchedPackage = {
  name: '@platformatic/kafka',
  version: '2.12.1',
  fixes: [
    // A fetch whose leader died (or moved) destroyed the consumer's messages stream once the dead node left
    // the metadata: the stream had grouped the partitions by their old leader, the client fell back to that
    // node when they now had several leaders ("Cannot find broker with node id 3", not retried), and the
    // consumer lost its group membership (a rebalance of every member). The stream forgets the metadata and
    // fetches again from the current leaders (test/integration/consumer-recovery.test.ts; docs/scaling.md
    // "Client fixes" has the upstream issue text).
    {
      fix: 'fetch again where the leader moved',
      file: 'dist/clients/consumer/messages-stream.js',
      parts: ['which', 'refetch'],
    },
    // A send whose leader died (or moved) was repeated whole to the new leader of its first message's
    // partition: when the dead leader's partitions had moved to different nodes, that node refused the others
    // (NOT_LEADER_OR_FOLLOWER) until the retries ran out, and the send failed although every partition had a
    // leader (clicks answered 503 for seconds in the cluster). The repeat groups the messages again by their
    // partitions' current leaders (test/integration/send-retry.test.ts).
    {
      fix: 'each partition to its own leader',
      file: 'dist/clients/producer/producer.js',
      parts: ['repeat', 'regroup'],
    },
  ],
};

// A write queued with setImmediate could run after the connection closed and dereference a null socket, an
// uncaught TypeError that ends the process (porsager/postgres#1154, #1208; the guard proposed in #1209); the
// pending query is rejected with CONNECTION_CLOSED instead, handled like any lost connection.
export const POSTGRES: PatchedPackage = {
  name: 'postgres',
  version: '3.4.9',
  fixes: ['src/connection.js', 'cjs/src/connection.js', 'cf/src/connection.js'].map((file) => ({
    fix: 'guarded (postgres#1208)',
    file,
  })),
};

/** Thrown at start-up by a process whose dependency lacks the project's fixes. */
export class UnpatchedDependencyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnpatchedDependencyError';
  }
}

const markersOf = (f: DependencyFix): string[] =>
  f.parts ? f.parts.map((p) => `/* svc: ${f.fix} (${p}) */`) : [`/* svc: ${f.fix} */`];

/**
 * What is wrong with the package installed in `dir`, or null: another version than the patch's, or the
 * fixes whose markers are missing, each named with its file.
 */
export function dependencyProblem(pkg: PatchedPackage, dir: string): string | null {
  const patch = `patches/${pkg.name.replace('/', '+')}+${pkg.version}.patch`;
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  if (version !== pkg.version)
    return (
      `${pkg.name} ${version} is installed, but ${patch} was made for ${pkg.version}: regenerate the ` +
      'patch for the new version (docs/operations.md "Dependency fixes")'
    );
  const texts = new Map<string, string>();
  const read = (file: string) => {
    if (!texts.has(file)) {
      const path = join(dir, file);
      texts.set(file, existsSync(path) ? readFileSync(path, 'utf8') : '');
    }
    return texts.get(file)!;
  };
  const missing: string[] = [];
  for (const f of pkg.fixes) {
    const absent = markersOf(f).filter((m) => !read(f.file).includes(m));
    if (absent.length === 0) continue;
    const which = f.parts && absent.length < f.parts.length ? ` (${absent.length} of its parts)` : '';
    missing.push(`"${f.fix}"${which} in ${f.file}`);
  }
  if (missing.length === 0) return null;
  return (
    `${pkg.name} ${version} lacks the project's fixes from ${patch}: ${missing.join(', ')}. ` +
    'Apply them with `npx patch-package` (`npm ci --ignore-scripts` skips it; docs/operations.md ' +
    '"Dependency fixes")'
  );
}

/** The directory of an installed package, as this module resolves it. */
export function packageDir(name: string): string {
  let dir = dirname(createRequire(import.meta.url).resolve(name));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name
    )
      return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`${name}: package.json not found`);
    dir = up;
  }
}

const checked = new Set<string>();

/** Throws UnpatchedDependencyError when the installed package lacks a fix; checked once per process. */
export function assertPatched(pkg: PatchedPackage, dir = packageDir(pkg.name)): void {
  if (checked.has(dir)) return;
  const problem = dependencyProblem(pkg, dir);
  if (problem) throw new UnpatchedDependencyError(problem);
  checked.add(dir);
}
