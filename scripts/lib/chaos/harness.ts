// The faults of `npm run chaos` on one broker (scripts/chaos.ts runs them under its load and accounts for
// every request), in the harness's own runs: the harness started every process and restarts what each
// fault hit (the --supervised runs leave that to npm start's supervisor: supervised.ts).
import { createSql } from '../../../shared/db/sql.ts';
import type { ServiceName } from '../stack/services.ts';
import type { Fault } from './cluster.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HarnessContext {
  services: ServiceName[];
  /** The instance the single-process faults hit: `web`, or `web#1` with --replicas. */
  first(name: ServiceName): string;
  /** kill -9 of the instance; resolves once it exited. */
  kill(id: string): Promise<void>;
  /** SIGTERM of the instance; resolves with its exit code. */
  stop(id: string): Promise<number | null>;
  /** Starts the instance again; resolves once it is ready (the moment). */
  restart(id: string): Promise<number>;
  /** kill -9 of the broker, `downMs` later started again on its data. */
  restartBroker(downMs: number): Promise<void>;
  /** Postgres stopped (fast), `downMs` later started again. */
  restartPostgres(downMs: number): Promise<void>;
  databaseUrl(): string;
  /** SIGTERM exits other than 0. */
  termCodes: string[];
}

const short = (s: ServiceName) => s.replace(/-worker$/, '');

export function harnessFaults(ctx: HarnessContext): Fault[] {
  const faults: Fault[] = [];
  for (const s of ctx.services) {
    const id = ctx.first(s);
    faults.push({
      name: `kill-${short(s)}`,
      what: `kill -9 ${id}`,
      targets: [id],
      run: async () => {
        await ctx.kill(id);
        await sleep(300);
        return ctx.restart(id);
      },
    });
  }
  faults.push({
    name: 'broker-kill',
    what: 'Kafka broker kill -9, restarted after 2 s',
    run: async () => {
      await ctx.restartBroker(2000);
      return Date.now();
    },
  });
  faults.push({
    name: 'pg-stop',
    what: 'Postgres stop (fast), started again after 2 s',
    run: async () => {
      await ctx.restartPostgres(2000);
      return Date.now();
    },
  });
  faults.push({
    name: 'pg-terminate',
    what: 'every Postgres backend terminated',
    run: async () => {
      const admin = createSql(ctx.databaseUrl(), 1, 'svc-chaos-admin');
      try {
        await admin`select count(pg_terminate_backend(pid)) from pg_stat_activity
                    where datname = current_database() and pid <> pg_backend_pid()`;
      } finally {
        await admin.end({ timeout: 2 }).catch(() => {});
      }
      return Date.now();
    },
  });
  for (const s of ctx.services) {
    const id = ctx.first(s);
    faults.push({
      name: `term-${short(s)}`,
      what: `SIGTERM ${id} (graceful), restarted after it exits`,
      targets: [id],
      run: async () => {
        const code = await ctx.stop(id);
        if (code !== 0) ctx.termCodes.push(`${id} exited ${code}`);
        return ctx.restart(id);
      },
    });
  }
  return faults;
}
