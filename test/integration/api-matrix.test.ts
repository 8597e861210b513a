// The access matrix, route by route: every /api/advertiser route and dashboard read against each role
// (owner, admin, member, viewer) and each API-key scope (a key lacking exactly the route's scope is 403
// `API key lacks scope <scope>`; a key with only that scope passes the check). "Passes" means neither 401
// nor 403: the route may still answer 404/409 for its own reasons. Workspace-level routes name the
// workspace: every test user also owns the workspace it got at signup, which is the default otherwise.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { seedCommissions } from '../helpers/commissions.ts';
import type { User } from '../helpers/accounts.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { SCOPES } from '../../services/api/modules/auth/service.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web']);
const owner = await signup(svc);
const url = (p: string) => `${svc.baseUrl}${p}`;

async function key(u: User, scopes: string[]): Promise<string> {
  const k = generateSecret('affk_');
  await sql`
    insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes)
    values (${u.workspaceId}, ${u.userId}, 'matrix', ${k.slice(0, 9)}, ${hashSecret(k)}, ${maskSecret(k)}, ${scopes}::text[])`;
  return k;
}

/** A fresh program of the owner's workspace with a partner, a link and a commission. */
async function fixture() {
  const r = await send(
    'POST',
    url('/api/advertiser/affiliate-programs'),
    { name: `M ${Math.random()}` },
    bearer(owner.session),
  );
  const programId = (r.body.data as { id: number }).id;
  const p = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${programId}/partners`),
    { name: 'P', email: `p-${Math.random()}@example.com` },
    bearer(owner.session),
  );
  const partnerId = (p.body.data as { partner: { id: number }; partner_program: { id: number } }).partner.id;
  const ppId = (p.body.data as { partner_program: { id: number } }).partner_program.id;
  const l = await send(
    'POST',
    url(`/api/advertiser/affiliate-programs/${programId}/partners/${partnerId}/links`),
    {},
    bearer(owner.session),
  );
  const linkId = (l.body.data as { id: number }).id;
  // A commission in its hold (lifecycle `create`), for the commission routes.
  const [c] = await seedCommissions(sql, { programId, partnerId, partnerProgramId: ppId }, [
    { saleCents: 1000, amountCents: 100, status: 'pending', payableInDays: 30 },
  ]);
  return { programId, partnerId, ppId, linkId, commissionId: c!.id };
}

interface Route {
  name: string;
  scope: string;
  call(
    token: string,
    f: Awaited<ReturnType<typeof fixture>>,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}
const P = '/api/advertiser/affiliate-programs';
const routes: Route[] = [
  { name: 'GET programs', scope: 'program:list', call: (k) => getJson(url(P), bearer(k)) },
  {
    name: 'POST programs',
    scope: 'program:create',
    call: (k) => send('POST', url(`${P}?workspace_id=${owner.workspaceId}`), { name: 'x' }, bearer(k)),
  },
  {
    name: 'GET program',
    scope: 'program:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}`), bearer(k)),
  },
  {
    name: 'PUT program',
    scope: 'program:update',
    call: (k, f) => send('PUT', url(`${P}/${f.programId}`), { name: 'y' }, bearer(k)),
  },
  {
    name: 'DELETE program',
    scope: 'program:delete',
    call: (k, f) => send('DELETE', url(`${P}/${f.programId}`), undefined, bearer(k)),
  },
  {
    name: 'go-live',
    scope: 'program:go_live',
    call: (k, f) => send('POST', url(`${P}/${f.programId}/go-live`), undefined, bearer(k)),
  },
  {
    name: 'regenerate-api-token',
    scope: 'program:regenerate-token',
    call: (k, f) => send('POST', url(`${P}/${f.programId}/regenerate-api-token`), undefined, bearer(k)),
  },
  {
    name: 'POST partners',
    scope: 'program:update',
    call: (k, f) =>
      send(
        'POST',
        url(`${P}/${f.programId}/partners`),
        { name: 'Q', email: `q-${Math.random()}@example.com` },
        bearer(k),
      ),
  },
  {
    name: 'GET partners',
    scope: 'program:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/partners`), bearer(k)),
  },
  {
    name: 'POST links',
    scope: 'program:update',
    call: (k, f) => send('POST', url(`${P}/${f.programId}/partners/${f.partnerId}/links`), {}, bearer(k)),
  },
  {
    name: 'GET links',
    scope: 'program:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/partners/${f.partnerId}/links`), bearer(k)),
  },
  {
    name: 'PUT link',
    scope: 'program:update',
    call: (k, f) =>
      send(
        'PUT',
        url(`${P}/${f.programId}/partners/${f.partnerId}/links/${f.linkId}`),
        { status: 'inactive' },
        bearer(k),
      ),
  },
  {
    name: 'approve partner',
    scope: 'partners:write',
    call: (k, f) =>
      send('POST', url(`${P}/${f.programId}/partners/${f.partnerId}/approve`), undefined, bearer(k)),
  },
  {
    name: 'reject partner',
    scope: 'partners:write',
    call: (k, f) => send('POST', url(`${P}/${f.programId}/partners/${f.partnerId}/reject`), {}, bearer(k)),
  },
  {
    name: 'invite partner',
    scope: 'partners:write',
    call: (k, f) =>
      send('POST', url(`${P}/${f.programId}/partners/${f.partnerId}/invite`), undefined, bearer(k)),
  },
  {
    name: 'GET commissions',
    scope: 'program:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/commissions`), bearer(k)),
  },
  {
    name: 'mark-paid',
    scope: 'program:update',
    call: (k, f) =>
      send('POST', url(`/api/advertiser/commissions/${f.commissionId}/mark-paid`), undefined, bearer(k)),
  },
  {
    name: 'approve commission',
    scope: 'program:update',
    call: (k, f) =>
      send('POST', url(`/api/advertiser/commissions/${f.commissionId}/approve`), undefined, bearer(k)),
  },
  {
    name: 'reject commission',
    scope: 'program:update',
    call: (k, f) => send('POST', url(`/api/advertiser/commissions/${f.commissionId}/reject`), {}, bearer(k)),
  },
  {
    name: 'GET payouts',
    scope: 'payouts:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/payouts`), bearer(k)),
  },
  {
    name: 'GET payouts preview',
    scope: 'payouts:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/payouts/preview`), bearer(k)),
  },
  {
    name: 'GET payouts export',
    scope: 'payouts:read',
    call: (k, f) => getJson(url(`${P}/${f.programId}/payouts/export?format=csv`), bearer(k)),
  },
  {
    name: 'POST payouts',
    scope: 'payouts:write',
    call: (k, f) => send('POST', url(`${P}/${f.programId}/payouts`), {}, bearer(k)),
  },
  {
    name: 'GET payout',
    scope: 'payouts:read',
    call: async (k, f) => getJson(url(`/api/advertiser/payouts/${await payoutOf(f)}`), bearer(k)),
  },
  {
    name: 'mark payout paid',
    scope: 'payouts:write',
    call: async (k, f) =>
      send('POST', url(`/api/advertiser/payouts/${await payoutOf(f)}/mark-paid`), {}, bearer(k)),
  },
  {
    name: 'cancel payout',
    scope: 'payouts:write',
    call: async (k, f) =>
      send('POST', url(`/api/advertiser/payouts/${await payoutOf(f)}/cancel`), undefined, bearer(k)),
  },
  {
    name: 'PUT processor-connection',
    scope: 'program:update',
    call: (k) =>
      send(
        'PUT',
        url(`/api/advertiser/processor-connection?workspace_id=${owner.workspaceId}`),
        { status: 'pending' },
        bearer(k),
      ),
  },
  {
    name: 'GET processor-connection',
    scope: 'program:read',
    call: (k) =>
      getJson(url(`/api/advertiser/processor-connection?workspace_id=${owner.workspaceId}`), bearer(k)),
  },
];
const passes = (s: number) => s !== 401 && s !== 403;

