// docs/security.md's route table holds to the routes. Every operation of the OpenAPI document the web
// process serves (GET /api/v1/openapi.json) must have a row, and every row an operation; and each route is
// called with each credential kind, its answer's class compared with the row: 401 (not this route's
// credential), 403 (authenticated, refused), 404 (refused as not visible: another workspace's or another
// program's object) or ok (reached: anything else below 500, a 400 or 409 of the minimal request included).
// A new route without a row, or a row that says what the route does not do, turns this red.
//
// The objects the calls name are real (created below), so that a credential that may reach a route gets
// past its 404s too. Calls that end something (a session, a key, a member, a program, an endpoint) act on a
// throwaway made for that call; the others act on shared fixtures in any order, since their state changes
// (a payout cancelled, a commission paid) leave the access checks as they were.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createProgram, startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { createPayouts, seedCommissions } from '../helpers/commissions.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';
import { ROOT } from '../../scripts/lib/stack/stack.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';

// ---- the table ----

const KINDS = ['none', 'aff_', 'affk_', 'affk_ scoped', 'sess_', 'sess_ other ws', 'psess_'] as const;
type Kind = (typeof KINDS)[number];
const CLASSES = ['ok', '401', '403', '404'] as const;
type Class = (typeof CLASSES)[number];
interface Row {
  key: string;
  expect: Record<Kind, Class>;
}

/** The rows of the table after `<!-- route-table -->` in docs/security.md. */
async function readTable(): Promise<Row[]> {
  const text = await readFile(join(ROOT, 'docs', 'security.md'), 'utf8');
  const start = text.indexOf('<!-- route-table -->');
  if (start < 0) throw new Error('docs/security.md has no <!-- route-table --> marker');
  const lines = text.slice(start).split('\n').slice(1);
  while (lines[0]?.trim() === '') lines.shift();
  const table: string[] = [];
  for (const l of lines) {
    if (!l.startsWith('|')) break;
    table.push(l);
  }
  const cells = (l: string) =>
    l
      .slice(1, l.lastIndexOf('|'))
      .split('|')
      .map((c) => c.trim().replaceAll('`', ''));
  const header = cells(table[0] ?? '');
  const want = ['Method', 'Path', ...KINDS];
  if (want.some((h, i) => header[i] !== h))
    throw new Error(`route table header: ${header.join(' | ')}; want it to start ${want.join(' | ')}`);
  return table.slice(2).map((l) => {
    const c = cells(l);
    const expect = {} as Record<Kind, Class>;
    KINDS.forEach((k, i) => {
      const v = c[2 + i] as Class;
      if (!CLASSES.includes(v))
        throw new Error(`${c[0]} ${c[1]}: "${c[2 + i]}" for ${k} is not one of ${CLASSES.join(', ')}`);
      expect[k] = v;
    });
    return { key: `${c[0]} ${c[1]}`, expect };
  });
}

// ---- the stack and its objects ----

const sql = testSql(t);
const svc = await startServices(t, ['web'], { WEBHOOK_RESOLVE: 'hooks.test=93.184.216.34' });
const url = (p: string) => `${svc.baseUrl}${p}`;
const uniq = () => randomBytes(5).toString('hex');

const owner = await signup(svc);
const stranger = await signup(svc);
const ws = owner.workspaceId;
const own = bearer(owner.session);
// B is the program every program route names; A is the scoped key's only program.
const B = await apiProgram(svc, owner, { public_page: true });
const A = await createProgram(sql, { workspaceId: ws });

async function key(programScope: number[] | null): Promise<{ id: number; key: string }> {
  const k = generateSecret('affk_');
  const [row] = await sql<{ id: string }[]>`
    insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, program_scope)
    values (${ws}, ${owner.userId}, 'route table', ${k.slice(0, 9)}, ${hashSecret(k)}, ${maskSecret(k)},
            ${programScope}::bigint[])
    returning id`;
  return { id: Number(row!.id), key: k };
}
const fullKey = await key(null);
const scopedKey = await key([A.id]);

