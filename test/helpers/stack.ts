// What integration tests need from the real stack: the servers scripts/test.ts started (DATABASE_URL,
// KAFKA_BROKERS), the project's own processes started per test file with a unique Kafka prefix (so files
// run in parallel without sharing topics or consumer groups), and data fixtures written with SQL.
import { randomBytes } from 'node:crypto';
import { createSql } from '../../shared/db/sql.ts';
import { migrate } from '../../shared/db/migrate.ts';
import type { Sql } from '../../shared/db/sql.ts';
import { freePort } from '../../scripts/lib/stack/stack.ts';
import { spawnService, waitForWeb, lineWatcher } from '../../scripts/lib/stack/services.ts';
import type { ServiceName, ServiceProcess } from '../../scripts/lib/stack/services.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';

export interface Teardown {
  teardown(fn: () => unknown): void;
  /** tap's: when present and false at teardown, startServices prints its services' last lines. */
  passing?(): boolean;
}

export function stackEnv(): { DATABASE_URL: string; KAFKA_BROKERS: string } {
  const { DATABASE_URL, KAFKA_BROKERS } = process.env;
  if (!DATABASE_URL || !KAFKA_BROKERS) {
    throw new Error('integration tests need DATABASE_URL and KAFKA_BROKERS: run them through `npm test`');
  }
  return { DATABASE_URL, KAFKA_BROKERS };
}

export function testSql(t: Teardown): Sql {
  const sql = createSql(stackEnv().DATABASE_URL, 4, 'svc-test');
  t.teardown(() => sql.end({ timeout: 5 }));
  return sql;
}

/**
 * A database of the test file's own, created and migrated here, for files that act on a whole database:
 * one that terminates every backend of it (restart.test.ts), and those that run a webhook worker, which
 * delivers every due delivery of its database, so in the shared one it also takes the deliveries of the
 * file running beside it (under its own WEBHOOK_RESOLVE and retry schedule: measured, a
 * faults-test delivery refused "hooks.test does not resolve" and put off an hour by the SSRF test's worker)
 * and the leftovers of earlier files. Pass `env` to startServices. Dropped at teardown when nothing holds
 * it any longer (the test stack is thrown away anyway).
 */
export async function ownDatabase(t: Teardown): Promise<{ sql: Sql; env: { DATABASE_URL: string } }> {
  const base = stackEnv().DATABASE_URL;
  const name = `svc_t${randomBytes(5).toString('hex')}`;
  const admin = createSql(base, 1, 'svc-test-admin');
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  await migrate(url.toString(), { info() {} });
  const sql = createSql(url.toString(), 4, 'svc-test');
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    const a = createSql(base, 1, 'svc-test-admin');
    await a.unsafe(`drop database if exists ${name}`).catch(() => {});
    await a.end({ timeout: 5 });
  });
  return { sql, env: { DATABASE_URL: url.toString() } };
}

export interface Services {
  baseUrl: string;
  prefix: string;
  env: Record<string, string>;
  procs: Map<ServiceName, ServiceProcess>;
  output: string[];
  start(name: ServiceName): Promise<ServiceProcess>;
  kill(name: ServiceName): Promise<void>;
  stop(name: ServiceName): Promise<void>;
}

/** How long a service may take to start (a bound on a wait, never a pause). */
const START_MS = 180_000;

