// Attack: a management API key limited to some programs (`program_scope`) reaching past them (CONTRACT part
// three, "Program-scoped API keys stay in their programs"; docs/security.md). The key is made the way an
// advertiser makes one (POST /api/advertiser/api-keys with a dashboard session) and then used as an
// integrator holding only that key would: it tries to read, change and roll the workspace's payment-processor
// signing secret (with which it could forge processor events for every program), to register webhooks that
// receive every program's events, to read and manage the endpoints and deliveries of other programs, and to
// reach the workspace-wide routes (members, keys, the mail log, notifications, program creation) and the
// rows of other programs by id. Each is refused, and nothing changed.
import t from 'tap';
import type { Test } from 'tap';
import { createProgram, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { createPayouts, seedCommissions } from '../helpers/commissions.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web'], { WEBHOOK_RESOLVE: 'hooks.test=93.184.216.34' });
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const ownerAuth = bearer(owner.session);
const ws = owner.workspaceId;

// Programs A and C are the key's; B is not.
const A = await createProgram(sql, { workspaceId: ws });
const B = await createProgram(sql, { workspaceId: ws });
const C = await createProgram(sql, { workspaceId: ws });

async function makeKey(programScope: number[] | null): Promise<string> {
  const r = await send(
    'POST',
    url('/api/advertiser/api-keys'),
    { name: 'integrator', scopes: ['*'], program_scope: programScope },
    ownerAuth,
  );
  if (r.status !== 201) throw new Error(`create key: ${r.status} ${r.text}`);
  return (r.body.data as { key: string }).key;
}
// Listed out of order: the message names the ids in ascending order.
const scoped = bearer(await makeKey([C.id, A.id]));
const full = bearer(await makeKey(null));
const LIMITED = `API key is limited to programs ${Math.min(A.id, C.id)}, ${Math.max(A.id, C.id)}`;

// The workspace's processor connection, made by the owner: its secret is what the attack is after.
const connected = await send(
  'PUT',
  url('/api/advertiser/processor-connection'),
  { status: 'connected' },
  ownerAuth,
);
if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${connected.text}`);
const secretNow = async () =>
  (
    await sql<{ webhook_secret: string }[]>`
    select webhook_secret from processor_connections where workspace_id = ${ws}`
  )[0]!.webhook_secret;
const secret = await secretNow();

/** The owner's endpoints: one for every program (null), one for B, one for A only. */
async function endpoint(programIds: number[] | null): Promise<number> {
  const r = await send(
    'POST',
    url('/api/advertiser/webhooks'),
    { url: 'https://hooks.test/in', program_ids: programIds },
    ownerAuth,
  );
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return (r.body.data as { id: number }).id;
}
const everyProgram = await endpoint(null);
const ofB = await endpoint([B.id]);
const ofAB = await endpoint([A.id, B.id]);
const ofA = await endpoint([A.id]);

/** A delivery row of an endpoint (the worker would make it; none runs here). */
async function delivery(endpointId: number): Promise<number> {
  const eventId = `evt_${Math.random().toString(16).slice(2)}`;
  await sql`insert into webhook_events (id, workspace_id, program_id, type, payload, created_at)
            values (${eventId}, ${ws}, null, 'webhook.test', '{}', now())`;
  const [d] = await sql<{ id: string }[]>`
    insert into webhook_deliveries (webhook_id, event_id, endpoint_id, workspace_id, type, status)
    values (${`msg_${eventId}`}, ${eventId}, ${endpointId}, ${ws}, 'webhook.test', 'failed') returning id`;
  return Number(d!.id);
}

const refused = (t: Test, r: { status: number; body: Record<string, unknown> }, what: string) => {
  t.equal(r.status, 403, what);
  t.same(r.body, { error: LIMITED }, `${what}: the message names the key's programs`);
};

t.test('the processor connection: not read, not changed, not rolled', async (t) => {
  const path = url('/api/advertiser/processor-connection');
  refused(t, await getJson(path, scoped), 'GET');
  refused(t, await send('PUT', path, { status: 'disconnected' }, scoped), 'PUT');
  refused(t, await send('PUT', path, { status: 'nonsense' }, scoped), 'PUT with a bad body: 403 before 400');
  refused(t, await send('POST', `${path}/roll-secret`, undefined, scoped), 'roll-secret');
  refused(t, await getJson(`${path}?workspace_id=${ws}`, scoped), 'GET naming the workspace');
  t.equal(await secretNow(), secret, 'the signing secret is unchanged');
  const [row] = await sql<{ status: string; previous_webhook_secret: string | null }[]>`
    select status, previous_webhook_secret from processor_connections where workspace_id = ${ws}`;
  t.same(row, { status: 'connected', previous_webhook_secret: null }, 'still connected, nothing rolled');
  // A key for every program still manages it.
  const ok = await getJson(path, full);
  t.equal(ok.status, 200, 'a key without program_scope reads it');
  t.notOk(ok.text.includes(secret), 'and reads no secret');
});

