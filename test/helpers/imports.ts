// Imports in API tests (docs/importing.md): started through the real API (JSON, or a CSV file), waited for
// by their status (a condition, never a pause), and read back with their error rows.
import { bearer, getJson, send } from './accounts.ts';
import type { User } from './accounts.ts';
import { waitFor } from './stack.ts';
import type { Services } from './stack.ts';

/** A key for IMPORT_SECRET_KEY (32 bytes, hex); the tests' own. */
export const TEST_IMPORT_KEY = 'f'.repeat(8) + '0123456789abcdef'.repeat(3) + '01234567';

export interface Counts {
  [kind: string]: { created: number; updated: number; skipped: number; failed: number };
}
export interface Import {
  id: number;
  program_id: number;
  source: string;
  status: 'queued' | 'running' | 'completed' | 'failed' | 'canceled';
  step: string;
  dry_run: boolean;
  counts: Counts;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
  options: Record<string, unknown>;
}
export interface ErrorRow {
  kind: string;
  external_id: string;
  code: string;
  message: string;
}

const base = (svc: Pick<Services, 'baseUrl'>, programId: number) =>
  `${svc.baseUrl}/api/advertiser/affiliate-programs/${programId}/imports`;

/** POST …/imports (JSON); the raw answer. */
export function postImport(svc: Pick<Services, 'baseUrl'>, owner: User, programId: number, body: unknown) {
  return send('POST', base(svc, programId), body, bearer(owner.session));
}

/** POST …/imports?source=csv with the file; the raw answer. */
export async function postCsv(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  csv: string,
  query = 'source=csv',
) {
  const res = await fetch(`${base(svc, programId)}?${query}`, {
    method: 'POST',
    headers: { 'content-type': 'text/csv', ...bearer(owner.session) },
    body: csv,
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: res.status, body, text };
}

export async function importOf(svc: Pick<Services, 'baseUrl'>, owner: User, programId: number, id: number) {
  const r = await getJson(`${base(svc, programId)}/${id}`, bearer(owner.session));
  if (r.status !== 200) throw new Error(`import ${id}: ${r.status} ${r.text}`);
  return r.body.data as Import;
}

/** Waits until the import has ended (completed, failed or canceled); returns it. */
export function finished(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  id: number,
  timeoutMs = 120_000,
) {
  return waitFor(
    `import ${id} to end`,
    async () => {
      const i = await importOf(svc, owner, programId, id);
      return ['completed', 'failed', 'canceled'].includes(i.status) ? i : null;
    },
    timeoutMs,
    100,
  );
}

export async function errorsOf(svc: Pick<Services, 'baseUrl'>, owner: User, programId: number, id: number) {
  const r = await getJson(`${base(svc, programId)}/${id}/errors`, bearer(owner.session));
  if (r.status !== 200) throw new Error(`errors of ${id}: ${r.status} ${r.text}`);
  return r.body.data as ErrorRow[];
}

/** Starts an import (JSON) and waits for its end; throws unless 202. */
export async function runImport(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  body: unknown,
): Promise<Import> {
  const r = await postImport(svc, owner, programId, body);
  if (r.status !== 202) throw new Error(`start import: ${r.status} ${r.text}`);
  return finished(svc, owner, programId, (r.body.data as Import).id);
}

/** The counts' created figures by kind, for one assertion. */
export const created = (i: Import) =>
  Object.fromEntries(Object.entries(i.counts).map(([k, v]) => [k, v.created]));