/** Starts the named services for one test file; all are stopped at teardown. */
export async function startServices(
  t: Teardown,
  names: ServiceName[],
  extraEnv: Record<string, string> = {},
): Promise<Services> {
  const port = await freePort();
  const prefix = `t${randomBytes(4).toString('hex')}.`;
  const env: Record<string, string> = {
    ...stackEnv(),
    PORT: String(port),
    KAFKA_PREFIX: prefix,
    KAFKA_CLICK_PARTITIONS: '4',
    LOG_LEVEL: 'warn',
    CACHE_POLL_MS: '100',
    // The approval sweep approves due commissions of the whole database, whichever test file made them: only
    // the files that test it turn it on (APPROVAL_SWEEP_MS), so no other file's commissions move under it.
    APPROVAL_SWEEP_MS: 'off',
    // Every test file signs up and signs in from loopback, all against one database: the per-address sign-in
    // and signup limits would be one bucket for the whole suite. The files that test those limits send
    // X-Forwarded-For addresses of their own (or set AUTH_RATE_LIMIT_EXEMPT to '').
    AUTH_RATE_LIMIT_EXEMPT: '127.0.0.1,::1',
    ...extraEnv,
  };
  const output: string[] = [];
  const watcher = lineWatcher();
  const procs = new Map<ServiceName, ServiceProcess>();
  const svc: Services = {
    baseUrl: `http://127.0.0.1:${port}`,
    prefix,
    env,
    procs,
    output,
    async start(name) {
      let joined = false;
      const p = spawnService(name, {
        env: name === 'web' ? env : { ...env, LOG_LEVEL: 'info' },
        onLine: (line) => {
          if (output.length < 5000) output.push(`[${name}] ${line}`);
          if (line.includes('joined its group')) joined = true;
          watcher.onLine(`[${name}] ${line}`);
        },
      });
      procs.set(name, p);
      // A consuming worker is started once it has joined its group: it says "running" before that, and a
      // command sent then finds no owner of its partition (503 after ORPHAN_GRACE_MS) on a slow machine.
      // Three minutes to start: with every core busy (several test runs at once) a web process took over one.
      const ready =
        name === 'web'
          ? waitForWeb(p, port, START_MS)
          : watcher
              .waitFor(new RegExp(`\\[${name}\\].*(${name}|click worker) running`), START_MS)
              .then((line) =>
                line.includes('"topic"')
                  ? waitFor(`${name} to join its consumer group`, async () => joined, 120_000, 20)
                  : undefined,
              );
      await Promise.race([
        ready,
        p.exited.then((code) => {
          throw new Error(`${name} exited with code ${code}`);
        }),
      ]).catch((err: Error) => {
        const tail = output.filter((l) => l.startsWith(`[${name}]`)).slice(-20);
        throw new Error(`${name} did not start: ${err.message}\n${tail.join('\n')}`);
      });
      return p;
    },
    async kill(name) {
      await procs.get(name)?.kill();
    },
    async stop(name) {
      await procs.get(name)?.stop();
    },
  };
  t.teardown(async () => {
    if (t.passing && !t.passing()) {
      // What the services said last: the only trace of a worker's side of a failure CI saw once.
      process.stderr.write(`# the services' last lines (${prefix}):\n`);
      for (const name of procs.keys()) {
        const lines = output.filter((l) => l.startsWith(`[${name}]`)).slice(-15);
        for (const line of lines) process.stderr.write(`#   ${line.slice(0, 400)}\n`);
      }
    }
    await Promise.all([...procs.values()].map((p) => p.stop()));
  });
  for (const name of names) await svc.start(name);
  return svc;
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | null | undefined | false>,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface ProgramFixture {
  id: number;
  token: string;
  slug: string;
}
export interface LinkFixture {
  id: number;
  shortLink: string;
  partnerId: number;
  partnerProgramId: number;
  programId: number;
}

const uniq = () => randomBytes(5).toString('hex');

export async function createProgram(
  sql: Sql,
  opts: {
    cookieWindowDays?: number;
    allowedOrigins?: string[];
    status?: 'draft' | 'live';
    workspaceId?: number;
  } = {},
): Promise<ProgramFixture> {
  const token = generateSecret('aff_');
  const slug = `p-${uniq()}`;
  const [ws] =
    opts.workspaceId === undefined
      ? await sql<{ id: string }[]>`insert into workspaces (name) values ('test') returning id`
      : [{ id: String(opts.workspaceId) }];
  const [p] = await sql<{ id: string }[]>`
    insert into programs (workspace_id, name, slug, status, cookie_window_days, allowed_origins, api_token_hash, api_token_masked)
    values (${ws!.id}, ${'Program ' + slug}, ${slug}, ${opts.status ?? 'live'}, ${opts.cookieWindowDays ?? 60},
            ${opts.allowedOrigins ?? []}, ${hashSecret(token)}, ${maskSecret(token)})
    returning id`;
  return { id: Number(p!.id), token, slug };
}

export async function createLink(
  sql: Sql,
  programId: number,
  opts: { status?: 'active' | 'inactive'; partnerId?: number; shortLink?: string } = {},
): Promise<LinkFixture> {
  let partnerId = opts.partnerId;
  if (partnerId === undefined) {
    const [partner] = await sql<{ id: string }[]>`
      insert into partners (name, email) values ('Partner', ${`p-${uniq()}@example.com`}) returning id`;
    partnerId = Number(partner!.id);
  }
  const [pp] = await sql<{ id: string }[]>`
    insert into partner_programs (partner_id, program_id) values (${partnerId}, ${programId})
    on conflict (partner_id, program_id) do update set status = partner_programs.status
    returning id`;
  const shortLink = opts.shortLink ?? `l-${uniq()}`;
  const [link] = await sql<{ id: string }[]>`
    insert into referral_links (short_link, program_id, partner_id, partner_program_id, status)
    values (${shortLink}, ${programId}, ${partnerId}, ${pp!.id}, ${opts.status ?? 'active'})
    returning id`;
  return { id: Number(link!.id), shortLink, partnerId, partnerProgramId: Number(pp!.id), programId };
}

export const IPHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
export const DESKTOP_CHROME_UA =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

/** After a dependency comes back: the click worker says it runs again and web's /readyz answers 200. */
export async function waitForRecovery(svc: Pick<Services, 'output' | 'baseUrl'>): Promise<void> {
  await waitFor(
    'the click worker running',
    async () => svc.output.some((l) => /\[click-worker\].*click worker running/.test(l)),
    180_000,
    200,
  );
  await waitFor(
    'web /readyz 200',
    async () => (await fetch(`${svc.baseUrl}/readyz`)).status === 200,
    120_000,
    200,
  );
}
