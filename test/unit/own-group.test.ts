// npm start's Ctrl-C (scripts/lib/stack/own-group.ts): a terminal sends SIGINT to its whole foreground group; only
// the script's parent may receive it, and the script must stop its services itself, in order. And a parent
// killed outright must not leave the script and its services running.
import t from 'tap';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { gone } from '../helpers/processes.ts';

const SCRIPT = join(ROOT, 'test/unit/fixtures/own-group-script.ts');

/** Starts the script as a terminal would (a process group of its own) and waits until its service is up. */
async function start(): Promise<{
  proc: ChildProcess;
  output: () => string;
  until(re: RegExp): Promise<void>;
}> {
  const proc = spawn(process.execPath, [SCRIPT], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0)) w();
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const until = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${re} in 30 s; output:\n${out}`)), 30_000);
      const check = () => {
        if (re.test(out)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  await until(/ready \d+[\s\S]*service up|service up[\s\S]*ready \d+/);
  return { proc, output: () => out, until };
}

t.test("Ctrl-C: only the parent gets the terminal's SIGINT; the script stops its service", async (t) => {
  const s = await start();
  const exited = new Promise<number | null>((r) => s.proc.once('exit', r));
  process.kill(-s.proc.pid!, 'SIGINT'); // the whole foreground group, as a terminal does
  t.equal(await exited, 0, 'exit 0');
  await s.until(/stopped/);
  t.notMatch(s.output(), /service got SIGINT/, "the terminal's SIGINT did not reach the service");
  t.match(
    s.output(),
    /stopping \(SIGTERM\)[\s\S]*service stopped by its parent[\s\S]*stopped/,
    'stopped in order',
  );
});

t.test('the parent killed outright: the script still stops its service and exits', async (t) => {
  const s = await start();
  const pid = Number(/ready (\d+)/.exec(s.output())![1]);
  t.not(pid, s.proc.pid, 'the script runs as a child of the process started');
  s.proc.kill('SIGKILL');
  await s.until(/stopped/);
  t.match(s.output(), /service stopped by its parent/);
  t.ok(await gone(pid), 'the script exited');
});