// The signed-in partner P (invited to B), and Q, the partner the advertiser's partner routes act on.
const P = await invitedPartner(svc, owner, B.id);
const Q = await addPartner(svc, owner, B.id);
// P's mailbox counts as verified, as if P had followed a sign-in link before accepting the invite: its
// invitations (records other workspaces make with its email) are listed only then.
await sql`update partner_accounts set mailbox_verified_at = now() where id = ${P.accountId}`;
/** A record of P's email in a workspace of its own: an invitation of P's (accepting or declining ends it). */
async function invitation(): Promise<number> {
  const other = await signup(svc);
  const program = await apiProgram(svc, other);
  return (await addPartner(svc, other, program.id, { email: P.email })).partnerId;
}
const link = await send(
  'POST',
  url(`/api/advertiser/affiliate-programs/${B.id}/partners/${Q.partnerId}/links`),
  {},
  own,
);
if (link.status !== 201) throw new Error(`link: ${link.status} ${link.text}`);
const linkId = (link.body.data as { id: number }).id;
const code = await send(
  'POST',
  url(`/api/advertiser/affiliate-programs/${B.id}/partners/${Q.partnerId}/codes`),
  { code: `RT${uniq()}` },
  own,
);
if (code.status !== 201) throw new Error(`code: ${code.status} ${code.text}`);
// Deactivating it again answers the same: the DELETE may act on it with every credential, in any order.
const codeId = (code.body.data as { id: number }).id;

/** A group of B (the rewards' routes: docs/rewards.md). */
async function group(): Promise<number> {
  const r = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${B.id}/groups`),
    { name: `Group ${uniq()}` },
    own,
  );
  if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`);
  return (r.body.data as { id: number }).id;
}
const groupId = await group();
const bonusId = await bonus();
// An import of B (docs/importing.md): queued, with no command, so nothing runs it; a cancel ends it (409
// to the later calls, a refusal of its own).
const [anImport] = await sql<{ id: string }[]>`
  insert into imports (program_id, source, step) values (${B.id}, 'csv', 'rows') returning id`;
const importId = Number(anImport!.id);
/** A bonus of B. */
async function bonus(): Promise<number> {
  const r = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${B.id}/bonuses`),
    {
      name: `Bonus ${uniq()}`,
      metric: 'sales_cents',
      threshold: 100_000,
      amount_cents: 500,
      period: 'once',
      ends_at: new Date(Date.now() + 86_400_000).toISOString(),
    },
    own,
  );
  if (r.status !== 201) throw new Error(`bonus: ${r.status} ${r.text}`);
  return (r.body.data as { id: number }).id;
}

// B's commissions by the lifecycle: one in its hold, one approved and taken into a pending payout.
const [commission] = await seedCommissions(
  sql,
  { programId: B.id, partnerId: Q.partnerId, partnerProgramId: Q.ppId },
  [{ saleCents: 1000, amountCents: 100, status: 'pending', payableInDays: 30 }],
);
await seedCommissions(sql, { programId: B.id, partnerId: Q.partnerId, partnerProgramId: Q.ppId }, [
  { saleCents: 1000, amountCents: 100 },
]);
const [payoutId] = await createPayouts(sql, B.id, [Q.partnerId]);
const payout = { id: payoutId! };
const connected = await send(
  'PUT',
  url('/api/advertiser/processor-connection'),
  { status: 'connected' },
  own,
);
if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${connected.text}`);

/** An endpoint of the owner's workspace for every program (program_ids null). */
async function endpoint(): Promise<number> {
  const [row] = await sql<{ id: string }[]>`
    insert into webhook_endpoints (workspace_id, url, secret)
    values (${ws}, 'https://hooks.test/in', ${`whsec_${randomBytes(24).toString('base64')}`}) returning id`;
  return Number(row!.id);
}
const endpointId = await endpoint();
const eventId = `evt_${uniq()}`;
await sql`insert into webhook_events (id, workspace_id, program_id, type, payload, created_at)
          values (${eventId}, ${ws}, null, 'webhook.test', '{}', now())`;
const [delivery] = await sql<{ id: string }[]>`
  insert into webhook_deliveries (webhook_id, event_id, endpoint_id, workspace_id, type, status)
  values (${`msg_${eventId}`}, ${eventId}, ${endpointId}, ${ws}, 'webhook.test', 'failed') returning id`;
const [notice] = await sql<{ id: string }[]>`
  insert into notifications (notification_key, recipient_type, workspace_id, program_id, kind, title, body)
  values (${`rt:${uniq()}`}, 'advertiser', ${ws}, ${B.id}, 'test', 'Route table', 'For the owner') returning id`;
const [partnerNotice] = await sql<{ id: string }[]>`
  insert into notifications (notification_key, recipient_type, partner_id, program_id, kind, title, body)
  values (${`rt:${uniq()}`}, 'partner', ${P.partnerId}, ${B.id}, 'test', 'Route table', 'For P') returning id`;

