// The unit-of-work rule of npm run check:imports (scripts/lib/transaction-rule.ts) on small texts: every way
// of opening a transaction is refused in a route, in a dal.ts and in any other file with SQL, and allowed in
// an operations.ts, a service.ts, a script, a test and a named transaction owner. No Postgres.
import t from 'tap';
import {
  TRANSACTION_OWNERS,
  holdsSql,
  transactionProblem,
  transactionProblems,
} from '../../scripts/lib/transaction-rule.ts';

/** A file that opens a transaction on line 3 in the given form, with SQL of its own inside it. */
const FORMS = {
  '.begin(': 'sql.begin(async (tx) => tx`select 1`);',
  'beginRetrying(': 'beginRetrying(sql, async (tx) => tx`select 1`);',
  '.savepoint(': 'tx.savepoint(async (sp) => sp`select 1`);',
} as const;
const opening = (form: keyof typeof FORMS) => `// a file\nexport const f = (sql, tx) =>\n  ${FORMS[form]}\n`;

const REFUSED = {
  route: 'services/api/modules/keys/routes.ts',
  'route under routes/': 'services/ingress/routes/hook.ts',
  dal: 'services/api/modules/keys/dal.ts',
  'file of SQL': 'shared/db/rollups-week.ts',
} as const;

for (const form of Object.keys(FORMS) as (keyof typeof FORMS)[]) {
  t.test(`${form} is refused in a route, a dal and another file of SQL`, async (t) => {
    for (const [what, path] of Object.entries(REFUSED)) {
      const kind = what.startsWith('route') ? 'route' : what;
      t.match(
        transactionProblem(path, opening(form)),
        `transaction opened in a ${kind}: ${path}:3 by ${form}…)`,
        `${what}: ${path}`,
      );
    }
  });

  t.test(`${form} is allowed in operations.ts, service.ts, scripts, tests and named owners`, async (t) => {
    const allowed = [
      'services/api/modules/keys/operations.ts',
      'services/api/modules/keys/service.ts',
      'shared/importing/operations.ts',
      'scripts/seed.ts',
      'scripts/lib/seed.ts',
      'test/integration/keys.test.ts',
      'sdk/typescript/src/client.test.ts',
      ...Object.keys(TRANSACTION_OWNERS),
    ];
    for (const path of allowed) t.equal(transactionProblem(path, opening(form)), null, path);
  });
}

t.test('a route may not open one even without SQL of its own, nor a dal; another file may', async (t) => {
  const calls = 'export const f = (sql) =>\n  sql.begin((tx) => dal.insertKey(tx));\n';
  t.match(transactionProblem('services/api/modules/keys/routes.ts', calls), 'transaction opened in a route');
  t.match(transactionProblem('services/api/modules/keys/dal.ts', calls), 'transaction opened in a dal');
  // No SQL of its own: it only calls the SQL of others, as an operations file does (a worker's sweep).
  t.equal(transactionProblem('services/workers/ledger/approval-sweep.ts', calls), null);
});

t.test('a route is never allowed, whatever its name', async (t) => {
  t.match(
    transactionProblem('services/ingress/routes/operations.ts', opening('.begin(')),
    'transaction opened in a route: services/ingress/routes/operations.ts:3',
  );
});

t.test('a file of SQL that opens nothing, and a transaction named in a comment, pass', async (t) => {
  t.equal(transactionProblem('shared/db/rollups-raw.ts', 'export const q = (tx) => tx`select 1`;\n'), null);
  const commented =
    '// callers run it in sql.begin(…) or tx.savepoint(…)\nexport const q = (tx) => tx`select 1`;\n';
  t.equal(transactionProblem('services/api/modules/keys/dal.ts', commented), null);
  t.equal(transactionProblem('services/api/modules/keys/dal.ts', ' * see sql.begin(fn)\n'), null);
});

t.test('what counts as SQL: the tags of a connection or a transaction, and .unsafe(', async (t) => {
  t.ok(holdsSql('await sql`select 1`'));
  t.ok(holdsSql('const [row] = await tx<Row[]>`select 1`'));
  t.ok(holdsSql('return db`and day >= ${first}`'));
  t.ok(holdsSql('await sp`update t set x = 1`'));
  t.ok(holdsSql('await sql.unsafe(text)'));
  t.notOk(holdsSql('throw new Error(`no ${what}`)'));
  t.notOk(holdsSql("const doc = 'pass the caller`s `tx` along';"));
  t.notOk(holdsSql('// the caller gives its tx`s rows'));
});

t.test('the whole tree: each problem once, and an owner that needs no entry is reported', async (t) => {
  const [owner] = Object.keys(TRANSACTION_OWNERS);
  const files = new Map([
    ['services/api/modules/keys/routes.ts', opening('.begin(')],
    ['services/api/modules/keys/operations.ts', opening('beginRetrying(')],
    ['shared/db/rollups-week.ts', opening('.savepoint(')],
    [owner!, 'export const q = (tx) => tx`select 1`;\n'],
  ]);
  const problems = transactionProblems(files);
  t.equal(problems.length, 3, problems.join('\n'));
  t.match(problems[0], 'routes.ts:3');
  t.match(problems[1], 'rollups-week.ts:3');
  t.match(problems[2], `needless transaction owner: ${owner}`);
  t.same(transactionProblems(new Map([[owner!, opening('.begin(')]])), [], 'an owner that opens one is fine');
});
