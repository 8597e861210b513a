// Test worlds go through the commission lifecycle (issue 38, item 7): no file under test/ writes a
// commission's state, a payout or the ledger by SQL (an `insert into commissions`, an `update commissions`,
// an insert or update of payouts, payout_items or ledger_entries, a balance set by hand), nor calls the
// lifecycle's own writer (shared/commissions/dal.ts) past its rules. Commissions are created, held, approved,
// paid, refunded and paid out with test/helpers/commissions.ts, which runs the lifecycle
// (shared/commissions/lifecycle.ts) and the operations the services run, so a new lifecycle rule is a rule
// every test world obeys. A world the lifecycle cannot make (a database older than today's schema, a fault
// injected on purpose) is written by hand under a `// world-by-hand: <why>` comment at most six lines above
// the statement; this test lists every other hand-written one, with its file and line.
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from '../../scripts/lib/stack/stack.ts';

/** The SQL a test may not write: commission states, payouts, ledger rows, balances. */
const HAND_WRITES: { what: string; re: RegExp }[] = [
  { what: 'a commission inserted', re: /\binsert\s+into\s+commissions\b/gi },
  { what: "a commission's columns set", re: /\bupdate\s+commissions\b/gi },
  { what: 'a payout written', re: /\b(?:insert\s+into|update)\s+(?:payouts|payout_items)\b/gi },
  { what: 'a ledger entry written', re: /\b(?:insert\s+into|update)\s+ledger_entries\b/gi },
  {
    // The lifecycle's writer (writeCommissions, insertCommissions) writes what it is told, past the rules.
    what: "the lifecycle's writer imported",
    re: /^import\s+(?!type\b)[^;]*?from\s+'[^']*shared\/commissions\/dal\.ts'/gm,
  },
  {
    what: 'a balance set',
    re: /\bupdate\s+(?:partners|partner_programs)\s+set\b[^;`]*?\bbalance_cents\b/gi,
  },
];

const MARK = /\/\/\s*world-by-hand:\s*\S/;
const MARK_REACH = 6;

/** The hand-written states in a file's text: one line each, `what` and the line number. */
export function handWrites(text: string): { line: number; what: string }[] {
  const lines = text.split('\n');
  const found: { line: number; what: string }[] = [];
  for (const { what, re } of HAND_WRITES) {
    for (const m of text.matchAll(re)) {
      const line = text.slice(0, m.index).split('\n').length;
      const above = lines.slice(Math.max(0, line - 1 - MARK_REACH), line);
      if (!above.some((l) => MARK.test(l))) found.push({ line, what });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'node_modules' && name !== 'fixtures' && name !== 'screenshots') walk(p, out);
    } else if (/\.tsx?$/.test(name)) out.push(p);
  }
  return out;
}

const SELF = relative(ROOT, new URL(import.meta.url).pathname);

t.test('the rule, on small texts', async (t) => {
  t.same(handWrites("await sql`update commissions set status = 'paid' where id = 1`;"), [
    { line: 1, what: "a commission's columns set" },
  ]);
  t.same(
    handWrites(
      'const x = 1;\nawait sql`\n  insert into commissions (sale_id)\n  values (1)`;\nawait sql`insert into\n payouts (id) values (1)`;',
    ),
    [
      { line: 3, what: 'a commission inserted' },
      { line: 5, what: 'a payout written' },
    ],
    'across lines, with their line numbers',
  );
  t.same(handWrites('await sql`update partner_programs set balance_cents = 5 where id = 1`;'), [
    { line: 1, what: 'a balance set' },
  ]);
  t.same(handWrites('await tx`insert into ledger_entries (entry_key) values (1)`;'), [
    { line: 1, what: 'a ledger entry written' },
  ]);
  t.same(
    handWrites(
      "import type { CommissionRecord } from '../../shared/commissions/dal.ts';\nimport { writeCommissions } from '../../shared/commissions/dal.ts';",
    ),
    [{ line: 2, what: "the lifecycle's writer imported" }],
    'its types may be read, its writer not called',
  );
  t.same(
    handWrites(
      '// world-by-hand: a database older than the lifecycle\nawait sql`insert into commissions (id) values (1)`;',
    ),
    [],
    'a marked world is allowed',
  );
  t.same(
    handWrites('// world-by-hand:\nawait sql`insert into commissions (id) values (1)`;'),
    [{ line: 2, what: 'a commission inserted' }],
    'the mark must say why',
  );
  t.same(
    handWrites("// world-by-hand: far above\n\n\n\n\n\n\nawait sql`update commissions set status = 'paid'`;"),
    [{ line: 8, what: "a commission's columns set" }],
    'the mark must be near the statement',
  );
  t.same(
    handWrites(
      "select status from commissions where id = 1; update partners set name = 'x'; select payout_id, deducted_cents from commissions",
    ),
    [],
    'reads and other tables are not writes of a commission world',
  );
});

t.test('no file under test/ writes a commission world by hand', async (t) => {
  const files = walk(join(ROOT, 'test')).filter((f) => relative(ROOT, f) !== SELF);
  t.ok(files.length > 100, `${files.length} files read`);
  const found = files.flatMap((f) =>
    handWrites(readFileSync(f, 'utf8')).map((h) => `${relative(ROOT, f)}:${h.line}: ${h.what}`),
  );
  t.same(
    found,
    [],
    'make it through test/helpers/commissions.ts (the lifecycle), or say why it cannot be: // world-by-hand: <why>',
  );
});
