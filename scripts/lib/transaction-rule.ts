// The unit-of-work rule (docs/architecture.md "One unit of work per write"), as a pure function that
// scripts/check-imports.ts runs on every file and test/unit/check-transactions.test.ts runs on small texts:
// a transaction opens in a module's operations.ts or service.ts, a worker's step or a script, never in a
// route and never in a file of SQL (a dal.ts, or any other file with SQL in it), which takes its caller's
// `tx`. Who may open one:
//   - `operations.ts` and `service.ts`, in any folder: a module's units of work;
//   - `scripts/` and `test/`: tooling and tests, which seed and tear down what they need;
//   - the files of TRANSACTION_OWNERS, each named with its reason: the workers' steps and the pipeline's,
//     whose transaction is the step (a chunk, a page), and an import source's rate limit.
// Everything else with SQL in it that opens one is a problem, and so is a route or a dal that opens one at
// all. A file without SQL of its own may (it is an operations file by another name).

/**
 * The ways code opens a transaction: postgres.js's `sql.begin(` and `tx.savepoint(`, and `beginRetrying(`
 * (shared/db/transactions.ts). A BEGIN statement is not one: postgres.js refuses it on a pool
 * (UNSAFE_TRANSACTION).
 */
const OPENS = /\.begin\(|\bbeginRetrying\(|\.savepoint\(/;

/**
 * SQL in a file: a postgres.js tagged template under the names the code gives a connection or a transaction
 * (sql`…`, tx`…`, db`…`, sp`…`, with a row type or without), or `.unsafe(`. A backtick just before the name
 * is Markdown in a string (`tx`), not a template.
 */
const SQL = /(?<!`)\b(?:sql|tx|db|sp)(?:<[^`]*?>)?`|\.unsafe\(/;

/** A line that is a comment (`//`, or a line of a block comment): what it says opens nothing. */
const COMMENT = /^\s*(?:\/\/|\/\*|\*)/;

/** A route file: `routes.ts`, or any file under a `routes/` folder. */
export const isRoute = (path: string): boolean => /(^|\/)routes(\.ts|\/)/.test(path);

/** A module's data access file, which runs statements in the `tx` it is given. */
export const isDal = (path: string): boolean => /(^|\/)dal\.ts$/.test(path);

/** Tests open transactions to set up and inspect rows: never checked. */
const isTest = (path: string): boolean => path.startsWith('test/') || /\.test\.tsx?$/.test(path);

/** File names that own transactions in any folder: a module's units of work. */
const OWNER_NAMES = ['operations.ts', 'service.ts'];

/** Folders whose files may open transactions: the scripts' seeds, benches and checks write their own rows. */
const OWNER_FOLDERS = ['scripts/', 'test/'];

/**
 * Files with SQL that open their own transactions by design, each with the reason. A worker has no
 * operations file: its step is its unit of work (docs/pipeline.md). A file with no SQL of its own that opens
 * one (a worker's periodic task, the delivery queue, beginRetrying itself) needs no entry: it only calls the
 * SQL of others, as an operations file does. An entry that no longer opens a transaction or holds no SQL is
 * reported, so the list stays the list of owners.
 */
export const TRANSACTION_OWNERS: Readonly<Record<string, string>> = {
  'services/workers/attribution/apply-sale.ts':
    "the sale applier's careful pass: a savepoint around a sale's commission, so a commission that fails does not undo the sale",
  'services/workers/clicks/steps/apply-lead.ts':
    "the lead applier's careful pass: a savepoint around the customer's update, so a conflict does not undo the lead",
  'services/workers/clicks/steps/persist-clicks.ts':
    "the click worker's step: a chunk's clicks, one transaction",
  'services/workers/notifications/apply.ts':
    "the notification worker's step: a chunk's notifications with their mail in the outbox, one transaction",
  'services/workers/relay/relay.ts':
    "the outbox relay's step: the rows it takes are held until they are published",
  'services/workers/webhooks/fan-out.ts':
    "the webhook worker's step: a chunk's events stored and fanned out to deliveries, one transaction",
  'shared/pipeline/command-handler.ts':
    'the command workers (lead, sale, refund) apply a chunk in one transaction, a savepoint per command on the careful pass',
  'shared/importing/run.ts': "the import worker's step: a source page applied in one transaction",
  'shared/importing/rate-limit.ts':
    "an import source's rate limit: its row locked while a token is taken, so two workers never take the same one",
};

const base = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Whether the file may open a transaction (a route never may). */
export function mayOpenTransactions(path: string): boolean {
  if (isRoute(path)) return false;
  return (
    OWNER_NAMES.includes(base(path)) ||
    OWNER_FOLDERS.some((f) => path.startsWith(f)) ||
    Object.hasOwn(TRANSACTION_OWNERS, path)
  );
}

/** The first line (1-based) that opens a transaction, with its form; null when none does. */
export function firstOpening(text: string): { line: number; form: string } | null {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (COMMENT.test(lines[i]!)) continue;
    const m = OPENS.exec(lines[i]!);
    if (m) return { line: i + 1, form: m[0] };
  }
  return null;
}

/** Whether the file has SQL of its own outside its comments. */
export function holdsSql(text: string): boolean {
  return text.split('\n').some((l) => !COMMENT.test(l) && SQL.test(l));
}

/**
 * The rule's problem in one file (`path` relative to the repository root, with `/`), or null: a route,
 * a dal.ts or another file with SQL that opens a transaction and is not allowed to.
 */
export function transactionProblem(path: string, text: string): string | null {
  if (isTest(path) || mayOpenTransactions(path)) return null;
  const kind = isRoute(path) ? 'route' : isDal(path) ? 'dal' : holdsSql(text) ? 'file of SQL' : null;
  if (kind === null) return null;
  const at = firstOpening(text);
  if (at === null) return null;
  const owner =
    kind === 'file of SQL'
      ? ', or name the file in TRANSACTION_OWNERS (scripts/lib/transaction-rule.ts) with the reason'
      : '';
  return `transaction opened in a ${kind}: ${path}:${at.line} by ${at.form}…), open it in an operations or service file and pass the tx${owner}`;
}

/**
 * Every problem of the rule over a tree (paths relative to its root): each file's, and each file of
 * TRANSACTION_OWNERS that is in the tree but opens no transaction or holds no SQL any more (the rule would
 * not ask for it).
 */
export function transactionProblems(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [path, text] of files) {
    const p = transactionProblem(path, text);
    if (p !== null) problems.push(p);
  }
  for (const path of Object.keys(TRANSACTION_OWNERS)) {
    const text = files.get(path);
    if (text !== undefined && (firstOpening(text) === null || !holdsSql(text))) {
      problems.push(
        `needless transaction owner: ${path} opens no transaction or holds no SQL, take it out of TRANSACTION_OWNERS`,
      );
    }
  }
  return problems;
}
