// MailDev (npm `maildev`, pinned) for `npm start` without SMTP_URL: a local mail catcher whose web page
// shows every mail the services send, so a newcomer can follow an invite or a magic link. It runs as its own
// child process: its programmatic API installs SIGINT/SIGTERM handlers that end the process hosting it.
// Its output goes to the debug log; its mail is kept in a folder of the stack, so it survives a restart.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../../shared/logger.ts';
import { waitForPort } from './stack.ts';
import { PortInUseError, assertPortFree, exitOf, watchServerExit } from './servers.ts';
import type { ChildServer, Output } from './servers.ts';

export const MAILDEV_DEFAULTS = { smtpPort: 1025, webPort: 1080 } as const;

export interface MailDevServer extends ChildServer {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  smtpUrl: string;
  /** Its web page. */
  webUrl: string;
  restart(): Promise<MailDevServer>;
}

/** MailDev's command-line entry, from its package.json (the package exports no require entry or bin path). */
async function maildevBin(): Promise<string> {
  let dir = dirname(fileURLToPath(import.meta.resolve('maildev')));
  for (;;) {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8').catch(() => '{}')) as {
      name?: string;
      bin?: Record<string, string>;
    };
    if (pkg.name === 'maildev' && pkg.bin?.maildev) return join(dir, pkg.bin.maildev);
    if (dirname(dir) === dir) throw new Error('maildev/package.json not found');
    dir = dirname(dir);
  }
}

export interface MailDevOptions {
  smtpPort: number;
  webPort: number;
  dir: string;
  log: Logger;
  /** Each line of its own output (its log file, under a supervisor); always also at debug. */
  output?: Output;
}

/**
 * Starts MailDev on 127.0.0.1 (SMTP and web), its mail kept in `dir`. Resolves null, with one warning
 * saying why, when it cannot run (a port taken, the package missing): the services then run without mail.
 */
export async function startMailDev(opts: MailDevOptions): Promise<MailDevServer | null> {
  try {
    return await launchMailDev(opts);
  } catch (err) {
    opts.log.warn(
      err instanceof PortInUseError
        ? `MailDev not started: ${err.message} (--mail-smtp-port / --mail-web-port choose others, SMTP_URL uses your own server); mail is recorded as skipped`
        : `MailDev not started: ${(err as Error).message}; mail is recorded as skipped`,
    );
    return null;
  }
}

/** Starts MailDev, or throws why not (a PortInUseError for a port in use). */
export async function launchMailDev(opts: MailDevOptions): Promise<MailDevServer> {
  const { smtpPort, webPort, log } = opts;
  await assertPortFree(smtpPort, 'MailDev SMTP');
  await assertPortFree(webPort, 'MailDev web');
  let bin: string;
  try {
    bin = await maildevBin();
  } catch {
    throw new Error('the maildev package is missing (npm ci)');
  }
  await mkdir(opts.dir, { recursive: true });
  const child = spawn(
    process.execPath,
    [
      bin,
      ...['--smtp', String(smtpPort), '--ip', '127.0.0.1'],
      ...['--web', String(webPort), '--web-ip', '127.0.0.1'],
      ...['--mail-directory', opts.dir],
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (!line.trim()) continue;
        log.debug({ maildev: line.trim() }, 'maildev');
        opts.output?.(line.trim());
      }
    });
  }
  let exited = false;
  let stopped = false;
  const exitedP = exitOf(child).then((e) => ((exited = true), e));
  // If this process ends without stopping it (kill -9 of npm start's child), it must not outlive it.
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);
  try {
    await Promise.race([
      Promise.all([waitForPort(smtpPort, 120_000), waitForPort(webPort, 120_000)]),
      exitedP.then(() => {
        throw new Error('MailDev exited during start-up; run with LOG_LEVEL=debug to see its output');
      }),
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    process.removeListener('exit', orphan);
    throw err;
  }
  log.info({ smtp: smtpPort, web: webPort }, 'maildev started');
  watchServerExit(child, `MailDev (SMTP ${smtpPort}, web ${webPort})`, () => stopped);
  return {
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    webUrl: `http://127.0.0.1:${webPort}`,
    process: child,
    exited: exitedP,
    restart: () => launchMailDev(opts),
    stop: async () => {
      process.removeListener('exit', orphan);
      stopped = true;
      if (exited) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exitedP;
      clearTimeout(t);
    },
  };
}
