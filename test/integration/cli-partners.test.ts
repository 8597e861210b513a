// The svc CLI's partner review and notifications: `svc partners approve|reject|invite` and
// `svc notifications [--unread]`, `read <id>`, `read-all`, as a child process against the real service.
import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { postJson, startServices, testSql } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, uniqEmail } from '../helpers/partners.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { deliverNotifications } from '../helpers/notifications.ts';

const execFileP = promisify(execFile);
const sql = testSql(t);
const svc = await startServices(t, ['web']);
const owner = await signup(svc);

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(process.execPath, [join(ROOT, 'bin/svc.ts'), '--url', svc.baseUrl, ...args], {
      env: { ...process.env, SVC_TOKEN: owner.session },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

t.test('svc partners approve, reject, invite', async (t) => {
  const help = await cli(['--help']);
  t.match(help.stdout, /partners approve <programId> <partnerId>/);
  t.match(help.stdout, /notifications \[--unread\]/);
  const program = await apiProgram(svc, owner);
  const p = await addPartner(svc, owner, program.id, { status: 'pending' });
  const approve = await cli(['partners', 'approve', String(program.id), String(p.partnerId)]);
  t.equal(approve.code, 0, approve.stderr);
  t.match(approve.stdout, new RegExp(`${p.partnerId}\\s+Pat Partner\\s+${p.email}\\s+approved`));
  const [links] = await sql<{ n: number }[]>`
    select count(*)::int as n from referral_links where partner_id = ${p.partnerId}`;
  t.equal(links!.n, 1, 'approving made a link');
  const reject = await cli([
    'partners',
    'reject',
    String(program.id),
    String(p.partnerId),
    '--reason',
    'Spam',
  ]);
  t.equal(reject.code, 0, reject.stderr);
  t.match(reject.stdout, /rejected\s+Spam/);
  const invite = await cli(['partners', 'invite', String(program.id), String(p.partnerId), '--json']);
  t.equal(invite.code, 0, invite.stderr);
  t.match(JSON.parse(invite.stdout), { data: { invite_url: /\/partner\/invite#pinv_/ } });
  const missing = await cli(['partners', 'approve', String(program.id), '999999999']);
  t.equal(missing.code, 1);
  t.match(missing.stderr, /404 Partner not found in this program/);
});

t.test('svc notifications: list, --unread, read, read-all', async (t) => {
  const program = await apiProgram(svc, owner, { public_page: true });
  const applied = await postJson(
    `${svc.baseUrl}/api/public/programs/${program.slug}/apply`,
    { name: 'Cli Applicant', email: uniqEmail() },
    { 'x-forwarded-for': '192.0.2.55' },
  );
  t.equal(applied.status, 201);
  // The notification worker's part (the notifications are outbox rows: test/helpers/notifications.ts).
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const list = await cli(['notifications', '--unread']);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, /partner_applied\s+New application to .*: Cli Applicant/);
  t.match(list.stdout, /1 unread/);
  const [n] = await sql<{ id: string }[]>`
    select id from notifications where workspace_id = ${owner.workspaceId} and kind = 'partner_applied'`;
  const read = await cli(['notifications', 'read', n!.id]);
  t.equal(read.code, 0, read.stderr);
  t.match((await cli(['notifications', '--unread'])).stdout, /0 unread/);
  const all = await cli(['notifications', 'read-all', '--json']);
  t.same(JSON.parse(all.stdout), { data: { updated: 0 } });
});