t.test('every processor connection: not read, not changed, not removed by a scoped key', async (t) => {
  const path = url('/api/advertiser/processor-connections');
  refused(t, await getJson(path, scoped), 'GET');
  refused(t, await send('PUT', `${path}/paddle`, { webhook_secret: 'pdl_ntfset_attacker' }, scoped), 'PUT');
  refused(t, await send('PUT', `${path}/stripe`, { webhook_secret: 'whsec_attacker' }, scoped), 'PUT stripe');
  refused(t, await send('DELETE', `${path}/stripe`, undefined, scoped), 'DELETE');
  t.equal(await secretNow(), secret, 'the Stripe secret is unchanged');
  const [n] = await sql`select count(*)::int as n from processor_secrets where workspace_id = ${ws}`;
  t.equal(n!.n, 0, 'nothing connected');
  t.equal((await getJson(path, full)).status, 200, 'a key for every program reads them');
});

t.test('registering webhooks: program_ids must be a non-empty subset of the scope', async (t) => {
  const path = url('/api/advertiser/webhooks');
  const hook = { url: 'https://hooks.test/mine' };
  refused(t, await send('POST', path, hook, scoped), 'program_ids omitted (every program)');
  refused(t, await send('POST', path, { ...hook, program_ids: null }, scoped), 'program_ids null');
  refused(t, await send('POST', path, { ...hook, program_ids: [B.id] }, scoped), 'another program');
  refused(t, await send('POST', path, { ...hook, program_ids: [A.id, B.id] }, scoped), 'one of them another');
  refused(
    t,
    await send('POST', path, { url: 'nope', program_ids: [B.id] }, scoped),
    'before the 400 of the url',
  );
  const before = await sql`select id from webhook_endpoints where workspace_id = ${ws}`;
  t.equal(before.length, 4, 'nothing was registered');
  const ok = await send('POST', path, { ...hook, program_ids: [A.id, C.id] }, scoped);
  t.equal(ok.status, 201, 'inside the scope');
  t.same((ok.body.data as { program_ids: number[] }).program_ids, [A.id, C.id]);
  const empty = await send('POST', path, { ...hook, program_ids: [] }, scoped);
  t.equal(empty.status, 400, 'an empty list is the 400 it is for every caller');
});

t.test("other programs' endpoints: not listed, 404 by id, their deliveries too", async (t) => {
  const listed = await getJson(url('/api/advertiser/webhooks'), scoped);
  t.equal(listed.status, 200);
  const ids = (listed.body.data as { id: number; program_ids: number[] }[]).map((e) => e.id);
  t.ok(ids.includes(ofA), 'its own program’s endpoint is listed');
  for (const id of [everyProgram, ofB, ofAB]) t.notOk(ids.includes(id), `endpoint ${id} is not listed`);
  t.ok(
    (listed.body.data as { program_ids: number[] | null }[]).every(
      (e) => e.program_ids !== null && e.program_ids.every((p) => p === A.id || p === C.id),
    ),
    'every listed endpoint is wholly inside the scope',
  );
  const fullList = await getJson(url('/api/advertiser/webhooks'), full);
  t.ok((fullList.body.data as { id: number }[]).length >= 5, 'a key for every program lists them all');

  for (const id of [everyProgram, ofB, ofAB]) {
    const one = url(`/api/advertiser/webhooks/${id}`);
    const nf = { error: 'Webhook endpoint not found' };
    for (const [what, r] of [
      ['GET', await getJson(one, scoped)],
      ['PUT', await send('PUT', one, { program_ids: [A.id] }, scoped)],
      ['PUT with a bad body', await send('PUT', one, { url: 'nope' }, scoped)],
      ['rotate-secret', await send('POST', `${one}/rotate-secret`, undefined, scoped)],
      ['test', await send('POST', `${one}/test`, undefined, scoped)],
      ['enable', await send('POST', `${one}/enable`, undefined, scoped)],
      ['deliveries', await getJson(`${one}/deliveries`, scoped)],
      ['DELETE', await send('DELETE', one, undefined, scoped)],
    ] as const) {
      t.equal(r.status, 404, `${what} endpoint ${id}`);
      t.same(r.body, nf);
    }
    const d = await delivery(id);
    for (const [what, r] of [
      ['GET', await getJson(url(`/api/advertiser/webhook-deliveries/${d}`), scoped)],
      ['retry', await send('POST', url(`/api/advertiser/webhook-deliveries/${d}/retry`), undefined, scoped)],
    ] as const) {
      t.equal(r.status, 404, `${what} delivery of endpoint ${id}`);
      t.same(r.body, { error: 'Webhook delivery not found' });
    }
  }
  const rows = await sql<{ id: string; program_ids: string[] | null; previous_secret: string | null }[]>`
    select id, program_ids::text[], previous_secret from webhook_endpoints
    where id = any(${[everyProgram, ofB, ofAB]}::bigint[]) order by id`;
  t.same(
    rows.map((r) => [Number(r.id), r.program_ids, r.previous_secret]),
    [
      [everyProgram, null, null],
      [ofB, [String(B.id)], null],
      [ofAB, [String(A.id), String(B.id)], null],
    ],
    'the endpoints are unchanged, none deleted or rotated',
  );
});

