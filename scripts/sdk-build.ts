// npm run sdk:build: the TypeScript SDK (sdk/typescript) compiled with the project's TypeScript into
// sdk/typescript/dist (git-ignored): ES modules, declarations and source maps, ready for
// `npm install ./sdk/typescript` or `npm pack`.
import { spawnSync } from 'node:child_process';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli } from './lib/cli.ts';
import { ROOT } from './lib/stack/stack.ts';

const USAGE = `Usage: npm run sdk:build [-- --out-dir <dir>]

Compiles sdk/typescript/src with tsc (sdk/typescript/tsconfig.json) into sdk/typescript/dist, replacing
what was there. The SDK has no runtime dependencies; install it elsewhere with
\`npm install <this repository>/sdk/typescript\` after building.

Options:
  --out-dir <dir>   write the build there instead (the tests build into a temporary folder)
  -h, --help        this text`;

export const SDK_DIR = join(ROOT, 'sdk', 'typescript');

/** Builds the SDK into `outDir`; throws with tsc's output when it fails. */
export async function buildSdk(outDir = join(SDK_DIR, 'dist')): Promise<void> {
  await rm(outDir, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(SDK_DIR, 'tsconfig.json'), '--outDir', outDir], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`);
  // tsc rewrites './x.ts' to './x.js' in the JavaScript but not in the declarations; TypeScript before 5
  // cannot follow '.ts' there.
  for (const name of await readdir(outDir)) {
    if (!name.endsWith('.d.ts')) continue;
    const file = join(outDir, name);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.replace(/((?:from\s+|import\()['"]\.{1,2}\/[^'"]+)\.ts(['"])/g, '$1.js$2'));
  }
}

if (import.meta.main) {
  const { values } = cli(USAGE, { 'out-dir': { type: 'string' } });
  const out = values['out-dir'] ?? join(SDK_DIR, 'dist');
  await buildSdk(out).catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  process.stdout.write(`built the TypeScript SDK into ${out.replace(`${ROOT}/`, '')}\n`);
}
