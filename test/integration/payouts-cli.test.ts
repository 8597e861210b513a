// The svc CLI's payouts and review queue (issue 18), as a child process against the real service and
// pipeline: `svc programs create --hold-days --min-payout-cents`, `svc commissions list --status review`,
// `approve`, `reject --reason`, `svc payouts preview|create|list|show|export|mark-paid|cancel`, each checked
// against what the API and the tables say, the API's exact errors printed with exit code 1, and the money
// invariant (paid + balance = earned - deductions) at the end.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, send, signup } from '../helpers/accounts.ts';
import { invitedPartner } from '../helpers/partners.ts';
import { assertMoney, ledgerCaughtUp } from '../helpers/money.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { deliverNotifications } from '../helpers/notifications.ts';

const execFileP = promisify(execFile);
const sql = testSql(t);
const svc = await startServices(
  t,
  ['web', 'click-worker', 'attribution-worker', 'reversal-worker', 'ledger-worker'],
  { APPROVAL_SWEEP_MS: '200' },
);
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(4).toString('hex');
const owner = await signup(svc);
const auth = bearer(owner.session);
const dir = await mkdtemp(join(tmpdir(), 'payouts-cli-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));

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
/** The CLI's --json answer's `data`, failing the test on a non-zero exit. */
async function json<T>(args: string[]): Promise<T> {
  const r = await cli([...args, '--json']);
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')}: exit ${r.code}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { data: T }).data;
}

// The partners sign in from loopback; their visitors click from elsewhere (a click from a partner's sign-in
// address would be held for review as partner_ip).
const VISITOR_IP = '198.51.100.40';

/** click → lead (with `email`) → sale for the partner's link; the sale's commission id. */
async function sale(token: string, shortLink: string, amountCents: number, email?: string): Promise<number> {
  const c = await postJson(
    url('/api/v1/track/click'),
    { affiliate_url: `https://shop.example/?aff=${shortLink}` },
    { 'x-forwarded-for': VISITOR_IP },
  );
  const clickId = c.body.click_id as string;
  const key = `c-${uniq()}`;
  const l = await postJson(
    url('/api/v1/track/lead'),
    { click_id: clickId, customer_key: key, email: email ?? `${key}@customer.example` },
    bearer(token),
  );
  if (l.status !== 200) throw new Error(`lead: ${l.status} ${JSON.stringify(l.body)}`);
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: `t-${uniq()}`, amount_cents: amountCents, customer_key: key },
    bearer(token),
  );
  if (typeof s.body.commission_id !== 'number') throw new Error(`sale: ${JSON.stringify(s.body)}`);
  return s.body.commission_id;
}

interface Commission {
  id: number;
  status: string;
  review_reason: string | null;
  refund_reason: string | null;
  payout_id: number | null;
}
interface Payout {
  id: number;
  partner_id: number;
  status: string;
  amount_cents: number;
  commission_ids: number[];
  reference: string | null;
  payout_method: { type: string; email: string | null } | null;
}