t.test('its own endpoints: managed, but never widened past the scope', async (t) => {
  const one = url(`/api/advertiser/webhooks/${ofA}`);
  t.equal((await getJson(one, scoped)).status, 200, 'GET');
  t.equal((await getJson(`${one}/deliveries`, scoped)).status, 200, 'deliveries');
  const d = await delivery(ofA);
  t.equal((await getJson(url(`/api/advertiser/webhook-deliveries/${d}`), scoped)).status, 200, 'a delivery');
  refused(t, await send('PUT', one, { program_ids: null }, scoped), 'PUT program_ids null');
  refused(t, await send('PUT', one, { program_ids: [B.id] }, scoped), 'PUT another program');
  const ok = await send('PUT', one, { program_ids: [C.id], description: 'C only' }, scoped);
  t.equal(ok.status, 200, 'PUT inside the scope');
  t.same((ok.body.data as { program_ids: number[] }).program_ids, [C.id]);
  t.equal((await send('PUT', one, { description: 'kept' }, scoped)).status, 200, 'PUT without program_ids');
  t.equal((await send('POST', `${one}/rotate-secret`, undefined, scoped)).status, 200, 'rotate-secret');
});

t.test('the other workspace-wide routes: 403 with the same message', async (t) => {
  const [note] = await sql<{ id: string }[]>`
    insert into notifications (notification_key, recipient_type, workspace_id, program_id, kind, title, body)
    values (${`scoped:${ws}`}, 'advertiser', ${ws}, ${B.id}, 'test', 'About B', 'B only') returning id`;
  const calls: [string, Promise<{ status: number; body: Record<string, unknown> }>][] = [
    ['GET members', getJson(url('/api/advertiser/members'), scoped)],
    [
      'POST members',
      send('POST', url('/api/advertiser/members'), { email: 'x@example.com', role: 'admin' }, scoped),
    ],
    [
      'PUT members/:userId',
      send('PUT', url(`/api/advertiser/members/${owner.userId}`), { role: 'viewer' }, scoped),
    ],
    [
      'DELETE members/:userId',
      send('DELETE', url(`/api/advertiser/members/${owner.userId}`), undefined, scoped),
    ],
    ['GET api-keys', getJson(url('/api/advertiser/api-keys'), scoped)],
    [
      'POST api-keys',
      send('POST', url('/api/advertiser/api-keys'), { name: 'wider', program_scope: null }, scoped),
    ],
    ['PUT api-keys/:id', send('PUT', url('/api/advertiser/api-keys/1'), { program_scope: null }, scoped)],
    ['DELETE api-keys/:id', send('DELETE', url('/api/advertiser/api-keys/1'), undefined, scoped)],
    ['GET mail', getJson(url('/api/advertiser/mail'), scoped)],
    ['GET notifications', getJson(url('/api/advertiser/notifications'), scoped)],
    [
      'POST notifications/:id/read',
      send('POST', url(`/api/advertiser/notifications/${note!.id}/read`), undefined, scoped),
    ],
    [
      'POST notifications/read-all',
      send('POST', url('/api/advertiser/notifications/read-all'), undefined, scoped),
    ],
    [
      'POST affiliate-programs',
      send('POST', url('/api/advertiser/affiliate-programs'), { name: 'Outside' }, scoped),
    ],
  ];
  for (const [what, call] of calls) refused(t, await call, what);
  const [n] = await sql<{ read_at: Date | null }[]>`select read_at from notifications where id = ${note!.id}`;
  t.equal(n!.read_at, null, 'the notification is still unread');
  const [m] = await sql<{ role: string }[]>`
    select role from memberships where workspace_id = ${ws} and user_id = ${owner.userId}`;
  t.equal(m!.role, 'owner');
  const [count] = await sql<{ programs: number }[]>`
    select count(*)::int as programs from programs where workspace_id = ${ws}`;
  t.equal(count!.programs, 3, 'no program was created');
  // A key for every program keeps its answers: the mail log and notifications are its workspace's.
  t.equal((await getJson(url('/api/advertiser/mail'), full)).status, 200, 'a full key reads the mail log');
  t.equal((await getJson(url('/api/advertiser/notifications'), full)).status, 200, 'and the notifications');
  const keys = await getJson(url('/api/advertiser/api-keys'), full);
  t.same(keys, {
    ...keys,
    status: 403,
    body: { error: 'Members and API keys are managed with a dashboard session' },
  });
});

