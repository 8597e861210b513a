// `svc import` and `svc imports` (docs/importing.md) as a child process against the real service: a CSV
// file imported and followed to its end (--wait), its error rows written as CSV, a Rewardful import with the
// secret from $SVC_IMPORT_SECRET (never an argument), the campaign list, a failed import exiting 1, and the
// CLI's own missing-argument errors.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { startServices } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { apiProgram } from '../helpers/partners.ts';
import { TEST_IMPORT_KEY } from '../helpers/imports.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { rewardfulFixture, startRewardful } from '../../scripts/lib/seed/source-doubles.ts';

const execFileP = promisify(execFile);
const svc = await startServices(t, ['web', 'outbox-relay', 'import-worker'], {
  IMPORT_SECRET_KEY: TEST_IMPORT_KEY,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  OUTBOX_POLL_MS: '50',
});
const owner = await signup(svc);
const program = await apiProgram(svc, owner);
const dir = await mkdtemp(join(tmpdir(), 'cli-imports-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const tag = randomBytes(3).toString('hex');
const SECRET = `rw_${tag}`;
const double = await startRewardful(rewardfulFixture({ affiliates: 3, commissions: 6, tag }), SECRET);
t.teardown(() => double.close());

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const r = await execFileP(process.execPath, [join(ROOT, 'bin/svc.ts'), '--url', svc.baseUrl, ...args], {
      env: { ...process.env, SVC_TOKEN: owner.session, ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

t.test('a CSV file, followed to its end; its error rows as CSV', async (t) => {
  const file = join(dir, 'partners.csv');
  await writeFile(file, `email,name,link\r\nann-${tag}@example.com,Ann,ann${tag}\r\nnope,Nope,\r\n`);
  const r = await cli(['import', String(program.id), 'csv', '--file', file, '--wait']);
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /completed\s+done/);
  t.match(r.stdout, /partners\s+1\s+0\s+0\s+1/, 'the counts: one partner in, one row failed');
  const id = /^(\d+)\s+csv/m.exec(r.stdout.split('\n').slice(2).join('\n'))![1]!;
  const out = join(dir, 'errors.csv');
  const e = await cli(['imports', 'errors', String(program.id), id, '--out', out]);
  t.equal(e.code, 0, e.stderr);
  t.match(e.stdout, /wrote 1 error rows/);
  t.match(await readFile(out, 'utf8'), /^kind,external_id,code,message\r\npartner,nope,invalid_email,/);
  const list = await cli(['imports', 'list', String(program.id)]);
  t.match(list.stdout, new RegExp(`^${id}\\s+csv\\s+completed`, 'm'));
});

t.test('Rewardful with the secret from the environment; its campaigns', async (t) => {
  const campaigns = await cli(
    ['imports', 'campaigns', String(program.id), 'rewardful', '--api-base-url', double.url],
    {
      SVC_IMPORT_SECRET: SECRET,
    },
  );
  t.equal(campaigns.code, 0, campaigns.stderr);
  t.match(campaigns.stdout, new RegExp(`Friends ${tag}`));
  const r = await cli(['import', String(program.id), 'rewardful', '--api-base-url', double.url, '--wait'], {
    SVC_IMPORT_SECRET: SECRET,
  });
  t.equal(r.code, 0, r.stderr);
  t.match(r.stdout, /rewardful\s+completed/);
  t.notOk(r.stdout.includes(SECRET) || r.stderr.includes(SECRET), 'the secret is printed nowhere');
  const bad = await cli(['import', String(program.id), 'rewardful', '--api-base-url', double.url, '--wait'], {
    SVC_IMPORT_SECRET: 'wrong',
  });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /svc: import \d+ failed/);
  t.match(bad.stdout, /Rewardful refused the credentials/);
});

t.test("the CLI's own errors", async (t) => {
  const r = await cli(['import', String(program.id), 'csv']);
  t.same([r.code, r.stderr], [1, 'svc: missing --file <path> of the CSV; see svc --help\n']);
  const s = await cli(['import', String(program.id)]);
  t.equal(s.code, 1);
  t.match(s.stderr, /missing source/);
  const u = await cli(['import', String(program.id), 'tolt'], { SVC_IMPORT_SECRET: 'x' });
  t.equal(u.code, 1);
  t.match(u.stderr, /source must be one of rewardful, dub, csv/);
});
