// `svc webhooks …` as a user runs it: add an endpoint (the secret printed once), list it, send a test event
// that a receiver verifies with the standardwebhooks library, read the delivery log, retry a delivery,
// rotate, disable, enable and delete.
import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ownDatabase, startServices, waitFor } from '../helpers/stack.ts';
import { signup } from '../helpers/accounts.ts';
import { startReceiver, verify } from '../helpers/webhook-receiver.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';

const execFileP = promisify(execFile);
const receiver = await startReceiver(t, { https: false });
const db = await ownDatabase(t);
const svc = await startServices(t, ['web', 'outbox-relay', 'webhook-worker'], {
  ...db.env,
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '200',
  OUTBOX_POLL_MS: '200',
});
const user = await signup(svc);

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await execFileP(process.execPath, [join(ROOT, 'bin/svc.ts'), '--url', svc.baseUrl, ...args], {
      env: { ...process.env, SVC_TOKEN: user.session },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const json = async (...args: string[]) => {
  const r = await cli(...args, '--json');
  if (r.code !== 0) throw new Error(`svc ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as { data: Record<string, unknown> & Record<string, unknown>[] };
};

t.test('svc webhooks: add, list, test, deliveries, retry, rotate, disable, enable, delete', async (t) => {
  t.match((await cli('--help')).stdout, /webhooks add <url>/);
  const added = await cli('webhooks', 'add', `${receiver.url}/cli`, '--events', 'sale.created,webhook.test');
  t.equal(added.code, 0, added.stderr);
  t.match(added.stdout, /secret/);
  const secret = /whsec_[A-Za-z0-9+/=]+/.exec(added.stdout)![0];
  const listed = await cli('webhooks', 'list');
  t.match(listed.stdout, new RegExp(`${receiver.url}/cli`));
  t.notMatch(listed.stdout, /whsec_/, 'the list never shows the secret');
  const id = String(((await json('webhooks', 'list')).data as unknown as { id: number }[])[0]!.id);

  const bad = await cli('webhooks', 'add', 'ftp://x');
  t.equal(bad.code, 1);
  t.match(bad.stderr, /400 url must be an http:\/\/ or https:\/\/ URL/);

  t.equal((await cli('webhooks', 'test', id)).code, 0);
  await waitFor('the test event', async () => receiver.received.length >= 1, 60_000);
  t.match(verify(secret, receiver.received[0]!), { type: 'webhook.test' });
  const log = await waitFor(
    'delivered in the log',
    async () => {
      const d = (await json('webhooks', 'deliveries', id)).data as unknown as {
        id: number;
        status: string;
      }[];
      return d[0]?.status === 'delivered' ? d : null;
    },
    30_000,
  );
  t.match(
    (await cli('webhooks', 'deliveries', id, '--status', 'delivered')).stdout,
    /webhook\.test\s+delivered/,
  );
  t.equal((await cli('webhooks', 'retry', String(log[0]!.id))).code, 0);
  await waitFor('the retried attempt', async () => receiver.received.length >= 2, 60_000);
  t.equal(
    receiver.received[1]!.headers['webhook-id'],
    receiver.received[0]!.headers['webhook-id'],
    'same webhook-id',
  );

  const rotated = await json('webhooks', 'rotate', id);
  t.match(rotated.data, { secret: /^whsec_/ });
  t.match((await json('webhooks', 'disable', id)).data, { status: 'disabled', disabled_reason: 'manual' });
  t.match((await cli('webhooks', 'test', id)).stderr, /409 Webhook endpoint is disabled/);
  t.match((await json('webhooks', 'enable', id)).data, { status: 'enabled' });
  t.equal((await cli('webhooks', 'delete', id)).code, 0);
  t.match((await cli('webhooks', 'deliveries', id)).stderr, /404 Webhook endpoint not found/);
});