t.test("other programs' rows by id and by filter: refused", async (t) => {
  const [partner] = await sql<{ id: string }[]>`
    insert into partners (name, email) values ('P', ${`p-${Math.random()}@example.com`}) returning id`;
  const [pp] = await sql<{ id: string }[]>`
    insert into partner_programs (partner_id, program_id) values (${partner!.id}, ${B.id}) returning id`;
  // B's commissions by the lifecycle: one in its hold, one approved and taken into a pending payout.
  const owner = { programId: B.id, partnerId: Number(partner!.id), partnerProgramId: Number(pp!.id) };
  const [c] = await seedCommissions(sql, owner, [
    { saleCents: 1000, amountCents: 100, status: 'pending', payableInDays: 30 },
  ]);
  await seedCommissions(sql, owner, [{ saleCents: 1000, amountCents: 100 }]);
  const [payoutId] = await createPayouts(sql, B.id, [owner.partnerId]);
  const payout = { id: payoutId! };
  const notScoped = { error: 'API key is not scoped to this program' };
  for (const [what, r] of [
    [
      'commission mark-paid',
      await send('POST', url(`/api/advertiser/commissions/${c!.id}/mark-paid`), undefined, scoped),
    ],
    [
      'commission approve',
      await send('POST', url(`/api/advertiser/commissions/${c!.id}/approve`), undefined, scoped),
    ],
    ['commission reject', await send('POST', url(`/api/advertiser/commissions/${c!.id}/reject`), {}, scoped)],
    [
      'commission reject with a bad body: 403 before 400',
      await send('POST', url(`/api/advertiser/commissions/${c!.id}/reject`), { reason: 5 }, scoped),
    ],
    ['payout', await getJson(url(`/api/advertiser/payouts/${payout!.id}`), scoped)],
    [
      'payout mark-paid',
      await send('POST', url(`/api/advertiser/payouts/${payout!.id}/mark-paid`), {}, scoped),
    ],
    [
      'payout mark-paid with a bad body: 403 before 400',
      await send('POST', url(`/api/advertiser/payouts/${payout!.id}/mark-paid`), { reference: 5 }, scoped),
    ],
    [
      'payout cancel',
      await send('POST', url(`/api/advertiser/payouts/${payout!.id}/cancel`), undefined, scoped),
    ],
    [
      'processor events of B',
      await getJson(url(`/api/advertiser/processor-events?program_id=${B.id}`), scoped),
    ],
    ['B itself', await getJson(url(`/api/advertiser/affiliate-programs/${B.id}`), scoped)],
  ] as const) {
    t.equal(r.status, 403, what);
    t.same(r.body, notScoped, what);
  }
  const all = await getJson(url('/api/advertiser/processor-events'), scoped);
  t.equal(all.status, 400, 'processor events need a program_id: there is no workspace-wide list');
  const listed = await getJson(url('/api/advertiser/affiliate-programs'), scoped);
  t.same(
    (listed.body.data as { id: number }[]).map((p) => p.id).sort((x, y) => x - y),
    [A.id, C.id].sort((x, y) => x - y),
    'the program list holds its programs only',
  );
  const [after] = await sql<{ status: string }[]>`select status from commissions where id = ${c!.id}`;
  t.equal(after!.status, 'pending', 'the commission is unchanged');
  const [p] = await sql<{ status: string }[]>`select status from payouts where id = ${payout!.id}`;
  t.equal(p!.status, 'pending', 'the payout is unchanged');
});
