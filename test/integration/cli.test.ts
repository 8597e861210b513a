// The svc CLI as a user runs it: a child process against the real service, with a session from
// `svc login` (kept in a temporary XDG_CONFIG_HOME) and with an affk_ key.
import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServices, testSql } from '../helpers/stack.ts';
import { PASSWORD, signup } from '../helpers/accounts.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';

const execFileP = promisify(execFile);
const sql = testSql(t);
const svc = await startServices(t, ['web', 'click-worker', 'attribution-worker']);
const config = await mkdtemp(join(tmpdir(), 'svc-cli-'));
t.teardown(() => rm(config, { recursive: true, force: true }));

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(process.execPath, [join(ROOT, 'bin/svc.ts'), '--url', svc.baseUrl, ...args], {
      env: { ...process.env, XDG_CONFIG_HOME: config, SVC_TOKEN: '', ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const user = await signup(svc);

t.test('--help, unknown commands, not logged in', async (t) => {
  const help = await cli(['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, /programs create --name/);
  const unknown = await cli(['frobnicate']);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /unknown command/);
  const anon = await cli(['programs', 'list']);
  t.equal(anon.code, 1);
  t.match(anon.stderr, /not logged in/);
});

t.test('login, manage a program end to end, logout', async (t) => {
  const login = await cli(['login', '--email', user.email, '--password', PASSWORD]);
  t.equal(login.code, 0, login.stderr);
  t.match(await readFile(join(config, 'svc', 'credentials.json'), 'utf8'), /sess_/);

  const created = await cli([
    'programs',
    'create',
    '--name',
    'CLI Program',
    '--percent',
    '25',
    '--origins',
    'https://shop.example',
    '--json',
  ]);
  t.equal(created.code, 0, created.stderr);
  const program = (
    JSON.parse(created.stdout) as { data: { id: number; api_token: string; commission: unknown } }
  ).data;
  t.match(program, { id: Number, api_token: /^aff_/, commission: { type: 'percentage', percent: 25 } });

  const list = await cli(['programs', 'list']);
  t.match(list.stdout, /CLI Program/);
  t.notMatch(list.stdout, program.api_token, 'listings never show the token');
  t.equal((await cli(['programs', 'go-live', String(program.id)])).code, 0);

  const partner = await cli([
    'partners',
    'add',
    String(program.id),
    '--name',
    'Pat',
    '--email',
    'pat@example.com',
    '--json',
  ]);
  t.equal(partner.code, 0, partner.stderr);
  const partnerId = (JSON.parse(partner.stdout) as { data: { partner: { id: number } } }).data.partner.id;
  const link = await cli([
    'links',
    'create',
    String(program.id),
    String(partnerId),
    '--short-link',
    `cli-${Date.now()}`,
  ]);
  t.equal(link.code, 0, link.stderr);
  t.match(link.stdout, /short_link\s+status/);

  const key = await cli([
    'keys',
    'create',
    '--name',
    'ci',
    '--scopes',
    'program:list,program:read',
    '--json',
  ]);
  t.equal(key.code, 0, key.stderr);
  const full = (JSON.parse(key.stdout) as { data: { key: string } }).data.key;
  const viaKey = await cli(['programs', 'get', String(program.id)], { SVC_TOKEN: full });
  t.equal(viaKey.code, 0, viaKey.stderr);
  t.match(viaKey.stdout, /CLI Program/);
  const denied = await cli(['programs', 'delete', String(program.id)], { SVC_TOKEN: full });
  t.equal(denied.code, 1);
  t.match(denied.stderr, /403 API key lacks scope program:delete/);

  const testSale = await cli(['test', 'sale', String(program.id), '--json']);
  t.equal(testSale.code, 0, testSale.stderr);
  t.match(JSON.parse(testSale.stdout), { success: true, data: { test_mode: true, programId: program.id } });
  const [s] = await sql`select is_test from sales where program_id = ${program.id}`;
  t.equal(s!.is_test, true);

  // Processor: connect, roll, and the (recorded) events with their outcomes.
  t.equal((await cli(['processor', 'connect', '--status', 'connected'])).code, 0);
  const rolled = await cli(['processor', 'roll-secret', '--json']);
  t.match(JSON.parse(rolled.stdout), { data: { webhook_secret: /^whsec_/ } });
  await sql`
    insert into processor_events (program_id, event_id, type, livemode, received_at, outcome, reason, payload)
    values (${program.id}, 'evt_cli', 'charge.refunded', true, now(), 'waiting', 'sale', '{}')`;
  const events = await cli(['processor', 'events', String(program.id), '--outcome', 'waiting']);
  t.equal(events.code, 0, events.stderr);
  t.match(events.stdout, /evt_cli\s+waiting\s+sale/);

  t.equal((await cli(['logout'])).code, 0);
  t.match((await cli(['programs', 'list'])).stderr, /not logged in/);
});
