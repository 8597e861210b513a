// Running an import, one command at a time (docs/importing.md "Running: one page per command"): a command
// names the import and the seq it waits for; the runner reads the step's next page from the source
// (outside any transaction: waits for the rate limit or a 429 hold no lock), then in one transaction
// applies it, moves step, cursor and seq on, and queues the next command in the outbox, or ends the
// import. A crash anywhere loses nothing and applies nothing twice: before the commit the command is
// delivered again and reads the same page; after it, the command is stale (seq moved on) and the next one
// is in the outbox. A cancel, a failed source or a program deleted meanwhile end the import; the
// credentials and the uploaded file are deleted then, in the same statement.
import type { Sql, Tx } from '../db/sql.ts';
import type { Logger } from '../logger.ts';
import type { AddressPolicy } from '../webhooks/address.ts';
import { queueNotifications } from '../db/notifications.ts';
import { beginRetrying } from '../db/transactions.ts';
import { isOutage } from '../pipeline/dependencies.ts';
import { applyPage } from './apply.ts';
import { queueImportCommand } from './commands.ts';
import type { ImportCommand } from './commands.ts';
import { sourceGet, SourceError } from './http.ts';
import { acquire, limitKey } from './rate-limit.ts';
import type { RateLimit } from './rate-limit.ts';
import { addCounts, writeErrors } from './refs.ts';
import type { ImportScope } from './refs.ts';
import { unseal } from './secrets.ts';
import { SOURCES } from './sources/index.ts';
import type { Counts, ImportOptions, Page, SourceName } from './types.ts';

export interface RunnerDeps {
  sql: Sql;
  log: Logger;
  kafkaPrefix: string;
  /** IMPORT_SECRET_KEY (null: not set, imports with credentials fail saying so). */
  secretKey: Buffer | null;
  /** The SSRF rules (WEBHOOK_ALLOW_PRIVATE, WEBHOOK_RESOLVE). */
  policy: AddressPolicy;
  timeoutMs: number;
  /** IMPORT_RATE_LIMIT: replaces every source's own limit; undefined: each source's. */
  rateLimit?: RateLimit | null;
  /** Aborted when the process stops: a wait in hand ends, and the command is delivered again later. */
  stopping: AbortSignal;
}

interface ImportRow {
  id: string;
  program_id: string;
  source: SourceName;
  status: string;
  step: string;
  cursor: string | null;
  seq: number;
  dry_run: boolean;
  options: ImportOptions;
  credentials: Buffer | null;
  csv: string | null;
  counts: Partial<Counts>;
  workspace_id: string | null;
  currency: string;
  hold_days: number;
  program_name: string;
  deleted: boolean;
}

/** The import was canceled (or ended) while its page was read: the command has nothing left to do. */
class Ended extends Error {}
/** The process is stopping: the command is left for a later delivery. */
export class Stopping extends Error {}

const LIVE = ['queued', 'running'];

async function load(db: Sql | Tx, id: number, lock = false) {
  const [row] = await db<ImportRow[]>`
    select i.id, i.program_id, i.source, i.status, i.step, i.cursor, i.seq, i.dry_run, i.options, i.credentials,
           i.csv, i.counts, p.workspace_id, trim(p.currency) as currency, p.hold_days,
           p.name as program_name, p.deleted_at is not null as deleted
    from imports i join programs p on p.id = i.program_id
    where i.id = ${id} ${lock ? db`for update of i` : db``}`;
  return row;
}

/** Ends the import (failed or canceled), deleting what it kept of the source; false when it had ended. */
export async function endImport(
  db: Sql | Tx,
  kafkaPrefix: string,
  id: number,
  status: 'failed' | 'canceled' | 'completed',
  error: string | null,
): Promise<boolean> {
  const [row] = await db<
    { program_id: string; workspace_id: string | null; source: string; dry_run: boolean }[]
  >`
    update imports i set status = ${status}, error = ${error}, finished_at = now(), updated_at = now(),
           credentials = null, csv = null, started_at = coalesce(started_at, now())
    from programs p
    where i.id = ${id} and i.status = any(${LIVE}::text[]) and p.id = i.program_id
    returning i.program_id, p.workspace_id, i.source, i.dry_run`;
  if (!row) return false;
  // A dry run's record of what it would have created is of no use once it ended.
  await db`delete from import_refs where dry_run_of = ${id}`;
  if (row.workspace_id !== null && status !== 'canceled') {
    await queueNotifications(db, kafkaPrefix, [
      {
        notification_key: `import:${id}:${status}`,
        recipient_type: 'advertiser',
        partner_id: null,
        workspace_id: Number(row.workspace_id),
        program_id: Number(row.program_id),
        kind: status === 'completed' ? 'import_completed' : 'import_failed',
        title: `${row.dry_run ? 'Dry run of the import' : 'Import'} from ${SOURCES[row.source as SourceName].label.replace(/^The /, '')} ${status === 'completed' ? 'completed' : 'failed'}`,
        body: error ?? 'See its counts and error rows on the Import page.',
        data: { import_id: id },
      },
    ]);
  }
  return true;
}

