// SSRF at delivery time (CONTRACT "Webhooks to integrators", Safety): names registered while they resolved
// to a public address, which resolve to a refused address when the worker delivers (DNS rebinding), are
// refused then; no connection is made (the receiver on 127.0.0.1 sees nothing), and the refusal is in the
// delivery log. The API pins each name to a public address and the worker to a refused one (WEBHOOK_RESOLVE,
// a hosts-style override given to each process); the code path is the same as with DNS.
//
// Only addresses of this machine are used here (loopback, unspecified, IPv4-mapped loopback): a regression
// would then connect to the test's own receiver, never send a packet to a private network or a metadata
// service. The other classes go through the same guarded lookup, checked class by class without any
// connection in test/unit/webhooks.test.ts. A redirect is not followed either: a 3xx is a failed attempt.
import t from 'tap';
import { ownDatabase, postJson, startServices, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, signup } from '../helpers/accounts.ts';
import { startReceiver } from '../helpers/webhook-receiver.ts';

const db = await ownDatabase(t);
const sql = db.sql;
const receiver = await startReceiver(t, { https: false });
receiver.respond = () => 204;
// Each points at this machine, where the receiver listens: a connection would be seen there.
const atDelivery: Record<string, [string, string]> = {
  'loop.test': ['127.0.0.1', 'loopback'],
  'loop2.test': ['127.0.0.2', 'loopback'],
  'loop6.test': ['::1', 'loopback'],
  'zero.test': ['0.0.0.0', 'unspecified'],
  'mapped.test': ['::ffff:127.0.0.1', 'loopback'],
};
const pinned = (map: (host: string) => string) =>
  Object.keys(atDelivery)
    .map((h) => `${h}=${map(h)}`)
    .join(',');
const svc = await startServices(t, ['web', 'outbox-relay'], {
  ...db.env,
  // At registration every name is public (93.184.216.34 is only resolved, never connected to).
  WEBHOOK_RESOLVE: pinned(() => '93.184.216.34'),
  WEBHOOK_POLL_MS: '200',
  OUTBOX_POLL_MS: '200',
  WEBHOOK_RETRY_SCHEDULE: '1h',
});
// The worker sees the names rebound to the refused addresses.
svc.env.WEBHOOK_RESOLVE = pinned((h) => atDelivery[h]![0]);
await svc.start('webhook-worker');
const owner = await signup(svc);
const auth = bearer(owner.session);

t.test('a name that resolves to a refused address at delivery time is refused then', async (t) => {
  const ids: [string, number][] = [];
  for (const host of Object.keys(atDelivery)) {
    const r = await postJson(
      `${svc.baseUrl}/api/advertiser/webhooks`,
      { url: `https://${host}:${receiver.port}/hook` },
      auth,
    );
    t.equal(r.status, 201, `${host} registered while public: ${JSON.stringify(r.body)}`);
    const id = (r.body.data as { id: number }).id;
    ids.push([host, id]);
    t.equal((await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/test`, {}, auth)).status, 202);
  }
  for (const [host, id] of ids) {
    const [address, cls] = atDelivery[host]!;
    const log = await waitFor(
      `${host}: an attempt`,
      async () => {
        const r = await getJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/deliveries`, auth);
        const [d] = r.body.data as { attempts: number; last_error: string | null; status: string }[];
        return d && d.attempts >= 1 ? d : null;
      },
      60_000,
    );
    t.match(
      log,
      {
        status: 'pending',
        last_status_code: null,
        last_error: `refused: url host ${host} resolves to a ${cls} address (${address}): webhooks are only sent to public addresses`,
      },
      `${host}: refused (${cls})`,
    );
  }
  t.equal(receiver.received.length, 0, 'no request reached the loopback receiver');
});

t.test('an endpoint whose URL became a literal private address is refused too', async (t) => {
  // Written directly: the API refuses such a URL at registration (webhooks-api.test.ts).
  const [row] = await sql<{ id: string }[]>`
    insert into webhook_endpoints (workspace_id, url, secret)
    values (${owner.workspaceId}, ${`https://127.0.0.1:${receiver.port}/literal`}, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
    returning id`;
  const id = Number(row!.id);
  await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/test`, {}, auth);
  const d = await waitFor(
    'an attempt',
    async () => {
      const r = await getJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/deliveries`, auth);
      const [x] = r.body.data as { attempts: number; last_error: string | null }[];
      return x && x.attempts >= 1 ? x : null;
    },
    60_000,
  );
  t.equal(
    d.last_error,
    'refused: url host 127.0.0.1 is a loopback address: webhooks are only sent to public addresses',
  );
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');
});

t.test('redirects are not followed', async (t) => {
  // A worker that may reach loopback, and a receiver answering 302 to somewhere else.
  const target = await startReceiver(t, { https: false });
  const redirecting = await startReceiver(t, { https: false });
  redirecting.respond = () => ({ status: 302, headers: { location: `${target.url}/elsewhere` } });
  await svc.stop('webhook-worker');
  svc.env.WEBHOOK_ALLOW_PRIVATE = 'true';
  await svc.start('webhook-worker');
  const r = await postJson(
    `${svc.baseUrl}/api/advertiser/webhooks`,
    { url: `${redirecting.url}/hook` },
    auth,
  );
  t.equal(r.status, 400, 'the API still refuses http:// and loopback (its own configuration)');
  const [row] = await sql<{ id: string }[]>`
    insert into webhook_endpoints (workspace_id, url, secret)
    values (${owner.workspaceId}, ${`${redirecting.url}/hook`}, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
    returning id`;
  const id = Number(row!.id);
  await postJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/test`, {}, auth);
  const d = await waitFor(
    'an attempt',
    async () => {
      const res = await getJson(`${svc.baseUrl}/api/advertiser/webhooks/${id}/deliveries`, auth);
      const [x] = res.body.data as { attempts: number; last_error: string | null; status: string }[];
      return x && x.attempts >= 1 ? x : null;
    },
    60_000,
  );
  t.match(d, { status: 'pending', last_status_code: 302, last_error: /^redirect not followed \(to http:/ });
  t.equal(redirecting.received.length, 1, 'the receiver was asked once');
  t.equal(target.received.length, 0, 'the redirect target never');
});