/**
 * A pending payout of an approved commission of the fixture's partner (created with no hold, approved by the
 * approval sweep: the fixture's own is still in its hold), made by the owner.
 */
async function payoutOf(f: Awaited<ReturnType<typeof fixture>>): Promise<number> {
  await seedCommissions(sql, { programId: f.programId, partnerId: f.partnerId, partnerProgramId: f.ppId }, [
    { saleCents: 1000, amountCents: 100 },
  ]);
  const r = await send('POST', url(`${P}/${f.programId}/payouts`), {}, bearer(owner.session));
  return (r.body.data as { id: number }[])[0]!.id;
}

t.test('each scope × route: lacking the scope is 403 naming it; the scope alone passes', async (t) => {
  for (const r of routes) {
    const f = await fixture();
    const without = await key(
      owner,
      SCOPES.filter((s) => s !== '*' && s !== r.scope),
    );
    const denied = await r.call(without, f);
    t.equal(denied.status, 403, `${r.name} without ${r.scope}`);
    t.same(denied.body, { error: `API key lacks scope ${r.scope}` }, `${r.name}: the missing scope is named`);
    const only = await key(owner, [r.scope]);
    const allowed = await r.call(only, await fixture());
    t.ok(
      passes(allowed.status),
      `${r.name} with only ${r.scope}: ${allowed.status} ${JSON.stringify(allowed.body)}`,
    );
    const star = await r.call(await key(owner, ['*']), await fixture());
    t.ok(passes(star.status), `${r.name} with *: ${star.status}`);
  }
});

