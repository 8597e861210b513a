// The SDK's drift check (npm run check:sdk): it passes on the committed types and fails, naming the one
// command that regenerates them, when they differ from what the routes' OpenAPI gives.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { TYPES_FILE } from '../../scripts/sdk-types.ts';

const exec = promisify(execFile);
const tmp = await mkdtemp(join(tmpdir(), 'svc-sdk-types-'));
t.teardown(() => rm(tmp, { recursive: true, force: true }));

async function check(file: string): Promise<{ code: number; out: string }> {
  try {
    const r = await exec(process.execPath, ['scripts/sdk-types.ts', '--check', '--file', file], {
      cwd: ROOT,
    });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const committed = await readFile(TYPES_FILE, 'utf8');

t.test('the committed types match the routes', async (t) => {
  const r = await check(TYPES_FILE);
  t.equal(r.code, 0, r.out);
  t.match(r.out, /matches the routes' OpenAPI/);
});

t.test('a route missing from the types (one added since they were generated) fails the check', async (t) => {
  const file = join(tmp, 'stale.ts');
  const start = committed.indexOf('    "/api/v1/track/refund": {');
  const end = committed.indexOf('    "/api/tracking/refund": {');
  t.ok(start > 0 && end > start);
  await writeFile(file, committed.slice(0, start) + committed.slice(end));
  const r = await check(file);
  t.equal(r.code, 1);
  t.match(r.out, /out of date/);
  t.match(r.out, /npm run sdk:types/, 'names the command that regenerates them');
  t.equal(
    await readFile(file, 'utf8'),
    committed.slice(0, start) + committed.slice(end),
    '--check writes nothing',
  );
});

t.test('sdk:types writes what the check expects', async (t) => {
  const file = join(tmp, 'fresh.ts');
  await exec(process.execPath, ['scripts/sdk-types.ts', '--file', file], { cwd: ROOT });
  t.equal(await readFile(file, 'utf8'), committed);
  t.equal((await check(file)).code, 0);
});