// Throwaways, for the calls that end what they name.
const expires = () => new Date(Date.now() + 3600_000);
async function session(userId: number): Promise<string> {
  const token = generateSecret('sess_');
  await sql`insert into sessions (user_id, token_hash, expires_at) values (${userId}, ${hashSecret(token)}, ${expires()})`;
  return token;
}
async function partnerSession(accountId: number): Promise<string> {
  const token = generateSecret('psess_');
  await sql`insert into partner_sessions (account_id, token_hash, expires_at)
            values (${accountId}, ${hashSecret(token)}, ${expires()})`;
  return token;
}
async function member(): Promise<number> {
  const [u] = await sql<{ id: string }[]>`
    insert into users (email, name, password_hash) values (${`m-${uniq()}@example.com`}, 'M', 'x') returning id`;
  await sql`insert into memberships (user_id, workspace_id, role) values (${u!.id}, ${ws}, 'viewer')`;
  return Number(u!.id);
}

/** Each kind's credential. */
const credentials: Record<Kind, Record<string, string>> = {
  none: {},
  aff_: bearer(B.token),
  affk_: bearer(fullKey.key),
  'affk_ scoped': bearer(scopedKey.key),
  sess_: own,
  'sess_ other ws': bearer(stranger.session),
  psess_: bearer(P.session),
};

// ---- what each route is called with ----

type Params = Record<string, string | number>;
interface Call {
  params?: Params;
  body?: unknown;
  headers?: Record<string, string>;
}

/** Path parameters of shared objects, by the path's beginning. */
const SHARED: [RegExp, Params][] = [
  [
    /^\/api\/advertiser\/affiliate-programs\/\{id\}/,
    { id: B.id, partnerId: Q.partnerId, linkId, codeId, groupId, bonusId, importId },
  ],
  [/^\/api\/advertiser\/commissions\/\{id\}/, { id: Number(commission!.id) }],
  [/^\/api\/advertiser\/payouts\/\{id\}/, { id: Number(payout!.id) }],
  [/^\/api\/advertiser\/webhooks\/\{id\}/, { id: endpointId }],
  [/^\/api\/advertiser\/webhook-deliveries\/\{id\}/, { id: Number(delivery!.id) }],
  [/^\/api\/advertiser\/notifications\/\{id\}/, { id: Number(notice!.id) }],
  [/^\/api\/partner\/notifications\/\{id\}/, { id: Number(partnerNotice!.id) }],
  [/\{programId\}/, { programId: B.id }],
  [/\{processor\}/, { processor: 'polar' }],
  [/^\/api\/public\/programs\/\{slug\}/, { slug: B.slug }],
];

/** A session of the same kind, made for this call (the call ends it). */
async function ownSession(kind: Kind): Promise<Record<string, string> | undefined> {
  if (kind === 'sess_') return bearer(await session(owner.userId));
  if (kind === 'sess_ other ws') return bearer(await session(stranger.userId));
  if (kind === 'psess_') return bearer(await partnerSession(P.accountId));
  return undefined;
}

/** Routes whose call needs more than the shared objects and `{}`. */
const CALLS: Record<string, (kind: Kind) => Promise<Call>> = {
  'DELETE /api/advertiser/affiliate-programs/{id}': async () => ({
    params: { id: (await createProgram(sql, { workspaceId: ws })).id },
  }),
  'POST /api/advertiser/affiliate-programs/{id}/regenerate-api-token': async () => ({
    params: { id: (await createProgram(sql, { workspaceId: ws })).id },
  }),
  'PUT /api/advertiser/members/{userId}': async () => ({
    params: { userId: await member() },
    body: { role: 'member' },
  }),
  'DELETE /api/advertiser/members/{userId}': async () => ({ params: { userId: await member() } }),
  'PUT /api/advertiser/api-keys/{id}': async () => ({
    params: { id: (await key(null)).id },
    body: { name: 'renamed' },
  }),
  'DELETE /api/advertiser/api-keys/{id}': async () => ({ params: { id: (await key(null)).id } }),
  'DELETE /api/advertiser/webhooks/{id}': async () => ({ params: { id: await endpoint() } }),
  'DELETE /api/advertiser/affiliate-programs/{id}/groups/{groupId}': async () => ({
    params: { groupId: await group() },
  }),
  'DELETE /api/advertiser/affiliate-programs/{id}/bonuses/{bonusId}': async () => ({
    params: { bonusId: await bonus() },
  }),
  'POST /api/auth/logout': async (kind) => ({ headers: await ownSession(kind) }),
  'DELETE /api/auth/session': async (kind) => ({ headers: await ownSession(kind) }),
  'POST /api/partner/auth/logout': async (kind) => ({ headers: await ownSession(kind) }),
  'DELETE /api/partner/auth/session': async (kind) => ({ headers: await ownSession(kind) }),
  'POST /api/partner/invitations/{partnerId}/accept': async (kind) => ({
    params: { partnerId: kind === 'psess_' ? await invitation() : 1 },
  }),
  'POST /api/partner/invitations/{partnerId}/decline': async (kind) => ({
    params: { partnerId: kind === 'psess_' ? await invitation() : 1 },
  }),
};

