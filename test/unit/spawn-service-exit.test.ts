// A process that started services and then dies without stopping them (a test file throwing before its
// teardown) takes them with it: they must not outlive it.
import t from 'tap';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { gone, isAlive } from '../helpers/processes.ts';

t.test('services spawned by a process that throws are killed when it exits', async (t) => {
  // web waits for its Postgres (port 1: nothing there) instead of exiting, so it is alive until killed.
  const script = `
    import { spawnService } from ${JSON.stringify(join(ROOT, 'scripts/lib/stack/services.ts'))};
    const p = spawnService('web', { env: { DATABASE_URL: 'postgres://x:y@127.0.0.1:1/none', LOG_LEVEL: 'warn' } });
    console.log('pid ' + p.child.pid);
    setTimeout(() => { throw new Error('the test file failed'); }, 500);
  `;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  parent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((res) => parent.once('exit', res));
  t.not(code, 0, 'the parent died of its error');
  const pid = Number(/pid (\d+)/.exec(out)?.[1]);
  t.ok(pid > 0, 'it had started a service');
  t.ok(await gone(pid), 'the service did not outlive it');
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});
