// What every svc command works with: the options and arguments, the service's base URL and credential, the
// API client (shared/http/client.ts, the dashboard's too, typed by the OpenAPI paths) and the output (a
// plain-text table, or the API's JSON with --json).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { integerIn } from '../../shared/cli-args.ts';
import { createApi } from '../../shared/http/client.ts';
import type { Api, ApiError } from '../../shared/http/client.ts';
import type { paths } from '../../sdk/typescript/src/openapi.ts';

export const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  strict: true,
  options: {
    url: { type: 'string' },
    token: { type: 'string' },
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
    email: { type: 'string' },
    password: { type: 'string' },
    name: { type: 'string' },
    workspace: { type: 'string' },
    'workspace-id': { type: 'string' },
    slug: { type: 'string' },
    'cookie-days': { type: 'string' },
    currency: { type: 'string' },
    percent: { type: 'string' },
    'flat-cents': { type: 'string' },
    origins: { type: 'string' },
    status: { type: 'string' },
    'short-link': { type: 'string' },
    role: { type: 'string' },
    scopes: { type: 'string' },
    programs: { type: 'string' },
    expires: { type: 'string' },
    account: { type: 'string' },
    charges: { type: 'boolean' },
    payouts: { type: 'boolean' },
    details: { type: 'boolean' },
    type: { type: 'string' },
    page: { type: 'string' },
    'page-size': { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    period: { type: 'string' },
    aff: { type: 'string' },
    'customer-key': { type: 'string' },
    'amount-cents': { type: 'string' },
    outcome: { type: 'string' },
    events: { type: 'string' },
    description: { type: 'string' },
    reason: { type: 'string' },
    unread: { type: 'boolean' },
    'hold-days': { type: 'string' },
    'min-payout-cents': { type: 'string' },
    partner: { type: 'string' },
    limit: { type: 'string' },
    offset: { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string' },
    reference: { type: 'string' },
    file: { type: 'string' },
    'api-base-url': { type: 'string' },
    campaigns: { type: 'string' },
    'include-inactive': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    wait: { type: 'boolean' },
    'secret-env': { type: 'string' },
  },
});

/** A command of the table: `svc programs list` is the entry 'programs list'. */
export type Commands = Record<string, () => Promise<void>>;

/** What svc prints as `svc: <message>` before exiting 1. */
export class CliError extends Error {}

export const base = (o.url ?? process.env.SVC_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');

/** Where `svc login` keeps its sessions, one per base URL. */
const CREDENTIALS = join(
  process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'),
  'svc',
  'credentials.json',
);

async function savedSessions(): Promise<Record<string, string>> {
  return readFile(CREDENTIALS, 'utf8').then(
    (t) => JSON.parse(t) as Record<string, string>,
    () => ({}),
  );
}

/** Forgets every remembered session (`svc logout`). */
export async function forget(): Promise<void> {
  await rm(CREDENTIALS, { force: true });
}

/** Remembers the session of `base` (`svc login`). */
export async function remember(session: string): Promise<void> {
  const saved = await savedSessions();
  await mkdir(dirname(CREDENTIALS), { recursive: true });
  await writeFile(CREDENTIALS, JSON.stringify({ ...saved, [base]: session }, null, 2), { mode: 0o600 });
}

async function token(): Promise<string> {
  if (o.token) return o.token;
  if (process.env.SVC_TOKEN) return process.env.SVC_TOKEN;
  const t = (await savedSessions())[base];
  if (!t) throw new CliError(`not logged in to ${base}: run \`svc login --email …\` or pass --token`);
  return t;
}

/** The API without a credential: logging in, signing up, the tracking routes. */
export const anonymous: Api<paths> = createApi<paths>({ baseUrl: base });

/**
 * The API with the credential: --token, $SVC_TOKEN, then the session `svc login` remembered (read as the
 * call is sent, after its arguments were checked).
 */
export const api: Api<paths> = createApi<paths>({
  baseUrl: base,
  headers: async () => ({ authorization: `Bearer ${await token()}` }),
});

/** An API error as svc says it: the call, the status and the API's `error` (or its body as is). */
export function cliErrorOf(err: ApiError): CliError {
  if (err.status === 0)
    return new CliError(`cannot reach ${base}: ${(err.cause as Error | undefined)?.message}`);
  return new CliError(`${err.request}: ${err.status} ${err.error ?? err.body}`);
}

/** Positional argument `i`. */
export function arg(i: number, what: string): string {
  const v = positionals[i];
  if (v === undefined) throw new CliError(`missing ${what}; see svc --help`);
  return v;
}

/**
 * An argument or option as typed where the route takes a number, one of some words or a list of them, or
 * requires it: sent as is (absent stays absent), so that the API's 400 says what is wrong or missing.
 */
export const given = (v: string | string[] | undefined): never => v as never;

/** Positional argument `i` where the route takes an id (given). */
export const idArg = (i: number, what: string): number => given(arg(i, what));

export function int(v: string | undefined, what: string): number {
  const n = integerIn(v, -Infinity, Infinity);
  if (n === null) throw new CliError(`${what} must be an integer`);
  return n;
}

/** `a,b` as a list (undefined when the option is absent). */
export function list(v: string | undefined): string[] | undefined {
  return v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** The `workspace_id` query of workspace-level routes (--workspace-id). */
export const workspace = () => ({ workspace_id: given(o['workspace-id']) as number | undefined });

/** Plain-text table of rows (objects), with the given columns. */
export function table(rows: Record<string, unknown>[], cols: string[]): string {
  const cell = (v: unknown) =>
    v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [
    line(cols),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(cols.map((c) => cell(r[c])))),
  ].join('\n');
}

/** The answer as a table of `cols` (its `data`, a list or one row), or as JSON (--json, or no columns). */
export function show(result: unknown, cols?: string[]): void {
  if (o.json || !cols) {
    process.stdout.write(JSON.stringify(result ?? null, null, 2) + '\n');
    return;
  }
  const data = (result as { data?: unknown }).data ?? result;
  const rows = Array.isArray(data) ? (data as Record<string, unknown>[]) : [data as Record<string, unknown>];
  process.stdout.write(table(rows, cols) + '\n');
}

export async function prompt(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new CliError('no password: pass --password or set SVC_PASSWORD');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
