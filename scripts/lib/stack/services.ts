// Starting the project's own processes (web and the workers) as real child processes: used by `npm start`,
// the tests (which kill -9 them) and the benchmarks.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, waitForPort } from './stack.ts';

export const ENTRIES = {
  web: 'services/web/server.ts',
  /** Clicks and leads: enrichment, customers, click events, the customer journey. */
  'click-worker': 'services/workers/clicks/main.ts',
  /** Sales: attribution and commission creation. */
  'attribution-worker': 'services/workers/attribution/main.ts',
  /** Refunds: commission reversal. */
  'reversal-worker': 'services/workers/reversal/main.ts',
  'ledger-worker': 'services/workers/ledger/main.ts',
  'notification-worker': 'services/workers/notifications/main.ts',
  /** Payment-processor webhook events: sales, subscription links and refunds from Stripe. */
  'processor-worker': 'services/workers/processor/main.ts',
  /** The outbox relay: webhook events and mail, published after their transactions committed. */
  'outbox-relay': 'services/workers/relay/main.ts',
  /** Outbound webhooks: events fanned out to endpoints, delivered with retries held in Postgres. */
  'webhook-worker': 'services/workers/webhooks/main.ts',
  /** Mail: the mail log, SMTP with retries held in Postgres (docs/mail.md). */
  'mail-worker': 'services/workers/mail/main.ts',
  /** Imports from Rewardful, Dub and CSV files: one source page per command (docs/importing.md). */
  'import-worker': 'services/workers/imports/main.ts',
} as const;
export const WORKERS = Object.keys(ENTRIES).filter((n) => n !== 'web') as Exclude<ServiceName, 'web'>[];
export type ServiceName = keyof typeof ENTRIES;
/** Web, then the workers: the order of their operations ports. */
export const SERVICES: ServiceName[] = ['web', ...WORKERS];

/**
 * The operations ports of `npm start` from `base` (OPS_PORT): web on base, the workers on the ports after
 * it in the order of WORKERS; replica r (1-based) of each on the same layout shifted by
 * (r - 1) × SERVICES.length; the supervisor's on the first port after all of them.
 */
export function opsLayout(base: number, replicas: number) {
  return {
    port: (name: ServiceName, replica: number) =>
      base + (replica - 1) * SERVICES.length + SERVICES.indexOf(name),
    supervisor: base + replicas * SERVICES.length,
  };
}

export interface ServiceProcess {
  name: ServiceName;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** kill -9: no shutdown hooks, no flushing. */
  kill(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  env: Record<string, string>;
  /** Where each output line goes; default: inherit. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * Services still running, killed if this process exits without stopping them (a test file that throws
 * before its teardown): otherwise they outlive it, and a test run left four services running for hours.
 */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

export function spawnService(name: ServiceName, opts: SpawnOptions): ServiceProcess {
  const child = spawn(process.execPath, [join(ROOT, ENTRIES[name])], {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: opts.onLine ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of running) c.kill('SIGKILL');
    });
  }
  if (opts.onLine) {
    for (const stream of ['stdout', 'stderr'] as const) {
      let buf = '';
      child[stream]!.on('data', (d: Buffer) => {
        buf += d.toString();
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          opts.onLine!(buf.slice(0, i), stream);
          buf = buf.slice(i + 1);
        }
      });
    }
  }
  const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    child,
    exited,
    kill: async () => {
      if (alive()) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (alive()) child.kill('SIGTERM');
      const t = setTimeout(() => alive() && child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * Waits until the web process is ready: listening, and /readyz 200 (Postgres reachable and its Kafka
 * producer connected; web listens before Kafka answers and refuses tracking until then), or it exits.
 */
export async function waitForWeb(svc: ServiceProcess, port: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ready = async () => {
    await waitForPort(port, timeoutMs);
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5_000) })
        .then((r) => r.status)
        .catch(() => 0);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${svc.name} not ready after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  await Promise.race([
    ready(),
    svc.exited.then((code) => {
      throw new Error(`${svc.name} exited with ${code} during start-up`);
    }),
  ]);
}

/** Resolves with the first line matching `re` that appears on the service's output after the call. */
export function lineWatcher() {
  const waiters: { re: RegExp; resolve: (line: string) => void }[] = [];
  return {
    onLine(line: string) {
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.re.test(line)) {
          waiters[i]!.resolve(line);
          waiters.splice(i, 1);
        }
      }
    },
    waitFor(re: RegExp, timeoutMs: number): Promise<string> {
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`no line matching ${re} within ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({
          re,
          resolve: (line) => {
            clearTimeout(t);
            resolve(line);
          },
        });
      });
    },
  };
}
