// npm run check:imports: the dependency rules of the codebase, checked on every CI run.
//   - no import cycles (type-only imports count: a cycle of types is still a knot to untie);
//   - a route file imports no other route file; the API and the ingress import no worker code, and no
//     worker imports the API or the ingress (what two of them need lives in shared/);
//   - shared/ imports nothing from services/, scripts/ or test/.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli } from './lib/cli.ts';

const { values } = cli(
  `Usage: npm run check:imports [-- --root <dir>]

Reads every .ts and .tsx file under services/, shared/, scripts/, bin/, sdk/ and test/ (the dashboard and
portal too), follows their relative imports and prints each import cycle and each import that breaks a
layering rule; exits 1 if there is any.

  --root <dir>  the tree to check (default: this repository)`,
  { root: { type: 'string' } },
);
const ROOT = resolve(values.root ?? join(dirname(fileURLToPath(import.meta.url)), '..'));

const DIRS = ['services', 'shared', 'scripts', 'bin', 'sdk', 'test'];
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'(\.{1,2}\/[^']+)'/g;

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules' && name !== 'public' && name !== 'dist') walk(p, out);
    } else if (/\.tsx?$/.test(p) && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const files = DIRS.filter((d) => existsSync(join(ROOT, d))).flatMap((d) => walk(join(ROOT, d), []));
const graph = new Map<string, string[]>();
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  const deps: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) deps.push(resolve(dirname(f), m[1]!));
  graph.set(f, deps);
}

const rel = (p: string) => relative(ROOT, p);
const problems: string[] = [];

const isRoute = (p: string) => /\/routes(\.ts|\/)/.test(rel(p));
const area = (p: string): string | null => {
  const m = /^services\/(api|ingress|workers|web)\//.exec(rel(p));
  return m ? m[1]! : rel(p).startsWith('shared/') ? 'shared' : null;
};
for (const [from, deps] of graph) {
  for (const to of deps) {
    const a = area(from);
    const b = area(to);
    if (isRoute(from) && isRoute(to) && from !== to)
      problems.push(`route imports route: ${rel(from)} -> ${rel(to)}`);
    if ((a === 'api' || a === 'ingress') && b === 'workers')
      problems.push(`${a} imports worker code: ${rel(from)} -> ${rel(to)}`);
    if (a === 'workers' && (b === 'api' || b === 'ingress' || b === 'web'))
      problems.push(`worker imports ${b}: ${rel(from)} -> ${rel(to)}`);
    if (a === 'shared' && !rel(to).startsWith('shared/'))
      problems.push(`shared imports outside shared: ${rel(from)} -> ${rel(to)}`);
  }
}

// Cycles: Tarjan's strongly connected components; any component with more than one file is a cycle.
let index = 0;
const idx = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
const strong = (v: string): void => {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!idx.has(w)) {
      strong(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
  }
  if (low.get(v) === idx.get(v)) {
    const comp: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1) problems.push(`import cycle: ${comp.map(rel).sort().join(', ')}`);
  }
};
for (const f of graph.keys()) if (!idx.has(f)) strong(f);

for (const p of problems) process.stdout.write(`${p}\n`);
process.stdout.write(`${files.length} files, ${problems.length} import problems\n`);
process.exit(problems.length > 0 ? 1 : 0);
