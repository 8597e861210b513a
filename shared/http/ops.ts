// The operations endpoints every process serves on its own port (OPS_PORT), apart from the public one:
// /healthz (the process works), /readyz (it can do its job now: 503 naming what is missing) and /metrics
// (Prometheus text from prom-client). Plain node:http: it must answer even when the app's stack is stuck.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../logger.ts';

/** A dependency check: resolves 'ok' or a short reason; one that takes longer than the bound fails. */
export type Check = () => Promise<'ok' | string>;

export interface Readiness {
  ready: boolean;
  checks: Record<string, string>;
}

const CHECK_TIMEOUT_MS = 1000;

/** Runs every check at once, each bounded, and says which are not ok. */
export async function readiness(checks: Record<string, Check>): Promise<Readiness> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]): Promise<[string, string]> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((res) => {
        timer = setTimeout(() => res(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
      });
      try {
        return [name, await Promise.race([check().catch((err: Error) => err.message || 'failed'), timeout])];
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  const result = Object.fromEntries(entries);
  return { ready: entries.every(([, v]) => v === 'ok'), checks: result };
}

/** The body and status of a readiness answer: 503 `{ error: "not ready: kafka, postgres", checks }`. */
export function readinessAnswer(r: Readiness): { status: number; body: Record<string, unknown> } {
  if (r.ready) return { status: 200, body: { ready: true, checks: r.checks } };
  const missing = Object.entries(r.checks)
    .filter(([, v]) => v !== 'ok')
    .map(([k]) => k);
  return { status: 503, body: { error: `not ready: ${missing.join(', ')}`, checks: r.checks } };
}

/** What /readyz answers (on the operations port and on web's public port): 503 at once while shutting down. */
export async function readinessResponse(
  checks: Record<string, Check>,
  accepting: () => boolean,
): Promise<{ status: number; body: Record<string, unknown> }> {
  if (!accepting()) return { status: 503, body: { error: 'not ready: shutting down' } };
  return readinessAnswer(await readiness(checks));
}

/** A registry with the process metrics (CPU, memory, event loop lag, GC) under the `svc_` prefix rules. */
export function createRegistry(process: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ process });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export interface OpsServer {
  server: Server;
  close(): Promise<void>;
}

export async function startOpsServer(opts: {
  host: string;
  port: number;
  log: Logger;
  registry: Registry;
  checks: Record<string, Check>;
  /** False once the process is shutting down: /readyz then answers 503 at once. */
  accepting: () => boolean;
  /** More GET paths answering JSON (the supervisor's /status). */
  routes?: Record<string, () => unknown>;
}): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET') return send(405, JSON.stringify({ error: 'Method not allowed' }));
    if (path === '/healthz') return send(200, JSON.stringify({ ok: true }));
    if (path === '/readyz') {
      void readinessResponse(opts.checks, opts.accepting).then((a) => send(a.status, JSON.stringify(a.body)));
      return;
    }
    if (path === '/metrics') {
      void opts.registry.metrics().then(
        (text) => send(200, text, opts.registry.contentType),
        (err: Error) => send(500, JSON.stringify({ error: err.message })),
      );
      return;
    }
    const route = path === undefined ? undefined : opts.routes?.[path];
    if (route) return send(200, JSON.stringify(route()));
    send(404, JSON.stringify({ error: `Route GET ${path} not found` }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address();
  opts.log.info({ address }, 'operations endpoints listening (/healthz, /readyz, /metrics)');
  return {
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Graceful shutdown on SIGTERM and SIGINT: runs `stop` once (it must flip readiness to 503 first, then let
 * in-flight work finish and close what the process opened) and exits 0. A `stop` that throws or outlasts
 * `timeoutMs` (default 9 s: inside Kubernetes' default 30 s grace and the issue's 10 s) is logged and the
 * process exits 1, so an orchestrator and the tests can tell a clean stop from a forced one.
 */
export function onShutdownSignal(
  log: Logger,
  stop: (signal: string) => Promise<void>,
  timeoutMs = 9000,
): void {
  let started = false;
  const run = (signal: string) => {
    if (started) return;
    started = true;
    log.info({ signal }, 'shutting down');
    const watchdog = setTimeout(() => {
      log.error({ timeoutMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, timeoutMs);
    watchdog.unref();
    stop(signal).then(
      () => {
        log.info('shut down cleanly');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => run('SIGTERM'));
  process.on('SIGINT', () => run('SIGINT'));
}