t.test('svc commissions approve|reject and svc payouts, end to end', async (t) => {
  const help = await cli(['--help']);
  for (const line of [
    /commissions approve <commissionId>/,
    /commissions reject <commissionId> \[--reason r\]/,
    /payouts preview <programId>/,
    /payouts create <programId> \[--partner id,...\]/,
    /payouts list <programId> \[--status pending\|paid\|canceled\]/,
    /payouts show <payoutId>/,
    /payouts export <programId> --format csv\|paypal\|wise \[--status s\] \[--out file\]/,
    /payouts mark-paid <payoutId> \[--reference r\]/,
    /payouts cancel <payoutId>/,
    /--hold-days n\] \[--min-payout-cents n\]/,
  ])
    t.match(help.stdout, line);

  // A program through the CLI, with its hold and minimum.
  const program = await json<{ id: number; api_token: string; hold_days: number; min_payout_cents: number }>([
    'programs',
    'create',
    '--name',
    `Payouts ${uniq()}`,
    '--flat-cents',
    '1000',
    '--hold-days',
    '0',
    '--min-payout-cents',
    '1500',
  ]);
  t.match(program, { hold_days: 0, min_payout_cents: 1500 });
  const pid = String(program.id);
  const badHold = await cli(['programs', 'update', pid, '--hold-days', '400']);
  t.same(
    [badHold.code, badHold.stderr],
    [
      1,
      `svc: PUT /api/advertiser/affiliate-programs/${pid}: 400 hold_days must be an integer from 0 to 365\n`,
    ],
  );

  const a = await invitedPartner(svc, owner, program.id);
  const b = await invitedPartner(svc, owner, program.id);
  const link = async (partnerId: number) => {
    const l = await json<{ short_link: string }>(['links', 'create', pid, String(partnerId)]);
    return l.short_link;
  };
  const [linkA, linkB] = [await link(a.partnerId), await link(b.partnerId)];
  // a is paid through PayPal (set in the portal); b has no payout method.
  const method = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'paypal', email: `pay-${uniq()}@example.com` },
    bearer(a.session),
  );
  t.equal(method.status, 200, method.text);
  const paypalEmail = (method.body.data as { email: string }).email;

  const a1 = await sale(program.api_token, linkA, 5000);
  const a2 = await sale(program.api_token, linkA, 5000);
  const selfRef = await sale(program.api_token, linkA, 5000, a.email.toUpperCase());
  const rejected = await sale(program.api_token, linkB, 5000, b.email);
  const b1 = await sale(program.api_token, linkB, 5000);
  const b2 = await sale(program.api_token, linkB, 5000);

  // The review queue.
  const review = await cli(['commissions', 'list', pid, '--status', 'review']);
  t.equal(review.code, 0, review.stderr);
  t.match(review.stdout, /review_reason\s+payable_at\s+payout_id/, 'the review columns');
  t.match(review.stdout, new RegExp(`^${selfRef}\\s+pending\\s+1000\\s+0\\s+USD\\s.*self_referral`, 'm'));
  t.match(review.stdout, new RegExp(`^${rejected}\\s+pending\\s+1000\\s+0\\s+USD\\s.*self_referral`, 'm'));
  t.equal(review.stdout.trim().split('\n').length, 4, 'two held commissions (and the header)');

  const approve = await cli(['commissions', 'approve', String(selfRef)]);
  t.equal(approve.code, 0, approve.stderr);
  t.match(approve.stdout, new RegExp(`^${selfRef}\\s+approved\\s+1000\\s+0\\s+USD\\s`, 'm'));
  const again = await cli(['commissions', 'approve', String(selfRef)]);
  t.same(
    [again.code, again.stderr],
    [1, `svc: POST /api/advertiser/commissions/${selfRef}/approve: 409 Commission is not held for review\n`],
  );
  const reject = await cli(['commissions', 'reject', String(rejected), '--reason', 'own purchase']);
  t.equal(reject.code, 0, reject.stderr);
  t.match(
    reject.stdout,
    new RegExp(`^${rejected}\\s+reversed\\s+1000\\s+1000\\s.*rejected: own purchase`, 'm'),
  );
  const [reversal] = await sql`select kind, program_cents from ledger_entries
    where entry_key = ${`commission:${rejected}:refund`}`;
  t.match(reversal, { kind: 'commission_reversed', program_cents: '-1000' }, 'reversed through the ledger');
  t.same(await json<Commission[]>(['commissions', 'list', pid, '--status', 'review']), []);
  const missing = await cli(['commissions', 'reject', '99999999']);
  t.same(
    [missing.code, missing.stderr],
    [1, 'svc: POST /api/advertiser/commissions/99999999/reject: 404 Commission not found\n'],
  );

  for (const id of [a1, a2, selfRef, b1, b2])
    await waitFor(
      `commission ${id} approved`,
      async () => (await sql`select status from commissions where id = ${id}`)[0]!.status === 'approved',
      60_000,
    );

  // Preview: writes nothing.
  const preview = await cli(['payouts', 'preview', pid]);
  t.equal(preview.code, 0, preview.stderr);
  t.match(
    preview.stdout,
    new RegExp(`^${a.partnerId}\\s+Pat Partner\\s+3000\\s+USD\\s+3000\\s+0\\s+paypal\\s+true\\s+false$`, 'm'),
  );
  t.match(
    preview.stdout,
    new RegExp(`^${b.partnerId}\\s+Pat Partner\\s+2000\\s+USD\\s+2000\\s+0\\s+none\\s+false\\s+false$`, 'm'),
  );
  t.match(preview.stdout, /^total 5000 cents USD \(minimum per payout 1500\)$/m);
  const previewB = await json<{ partner_id: number }[]>([
    'payouts',
    'preview',
    pid,
    '--partner',
    String(b.partnerId),
  ]);
  t.same(
    previewB.map((p) => p.partner_id),
    [b.partnerId],
    '--partner',
  );
  t.same(await sql`select id from payouts where program_id = ${program.id}`, [], 'a preview writes nothing');

  // Create: a first, then the rest.
  const first = await json<Payout[]>(['payouts', 'create', pid, '--partner', String(a.partnerId)]);
  t.match(first, [{ partner_id: a.partnerId, amount_cents: 3000, status: 'pending' }]);
  t.same(
    first[0]!.commission_ids,
    [a1, a2, selfRef].sort((x, y) => x - y),
  );
  const rest = await cli(['payouts', 'create', pid]);
  t.equal(rest.code, 0, rest.stderr);
  const [pb] = await sql<{ id: string }[]>`select id from payouts where partner_id = ${b.partnerId}`;
  t.match(
    rest.stdout,
    new RegExp(
      `^${pb!.id}\\s+${b.partnerId}\\s+Pat Partner\\s+pending\\s+2000\\s+USD\\s+2000\\s+0\\s+none\\s`,
      'm',
    ),
  );
  const nothing = await json<Payout[]>(['payouts', 'create', pid]);
  t.same(nothing, [], 'nothing left to pay');
  const pa = first[0]!.id;

  // List, show.
  const listed = await json<Payout[]>(['payouts', 'list', pid, '--status', 'pending']);
  t.same(
    listed.map((p) => p.id),
    [Number(pb!.id), pa],
    'newest first',
  );
  t.same(await json<Payout[]>(['payouts', 'list', pid, '--status', 'paid']), []);
  t.same(
    (await json<Payout[]>(['payouts', 'list', pid, '--limit', '1', '--offset', '1'])).map((p) => p.id),
    [pa],
  );
  const shown = await cli(['payouts', 'show', String(pa)]);
  t.equal(shown.code, 0, shown.stderr);
  t.match(
    shown.stdout,
    new RegExp(
      `^${pa}\\s+${a.partnerId}\\s+Pat Partner\\s+pending\\s+3000\\s+USD\\s.*paypal.*\\[${[a1, a2, selfRef].sort((x, y) => x - y).join(',')}\\]$`,
      'm',
    ),
  );
  const badStatus = await cli(['payouts', 'list', pid, '--status', 'done']);
  t.same(
    [badStatus.code, badStatus.stderr],
    [
      1,
      `svc: GET /api/advertiser/affiliate-programs/${pid}/payouts?status=done: 400 status must be one of pending, paid, canceled\n`,
    ],
  );

  // Export: the API's file byte for byte, to --out or stdout; what PayPal leaves out is said on stderr.
  const apiFile = async (q: string) =>
    (
      await fetch(url(`/api/advertiser/affiliate-programs/${pid}/payouts/export?${q}`), { headers: auth })
    ).text();
  const out = join(dir, 'payouts.csv');
  const csv = await cli(['payouts', 'export', pid, '--format', 'csv', '--out', out]);
  t.same([csv.code, csv.stdout, csv.stderr], [0, `wrote ${out}\n`, '']);
  const file = await readFile(out, 'utf8');
  t.equal(file, await apiFile('format=csv'));
  t.equal(file.trim().split('\r\n').length, 3, 'a header and two payouts');
  t.match(file, new RegExp(`^${pb!.id},pending,${b.partnerId},.*,20.00,2000,USD,.*,no payout method$`, 'm'));
  const paypal = await cli(['payouts', 'export', pid, '--format', 'paypal']);
  t.equal(paypal.code, 0, paypal.stderr);
  t.equal(paypal.stdout, await apiFile('format=paypal'));
  t.ok(paypal.stdout.startsWith(`${paypalEmail},30.00,USD,payout-${pa},`), paypal.stdout);
  t.equal(paypal.stdout.trim().split('\r\n').length, 1, 'only the partner with PayPal');
  t.match(paypal.stderr, /^1 payout\(s\) left out of the paypal file: no paypal payout method/);
  const wise = await cli(['payouts', 'export', pid, '--format', 'wise', '--status', 'pending']);
  t.equal(
    wise.stdout.trim(),
    'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency',
  );
  t.match(wise.stderr, /^2 payout\(s\) left out of the wise file/);
  const xml = await cli(['payouts', 'export', pid, '--format', 'xml']);
  t.same(
    [xml.code, xml.stdout, xml.stderr],
    [
      1,
      '',
      `svc: GET /api/advertiser/affiliate-programs/${pid}/payouts/export?format=xml: 400 format must be one of paypal, wise, csv\n`,
    ],
  );
  const noFormat = await cli(['payouts', 'export', pid]);
  t.same([noFormat.code, noFormat.stderr], [1, 'svc: missing --format csv|paypal|wise; see svc --help\n']);

  // Another partner sets a payout method just before: the paid payout records its own partner's (PayPal).
  const other = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'wise', email: `wise-${uniq()}@example.com` },
    bearer(b.session),
  );
  t.equal(other.status, 200, other.text);
  // Mark paid, with a reference; twice is 409.
  const paid = await cli(['payouts', 'mark-paid', String(pa), '--reference', 'PP-BATCH-7']);
  t.equal(paid.code, 0, paid.stderr);
  t.match(
    paid.stdout,
    new RegExp(
      `^${pa}\\s+${a.partnerId}\\s+Pat Partner\\s+paid\\s+3000\\s+USD\\s+3000\\s+0\\s+paypal\\s+PP-BATCH-7\\s`,
      'm',
    ),
  );
  const paidAgain = await cli(['payouts', 'mark-paid', String(pa)]);
  t.same(
    [paidAgain.code, paidAgain.stderr],
    [1, `svc: POST /api/advertiser/payouts/${pa}/mark-paid: 409 Payout already paid\n`],
  );
  const commissions = await json<Commission[]>(['commissions', 'list', pid, '--status', 'paid']);
  t.same(
    commissions.map((c) => [c.id, c.payout_id]).sort(),
    [a1, a2, selfRef].sort().map((id) => [id, pa]),
  );
  t.match(await json<Payout>(['payouts', 'show', String(pa)]), { status: 'paid', reference: 'PP-BATCH-7' });
  // The notification worker's part (the notifications are outbox rows: test/helpers/notifications.ts).
  await deliverNotifications(sql, svc.prefix, svc.baseUrl);
  const [note] =
    await sql`select kind from notifications where notification_key = ${`payout:${pa}:paid:partner`}`;
  t.equal(note?.kind, 'payout_paid', 'the partner is told');

  // Cancel; then mark-paid and cancel again are 409; the commissions are payable again.
  const canceled = await cli(['payouts', 'cancel', pb!.id]);
  t.equal(canceled.code, 0, canceled.stderr);
  t.match(
    canceled.stdout,
    new RegExp(`^${pb!.id}\\s+${b.partnerId}\\s+Pat Partner\\s+canceled\\s+2000\\s`, 'm'),
  );
  const payCanceled = await cli(['payouts', 'mark-paid', pb!.id, '--reference', 'x']);
  t.same(
    [payCanceled.code, payCanceled.stderr],
    [
      1,
      `svc: POST /api/advertiser/payouts/${pb!.id}/mark-paid: 409 A canceled payout cannot be marked paid\n`,
    ],
  );
  const cancelAgain = await cli(['payouts', 'cancel', pb!.id]);
  t.same(
    [cancelAgain.code, cancelAgain.stderr],
    [1, `svc: POST /api/advertiser/payouts/${pb!.id}/cancel: 409 Payout already canceled\n`],
  );
  t.same(
    (await json<Commission[]>(['commissions', 'list', pid, '--status', 'approved'])).map((c) => c.id).sort(),
    [b1, b2].sort(),
    'payable again',
  );
  const unknown = await cli(['payouts', 'show', '99999999']);
  t.same(
    [unknown.code, unknown.stderr],
    [1, 'svc: GET /api/advertiser/payouts/99999999: 404 Payout not found\n'],
  );
  const stranger = await signup(svc);
  const foreign = await execFileP(
    process.execPath,
    [join(ROOT, 'bin/svc.ts'), '--url', svc.baseUrl, 'payouts', 'cancel', String(pa)],
    {
      env: { ...process.env, SVC_TOKEN: stranger.session },
    },
  ).catch((err: { code: number; stderr: string }) => err);
  t.match(
    foreign,
    { code: 1, stderr: `svc: POST /api/advertiser/payouts/${pa}/cancel: 404 Payout not found\n` },
    'another workspace',
  );

  const partners = [a, b].map((p) => ({ partnerId: p.partnerId, partnerProgramId: p.ppId }));
  await waitFor(
    'the ledger to catch up',
    () =>
      ledgerCaughtUp(
        sql,
        partners.map((p) => p.partnerProgramId),
      ),
    60_000,
  );
  await assertMoney(t, sql, program.id, partners);
});
