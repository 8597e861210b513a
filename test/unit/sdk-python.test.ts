// The Python SDK (sdk/python) without the service: its unit tests (retry rules, the client against a
// scripted server, verify_webhook) run with the machine's python3 and the standard library only, with
// webhook signatures made here, now, by the Standard Webhooks reference library (npm standardwebhooks);
// then `pip install ./sdk/python` into a throwaway virtual environment, and the same tests against the
// installed package.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { PY_DIR, runPython as run } from '../helpers/python.ts';

const tmp = await mkdtemp(join(tmpdir(), 'svc-sdk-python-'));
t.teardown(() => rm(tmp, { recursive: true, force: true }));

/**
 * Fresh vectors for tests/test_unit.py: signed now by the reference library, valid or not. Made again right
 * before each run: the stale and future ones are relative to the time they are made.
 */
async function vectors(): Promise<string> {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const previous = `whsec_${randomBytes(24).toString('base64')}`;
  const body = JSON.stringify({
    type: 'commission.created',
    timestamp: new Date().toISOString(),
    data: { id: 7, amount_cents: 1470, currency: 'EUR', status: 'pending', partner: 'Zoë' },
  });
  const sign = (
    secrets: string[],
    at = new Date(),
    payload = body,
    id = `msg_${randomBytes(6).toString('hex')}`,
  ) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' '),
  });
  const minutes = (m: number) => new Date(Date.now() + m * 60_000);
  const list = [
    { name: 'fresh', valid: true, body, secret, headers: sign([secret]) },
    { name: 'rotation, new secret', valid: true, body, secret, headers: sign([previous, secret]) },
    {
      name: 'rotation, previous secret',
      valid: true,
      body,
      secret: previous,
      headers: sign([previous, secret]),
    },
    {
      name: 'tampered body',
      valid: false,
      body: body.replace('1470', '1471'),
      secret,
      headers: sign([secret]),
      error: 'No matching signature found',
    },
    {
      name: 'another secret',
      valid: false,
      body,
      secret: previous,
      headers: sign([secret]),
      error: 'No matching signature found',
    },
    {
      name: 'half an hour old',
      valid: false,
      body,
      secret,
      headers: sign([secret], minutes(-30)),
      error: 'Message timestamp too old',
    },
    {
      name: 'half an hour ahead',
      valid: false,
      body,
      secret,
      headers: sign([secret], minutes(30)),
      error: 'Message timestamp too new',
    },
  ];
  const file = join(tmp, `vectors-${randomBytes(4).toString('hex')}.json`);
  await writeFile(file, JSON.stringify(list));
  return file;
}

t.test('the Python unit tests pass with python3 and the standard library', async (t) => {
  const r = await run('python3', ['-m', 'unittest', '-v', 'tests.test_unit'], {
    env: { SVC_WEBHOOK_VECTORS: await vectors() },
  });
  t.equal(r.code, 0, 'python3 -m unittest tests.test_unit', { output: r.out.slice(-4000) });
  t.match(r.out, /test_fresh_signatures_from_the_reference_library .* ok/, 'fresh vectors were checked');
  t.match(r.out, /Ran \d+ tests/);
  t.notMatch(r.out, /skipped/, 'nothing skipped');
});

t.test('pip install ./sdk/python into a fresh virtual environment, then the tests against it', async (t) => {
  const venv = join(tmp, 'venv');
  const made = await run('python3', ['-m', 'venv', venv]);
  if (made.code !== 0) {
    t.pass('pip install into a virtual environment', {
      skip: `python3 -m venv does not work on this machine: ${made.out.trim().split('\n').pop()}`,
    });
    return;
  }
  const pip = join(venv, 'bin', 'pip');
  const python = join(venv, 'bin', 'python');
  const quiet = ['--disable-pip-version-check', '--no-input'];
  // As a user types it: pip fetches the build backend (setuptools) from PyPI.
  let install = await run(pip, ['install', ...quiet, '--timeout', '20', '--retries', '1', PY_DIR]);
  if (
    install.code !== 0 &&
    /connection|resolve|network|No matching distribution|Could not find a version/i.test(install.out)
  ) {
    // PyPI unreachable: the same install with the virtual environment's own setuptools, offline.
    t.comment(
      'PyPI unreachable; installing with the venv setuptools, offline (--no-build-isolation --no-index)',
    );
    install = await run(pip, ['install', ...quiet, '--no-build-isolation', '--no-index', PY_DIR]);
    if (install.code !== 0 && /No module named .?setuptools|setuptools/i.test(install.out)) {
      t.pass('pip install into a virtual environment', {
        skip: `PyPI unreachable and no setuptools in the venv: ${install.out.trim().split('\n').pop()}`,
      });
      return;
    }
  }
  t.equal(install.code, 0, 'pip install ./sdk/python', { output: install.out.slice(-3000) });
  t.match(install.out, /Successfully installed svc-affiliate-0\.1\.0/);

  // The tests, copied out of the source tree, so that `import svc_affiliate` finds the installed package.
  const work = join(tmp, 'work');
  await cp(join(PY_DIR, 'tests'), join(work, 'tests'), { recursive: true });
  const where = await run(
    python,
    [
      '-c',
      'import os, svc_affiliate; d = os.path.dirname(svc_affiliate.__file__); print(d); print(os.path.exists(os.path.join(d, "py.typed")))',
    ],
    { cwd: work },
  );
  t.equal(where.code, 0, 'import svc_affiliate', { output: where.out });
  const [dir, typed] = where.out.trim().split('\n');
  t.ok(dir!.startsWith(join(venv, 'lib')), `imported from the venv (${dir})`);
  t.equal(typed, 'True', 'py.typed is installed (PEP 561)');
  const r = await run(python, ['-m', 'unittest', 'tests.test_unit'], {
    cwd: work,
    env: { SVC_WEBHOOK_VECTORS: await vectors() },
  });
  t.equal(r.code, 0, 'the unit tests against the installed package', { output: r.out.slice(-3000) });
  t.match(r.out, /OK/);
});
