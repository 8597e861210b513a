// docs/images/architecture.svg (docs/architecture.md "Processes, topics and tables") says what the code does:
// the committed picture is the one scripts/architecture-picture.ts draws from the code now. A write moved
// from one process to another, or a worker added, fails this until `npm run docs:architecture` redraws it.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ROOT } from '../../scripts/lib/stack/stack.ts';

const exec = promisify(execFile);

t.test('the committed picture matches the code', async (t) => {
  const r = await exec(process.execPath, ['scripts/architecture-picture.ts', '--check'], { cwd: ROOT }).catch(
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  t.equal('code' in r ? r.code : 0, 0, r.stdout + r.stderr);
  t.match(r.stdout, 'docs/images/architecture.svg matches the code');
});
