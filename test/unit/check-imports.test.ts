// The import-rule check (npm run check:imports) on small trees of its own: it reads .tsx files as well as
// .ts (a cycle through the dashboard's components is a cycle), type-only imports count, and a tree without
// a cycle or a broken layer passes.
import t from 'tap';
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../../scripts/lib/stack.ts';

const exec = promisify(execFile);

async function tree(t: Test, files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'svc-check-imports-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

async function check(root: string): Promise<{ code: number; out: string }> {
  try {
    const r = await exec(process.execPath, ['scripts/check-imports.ts', '--root', root], { cwd: ROOT });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const page = 'services/dashboard/src/pages/settings';

t.test('a type-only cycle between two .tsx components fails, naming both files', async (t) => {
  const root = await tree(t, {
    [`${page}/Webhooks.tsx`]: `import { Deliveries } from './Deliveries.tsx';\nexport type Endpoint = { id: string };\nexport const Webhooks = () => Deliveries;\n`,
    [`${page}/Deliveries.tsx`]: `import type { Endpoint } from './Webhooks.tsx';\nexport const Deliveries = (e: Endpoint) => e.id;\n`,
  });
  const r = await check(root);
  t.equal(r.code, 1, r.out);
  t.match(r.out, `import cycle: ${page}/Deliveries.tsx, ${page}/Webhooks.tsx`);
  t.match(r.out, /2 files, 1 import problems/);
});

t.test('a cycle through a .ts module and a .tsx component fails', async (t) => {
  const root = await tree(t, {
    'services/dashboard/src/api.ts': `import type { Row } from './Table.tsx';\nexport const rows: Row[] = [];\n`,
    'services/dashboard/src/Table.tsx': `import { rows } from './api.ts';\nexport type Row = { id: string };\nexport const n = rows.length;\n`,
  });
  const r = await check(root);
  t.equal(r.code, 1, r.out);
  t.match(r.out, 'import cycle: services/dashboard/src/Table.tsx, services/dashboard/src/api.ts');
});

t.test('the same components with the shared type in a third file pass', async (t) => {
  const root = await tree(t, {
    [`${page}/types.ts`]: `export type Endpoint = { id: string };\n`,
    [`${page}/Webhooks.tsx`]: `import { Deliveries } from './Deliveries.tsx';\nexport const Webhooks = () => Deliveries;\n`,
    [`${page}/Deliveries.tsx`]: `import type { Endpoint } from './types.ts';\nexport const Deliveries = (e: Endpoint) => e.id;\n`,
  });
  const r = await check(root);
  t.equal(r.code, 0, r.out);
  t.match(r.out, /3 files, 0 import problems/);
});

t.test('a .tsx file under shared/ importing from services/ breaks a layer', async (t) => {
  const root = await tree(t, {
    'services/dashboard/src/format.ts': `export const f = 1;\n`,
    'shared/ui/Badge.tsx': `import { f } from '../../services/dashboard/src/format.ts';\nexport const b = f;\n`,
  });
  const r = await check(root);
  t.equal(r.code, 1, r.out);
  t.match(r.out, 'shared imports outside shared: shared/ui/Badge.tsx -> services/dashboard/src/format.ts');
});