function nextPosition(
  source: SourceName,
  step: string,
  page: Page,
): { step: string; cursor: string | null } | null {
  if (page.next !== null) return { step, cursor: page.next };
  const steps = SOURCES[source].steps;
  const i = steps.indexOf(step);
  return i + 1 < steps.length ? { step: steps[i + 1]!, cursor: null } : null;
}

/** Waits `ms`, checking every second that the import still runs and the process is not stopping. */
function waiter(deps: RunnerDeps, id: number) {
  return async (ms: number) => {
    const until = Date.now() + ms;
    for (;;) {
      if (deps.stopping.aborted) throw new Stopping('stopping');
      const left = until - Date.now();
      if (left <= 0) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1000));
        deps.stopping.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
      const [row] = await deps.sql<{ status: string }[]>`select status from imports where id = ${id}`;
      if (!row || !LIVE.includes(row.status)) throw new Ended('ended');
    }
  };
}

export type RunResult = 'applied' | 'completed' | 'stale' | 'failed';

/** Runs one command; throws only for an outage or a stop (the command is then delivered again). */
export async function runCommand(deps: RunnerDeps, cmd: ImportCommand): Promise<RunResult> {
  const row = await load(deps.sql, cmd.import_id);
  if (!row || !LIVE.includes(row.status) || row.seq !== cmd.seq) return 'stale';
  const id = Number(row.id);
  try {
    return await runPage(deps, row, id);
  } catch (err) {
    if (err instanceof Ended) return 'stale';
    if (err instanceof Stopping || isOutage(err)) throw err;
    const message =
      err instanceof SourceError
        ? err.message
        : 'The import stopped on an internal error; the import worker logged it';
    if (!(err instanceof SourceError)) deps.log.error({ err, importId: id }, 'import failed');
    else deps.log.warn({ importId: id, reason: err.message }, 'import failed');
    await endImport(deps.sql, deps.kafkaPrefix, id, 'failed', message);
    return 'failed';
  }
}

async function runPage(deps: RunnerDeps, row: ImportRow, id: number): Promise<RunResult> {
  const adapter = SOURCES[row.source];
  if (row.deleted) {
    await endImport(deps.sql, deps.kafkaPrefix, id, 'failed', 'The program was deleted');
    return 'failed';
  }
  let credentials: Record<string, string> = {};
  if (adapter.baseUrl !== null) {
    if (deps.secretKey === null || row.credentials === null)
      throw new SourceError(
        'The credentials cannot be read: IMPORT_SECRET_KEY is not set on the import worker',
      );
    try {
      credentials = JSON.parse(unseal(deps.secretKey, Number(row.program_id), row.credentials)) as Record<
        string,
        string
      >;
    } catch {
      throw new SourceError(
        'The credentials cannot be read: IMPORT_SECRET_KEY is not the key they were stored with',
      );
    }
  }
  const wait = waiter(deps, id);
  const baseUrl = row.options.api_base_url ?? adapter.baseUrl ?? '';
  const limit = deps.rateLimit === undefined ? adapter.rateLimit : deps.rateLimit;
  const key = limitKey(row.source, baseUrl, credentials);
  const get = sourceGet(baseUrl, adapter.auth(credentials).headers, {
    policy: deps.policy,
    timeoutMs: deps.timeoutMs,
    maxBytes: 20 * 1024 * 1024,
    ...(limit ? { acquire: () => acquire(deps.sql, key, limit, wait) } : {}),
    wait,
    label: adapter.label,
    onRateLimited: (ms) => deps.log.info({ importId: id, waitMs: ms }, 'source answered 429: waiting'),
  });
  const page = await adapter.fetchPage({ options: row.options, get, csv: row.csv }, row.step, row.cursor);

  // Again when Postgres picks it as a deadlock's victim: a page locks customers a chunk of sales may lock too.
  return beginRetrying(deps.sql, async (tx) => {
    const now = await load(tx, id, true);
    if (!now || !LIVE.includes(now.status) || now.seq !== row.seq) return 'stale' as const;
    const scope: ImportScope = {
      importId: id,
      programId: Number(row.program_id),
      workspaceId: row.workspace_id === null ? null : Number(row.workspace_id),
      source: row.source,
      label: adapter.label,
      dryRun: row.dry_run,
      currency: row.currency,
      holdDays: row.hold_days,
      kafkaPrefix: deps.kafkaPrefix,
    };
    const result = await applyPage(tx, scope, page, row.options);
    await writeErrors(tx, id, result.errors);
    const counts = addCounts(now.counts, result.counts);
    const next = nextPosition(row.source, row.step, page);
    await tx`
      update imports set status = 'running', started_at = coalesce(started_at, now()), updated_at = now(),
             step = ${next?.step ?? 'done'}, cursor = ${next?.cursor ?? null}, seq = seq + 1,
             counts = ${tx.json(counts as never)}
      where id = ${id}`;
    if (next === null) await endImport(tx, deps.kafkaPrefix, id, 'completed', null);
    else await queueImportCommand(tx, deps.kafkaPrefix, id, row.seq + 1);
    return next === null ? ('completed' as const) : ('applied' as const);
  });
}