t.test('each role × route: owner and admin everything; member and viewer read only', async (t) => {
  const roles = {
    owner,
    admin: await memberOf(svc, sql, owner.workspaceId, 'admin'),
    member: await memberOf(svc, sql, owner.workspaceId, 'member'),
    viewer: await memberOf(svc, sql, owner.workspaceId, 'viewer'),
  };
  const readScopes = new Set(['program:list', 'program:read', 'partners:read', 'payouts:read']);
  for (const r of routes) {
    for (const [role, u] of Object.entries(roles)) {
      const res = await r.call(u.session, await fixture());
      const expectAllowed = role === 'owner' || role === 'admin' || readScopes.has(r.scope);
      if (expectAllowed)
        t.ok(passes(res.status), `${role} ${r.name}: ${res.status} ${JSON.stringify(res.body)}`);
      else t.equal(res.status, 403, `${role} ${r.name} is 403`);
    }
  }
});

t.test('dashboard reads × role, and keys refused there (sessions only)', async (t) => {
  const f = await fixture();
  const roles = {
    owner,
    admin: await memberOf(svc, sql, owner.workspaceId, 'admin'),
    member: await memberOf(svc, sql, owner.workspaceId, 'member'),
    viewer: await memberOf(svc, sql, owner.workspaceId, 'viewer'),
  };
  const reads = [
    {
      name: 'status',
      path: `/api/tracking/status/${f.programId}`,
      allowed: ['owner', 'admin', 'member', 'viewer'],
    },
    { name: 'events', path: `/api/tracking/events/${f.programId}`, allowed: ['owner', 'admin', 'member'] },
    {
      name: 'performance',
      path: `/api/tracking/performance/${f.programId}`,
      allowed: ['owner', 'admin', 'member', 'viewer'],
    },
  ];
  for (const r of reads) {
    for (const [role, u] of Object.entries(roles)) {
      const res = await getJson(url(r.path), bearer(u.session));
      t.equal(res.status, r.allowed.includes(role) ? 200 : 403, `${role} ${r.name}`);
    }
    t.equal(
      (await getJson(url(r.path), bearer(await key(owner, ['*'])))).status,
      401,
      `a key on ${r.name} is 401`,
    );
    const stranger = await signup(svc);
    t.equal(
      (await getJson(url(r.path), bearer(stranger.session))).status,
      404,
      `another workspace on ${r.name} is 404`,
    );
  }
});