interface Operation {
  method: string;
  path: string;
  query: string[];
  hasBody: boolean;
}

function fill(path: string, params: Params): string {
  return path.replace(/\{([A-Za-z]+)\}/g, (_m, name: string) => {
    const v = params[name] ?? SHARED.find(([re, p]) => re.test(path) && p[name] !== undefined)?.[1][name];
    if (v === undefined) throw new Error(`${path}: no value for {${name}}; add one to this test`);
    return encodeURIComponent(String(v));
  });
}

/** The query the call names: the owner's workspace where the route takes one, B where it takes a program. */
function queryOf(op: Operation): string {
  const q = new URLSearchParams();
  if (op.query.includes('workspace_id')) q.set('workspace_id', String(ws));
  if (op.query.includes('program_id')) q.set('program_id', String(B.id));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

function classOf(status: number): string {
  if (status >= 500) return `${status}`;
  if (status === 401 || status === 403 || status === 404) return String(status);
  return 'ok';
}

/**
 * The class of the route's answer to `kind`; a call the test cannot make (a path parameter it has no value
 * for) is a failure of that route, not of the whole file.
 */
async function callRoute(op: Operation, kind: Kind): Promise<{ cls: string; detail: string }> {
  try {
    return await attempt(op, kind);
  } catch (err) {
    return { cls: 'not called', detail: (err as Error).message };
  }
}

async function attempt(op: Operation, kind: Kind): Promise<{ cls: string; detail: string }> {
  const key = `${op.method} ${op.path}`;
  const c = (await CALLS[key]?.(kind)) ?? {};
  const headers = { ...credentials[kind], ...(c.headers ?? {}) };
  const body = c.body ?? (op.hasBody ? {} : undefined);
  const target = url(fill(op.path, c.params ?? {}) + queryOf(op));
  const r =
    op.method === 'GET'
      ? await getJson(target, headers)
      : await send(op.method as 'POST' | 'PUT' | 'DELETE', target, body, headers);
  return { cls: classOf(r.status), detail: `${r.status} ${r.text.slice(0, 120)}` };
}

/** Runs `jobs` with at most `n` at a time. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

// ---- the checks ----

const doc = (await getJson(url('/api/v1/openapi.json'))).body as {
  paths: Record<
    string,
    Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>
  >;
};
const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({
    method: method.toUpperCase(),
    path,
    query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    hasBody: op.requestBody !== undefined,
  })),
);
const rows = await readTable();

t.test('every route of the OpenAPI document has one row, and every row a route', async (t) => {
  t.ok(operations.length > 90, `${operations.length} operations`);
  const keys = rows.map((r) => r.key);
  const documented = new Set(keys);
  const served = new Set(operations.map((o) => `${o.method} ${o.path}`));
  t.same(
    [...served].filter((k) => !documented.has(k)),
    [],
    'routes without a row in docs/security.md',
  );
  t.same(
    keys.filter((k) => !served.has(k)),
    [],
    'rows of docs/security.md naming no route',
  );
  t.same(
    keys.filter((k, i) => keys.indexOf(k) !== i),
    [],
    'routes with two rows',
  );
});

t.test('each route answers each credential kind as its row says', async (t) => {
  const byKey = new Map(rows.map((r) => [r.key, r]));
  const ops = operations.filter((o) => byKey.has(`${o.method} ${o.path}`));
  const jobs = ops.flatMap((op) =>
    KINDS.map((kind) => async () => ({ op, kind, ...(await callRoute(op, kind)) })),
  );
  const results = await pool(jobs, 6);
  for (const op of ops) {
    const key = `${op.method} ${op.path}`;
    const mine = results.filter((r) => r.op === op);
    const got = Object.fromEntries(mine.map((r) => [r.kind, r.cls]));
    t.same(got, byKey.get(key)!.expect, key, {
      answers: Object.fromEntries(
        mine.filter((r) => r.cls !== byKey.get(key)!.expect[r.kind]).map((r) => [r.kind, r.detail]),
      ),
    });
  }
});
