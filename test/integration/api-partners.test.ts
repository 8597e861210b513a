// Partners, referral links, commissions and mark-paid through the real API and the real pipeline: partners
// reused by email within a workspace, globally unique short links, a link deactivated through the API seen
// by the click endpoint, commissions created by real clicks and sales, and mark-paid moving the status and
// the balances in one step, after which a refund is deducted in full (no clamp) and the balance goes negative.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import type { User } from '../helpers/accounts.ts';
import { seedCommissions } from '../helpers/commissions.ts';

const sql = testSql(t);
const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
]);
const url = (p: string) => `${svc.baseUrl}${p}`;
const programsUrl = url('/api/advertiser/affiliate-programs');
const uniq = () => randomBytes(4).toString('hex');

interface Created {
  id: number;
  token: string;
}
async function newProgram(u: User, body: Record<string, unknown> = {}): Promise<Created> {
  const r = await send('POST', programsUrl, { name: `P ${uniq()}`, ...body }, bearer(u.session));
  if (r.status !== 201) throw new Error(`program create failed: ${r.text}`);
  const d = r.body.data as { id: number; api_token: string };
  return { id: d.id, token: d.api_token };
}
async function addPartner(u: User | string, programId: number, body: unknown) {
  return send(
    'POST',
    `${programsUrl}/${programId}/partners`,
    body,
    bearer(typeof u === 'string' ? u : u.session),
  );
}
interface PartnerCreated {
  partner: { id: number; name: string; email: string };
  partner_program: { id: number; status: string; created_at: string };
}
async function partnerIn(u: User, programId: number, email = `p-${uniq()}@example.com`) {
  const r = await addPartner(u, programId, { name: 'Pat Partner', email });
  if (r.status !== 201) throw new Error(`partner add failed: ${r.text}`);
  return r.body.data as PartnerCreated;
}
interface Link {
  id: number;
  short_link: string;
  status: string;
  clicks: number;
  last_clicked: string | null;
}
async function newLink(u: User, programId: number, partnerId: number, body: unknown = {}) {
  return send('POST', `${programsUrl}/${programId}/partners/${partnerId}/links`, body, bearer(u.session));
}
const click = (shortLink: string) =>
  postJson(url('/api/v1/track/click'), { affiliate_url: `https://shop.example/?aff=${shortLink}` });

const owner = await signup(svc);

t.test('add partner: shape, reuse by email in the workspace, 409 when already in, validation', async (t) => {
  const p1 = await newProgram(owner);
  const p2 = await newProgram(owner);
  const email = `Jane.${uniq()}@Example.com`;
  const r = await addPartner(owner, p1.id, { name: '  Jane  ', email });
  t.equal(r.status, 201, r.text);
  const d = r.body.data as PartnerCreated;
  t.match(d, {
    partner: { id: Number, name: 'Jane', email: email.toLowerCase() },
    partner_program: { id: Number, status: 'approved', created_at: String },
  });
  t.ok(Date.parse(d.partner_program.created_at) > Date.now() - 60_000);
  const [row] = await sql`select workspace_id from partners where id = ${d.partner.id}`;
  t.equal(Number(row!.workspace_id), owner.workspaceId);

  const again = await addPartner(owner, p1.id, { name: 'Jane', email: email.toUpperCase() });
  t.equal(again.status, 409);
  t.same(again.body, { error: 'Partner is already in this program' });

  const other = await addPartner(owner, p2.id, { name: 'Jane Doe', email, status: 'pending' });
  t.equal(other.status, 201);
  const od = other.body.data as PartnerCreated;
  t.equal(od.partner.id, d.partner.id, 'the same partner, reused by email within the workspace');
  t.equal(od.partner.name, 'Jane', 'the existing partner keeps its name');
  t.equal(od.partner_program.status, 'pending');
  t.not(od.partner_program.id, d.partner_program.id);

  const elsewhere = await signup(svc);
  const p3 = await newProgram(elsewhere);
  const e = (await addPartner(elsewhere, p3.id, { name: 'Jane', email })).body.data as PartnerCreated;
  t.not(e.partner.id, d.partner.id, 'another workspace gets its own partner');

  // Concurrent adds of one new email to several programs: still one partner.
  const ps = await Promise.all([1, 2, 3, 4, 5].map(() => newProgram(owner)));
  const fresh = `race-${uniq()}@example.com`;
  const raced = await Promise.all(ps.map((p) => addPartner(owner, p.id, { name: 'Racer', email: fresh })));
  t.same(
    raced.map((x) => x.status),
    [201, 201, 201, 201, 201],
  );
  t.equal(new Set(raced.map((x) => (x.body.data as PartnerCreated).partner.id)).size, 1, 'one partner');

  for (const [body, error] of [
    [{ email: 'a@b.co' }, 'name is required and must be 1 to 200 characters'],
    [{ name: ' ', email: 'a@b.co' }, 'name is required and must be 1 to 200 characters'],
    [{ name: 'x'.repeat(201), email: 'a@b.co' }, 'name is required and must be 1 to 200 characters'],
    [{ name: 'A' }, 'email must be a valid email address'],
    [{ name: 'A', email: 'not-an-email' }, 'email must be a valid email address'],
    [{ name: 'A', email: 7 }, 'email must be a valid email address'],
    [{ name: 'A', email: 'a@b.co', status: 'active' }, "status must be 'approved' or 'pending'"],
  ] as [unknown, string][]) {
    const res = await addPartner(owner, p1.id, body);
    t.equal(res.status, 400, JSON.stringify(body));
    t.same(res.body, { error }, JSON.stringify(body));
  }
  t.same((await addPartner(owner, p1.id, 'x')).body, { error: 'Request body must be a JSON object' });

  // Access: another workspace's program is 404; member and viewer cannot add; a read-only key cannot.
  const foreign = await addPartner(owner, p3.id, { name: 'A', email: 'a@b.co' });
  t.equal(foreign.status, 404);
  t.same(foreign.body, { error: 'Program not found' });
  for (const role of ['member', 'viewer'] as const) {
    const u = await memberOf(svc, sql, owner.workspaceId, role);
    const res = await addPartner(u, p1.id, { name: 'A', email: 'a@b.co' });
    t.equal(res.status, 403, role);
    t.same(res.body, { error: `Your role (${role}) lacks permission program:update` });
    const list = await getJson(`${programsUrl}/${p1.id}/partners`, bearer(u.session));
    t.equal(list.status, 200, `${role} lists partners`);
  }
  const readKey = await apiKey(owner, ['program:read']);
  t.same((await addPartner(readKey, p1.id, { name: 'A', email: 'a@b.co' })).body, {
    error: 'API key lacks scope program:update',
  });
  const writeKey = await apiKey(owner, ['program:update']);
  t.equal((await addPartner(writeKey, p1.id, { name: 'K', email: `k-${uniq()}@example.com` })).status, 201);
});

t.test('list partners with both balances', async (t) => {
  const p = await newProgram(owner);
  const a = await partnerIn(owner, p.id);
  const b = await partnerIn(owner, p.id);
  // The balances by the lifecycle's credits: 5.67 earned in this program, 6.67 more in another program the
  // same partner joined (the partner's balance is across programs).
  await seedCommissions(
    sql,
    { programId: p.id, partnerId: a.partner.id, partnerProgramId: a.partner_program.id },
    [{ saleCents: 5670, amountCents: 567, status: 'pending', payableInDays: 30 }],
  );
  const elsewhere = await newProgram(owner);
  const [otherPp] = await sql<{ id: string }[]>`
    insert into partner_programs (partner_id, program_id) values (${a.partner.id}, ${elsewhere.id}) returning id`;
  await seedCommissions(
    sql,
    { programId: elsewhere.id, partnerId: a.partner.id, partnerProgramId: Number(otherPp!.id) },
    [{ saleCents: 6670, amountCents: 667, status: 'pending', payableInDays: 30 }],
  );
  const r = await getJson(`${programsUrl}/${p.id}/partners`, bearer(owner.session));
  t.equal(r.status, 200);
  // Every partner joins the program's default group (docs/rewards.md).
  const [dflt] = await sql<
    { id: string }[]
  >`select id from program_groups where program_id = ${p.id} and is_default`;
  const group = { id: Number(dflt!.id), name: 'Default', slug: 'default' };
  const rewards = { group, group_locked: false, commission_override: null };
  t.same(r.body.data, [
    {
      id: a.partner.id,
      partner_id: a.partner.id,
      name: 'Pat Partner',
      email: a.partner.email,
      program_id: p.id,
      partner_program_id: a.partner_program.id,
      status: 'approved',
      rejection_reason: null,
      source: 'advertiser',
      application: null,
      claimed: false,
      clicks: 0,
      balance_cents: 1234,
      program_balance_cents: 567,
      joined_at: a.partner_program.created_at,
      ...rewards,
      // The partner's view (shared/views/partner.ts), as partner.* events carry it.
      is_test: false,
      created_at: a.partner_program.created_at,
      updated_at: a.partner_program.created_at,
    },
    {
      id: b.partner.id,
      partner_id: b.partner.id,
      name: 'Pat Partner',
      email: b.partner.email,
      program_id: p.id,
      partner_program_id: b.partner_program.id,
      status: 'approved',
      rejection_reason: null,
      source: 'advertiser',
      application: null,
      claimed: false,
      clicks: 0,
      balance_cents: 0,
      program_balance_cents: 0,
      joined_at: b.partner_program.created_at,
      ...rewards,
      // The partner's view (shared/views/partner.ts), as partner.* events carry it.
      is_test: false,
      created_at: b.partner_program.created_at,
      updated_at: b.partner_program.created_at,
    },
  ]);
  const stranger = await signup(svc);
  t.equal((await getJson(`${programsUrl}/${p.id}/partners`, bearer(stranger.session))).status, 404);
});

t.test('links: create (given or generated), unique, validation, list, 404s', async (t) => {
  const p = await newProgram(owner);
  const other = await newProgram(owner);
  const a = await partnerIn(owner, p.id);
  const outsider = await partnerIn(owner, other.id);
  const wanted = `Jane_${uniq()}-x`;
  const r = await newLink(owner, p.id, a.partner.id, { short_link: wanted });
  t.equal(r.status, 201, r.text);
  t.same(Object.keys(r.body.data as object).sort(), ['clicks', 'id', 'last_clicked', 'short_link', 'status']);
  t.match(r.body.data, { id: Number, short_link: wanted, status: 'active', clicks: 0, last_clicked: null });
  const gen = await newLink(owner, p.id, a.partner.id);
  t.equal(gen.status, 201);
  t.match((gen.body.data as Link).short_link, /^[A-Za-z0-9_-]{8}$/, 'generated: 8 url-safe characters');
  const [row] = await sql`
    select program_id, partner_id, partner_program_id from referral_links where id = ${(r.body.data as Link).id}`;
  t.same(
    [Number(row!.program_id), Number(row!.partner_id), Number(row!.partner_program_id)],
    [p.id, a.partner.id, a.partner_program.id],
  );

  const dup = await newLink(owner, other.id, outsider.partner.id, { short_link: wanted });
  t.equal(dup.status, 409, 'short_link is unique across programs');
  t.same(dup.body, { error: 'short_link is already taken' });
  const foreignOwner = await signup(svc);
  const fp = await newProgram(foreignOwner);
  const fpartner = await partnerIn(foreignOwner, fp.id);
  t.equal(
    (await newLink(foreignOwner, fp.id, fpartner.partner.id, { short_link: wanted })).status,
    409,
    'and across workspaces',
  );

  for (const bad of ['', 'has space', 'x'.repeat(65), 'ünï', 5, 'a/b']) {
    const res = await newLink(owner, p.id, a.partner.id, { short_link: bad });
    t.equal(res.status, 400, String(bad));
    t.same(res.body, { error: 'short_link must be 1 to 64 characters: letters, digits, _ or -' });
  }
  for (const partnerId of [outsider.partner.id, 99999999, 'abc']) {
    const res = await send(
      'POST',
      `${programsUrl}/${p.id}/partners/${partnerId}/links`,
      {},
      bearer(owner.session),
    );
    t.equal(res.status, 404, String(partnerId));
    t.same(res.body, { error: 'Partner not found in this program' });
    const list = await getJson(`${programsUrl}/${p.id}/partners/${partnerId}/links`, bearer(owner.session));
    t.same(list.body, { error: 'Partner not found in this program' });
  }

  const list = await getJson(`${programsUrl}/${p.id}/partners/${a.partner.id}/links`, bearer(owner.session));
  t.equal(list.status, 200);
  t.same(
    (list.body.data as Link[]).map((l) => l.short_link),
    [wanted, (gen.body.data as Link).short_link],
  );
  const viewer = await memberOf(svc, sql, owner.workspaceId, 'viewer');
  t.equal(
    (await getJson(`${programsUrl}/${p.id}/partners/${a.partner.id}/links`, bearer(viewer.session))).status,
    200,
  );
  const vr = await newLink(viewer, p.id, a.partner.id);
  t.equal(vr.status, 403);
  t.equal(
    (await getJson(`${programsUrl}/${fp.id}/partners/${fpartner.partner.id}/links`, bearer(owner.session)))
      .status,
    404,
  );
});

t.test('deactivating a link through the API: the click endpoint says inactive within seconds', async (t) => {
  const p = await newProgram(owner);
  const a = await partnerIn(owner, p.id);
  const link = (await newLink(owner, p.id, a.partner.id)).body.data as Link;
  const linkUrl = `${programsUrl}/${p.id}/partners/${a.partner.id}/links/${link.id}`;
  const first = await click(link.short_link);
  t.equal(first.status, 200);
  t.equal(first.body.success, true, 'active: the click is tracked (and now cached)');

  const off = await send('PUT', linkUrl, { status: 'inactive' }, bearer(owner.session));
  t.equal(off.status, 200, JSON.stringify(off.body));
  t.match(off.body.data, { id: link.id, short_link: link.short_link, status: 'inactive' });
  const started = Date.now();
  const inactive = await waitFor(
    'click endpoint to see the inactive link',
    async () => {
      const r = await click(link.short_link);
      return r.body.success === false ? r : null;
    },
    5000,
    50,
  );
  t.equal(inactive.status, 200);
  t.same(inactive.body, { success: false, error: 'Referral link is inactive' });
  t.ok(Date.now() - started < 5000, `seen after ${Date.now() - started} ms`);

  // Writing the same status again changes nothing (no cache invalidation either).
  const [before] = await sql<{ n: number }[]>`
    select count(*)::int as n from cache_invalidations where kind = 'link' and key = ${link.short_link}`;
  const same = await send('PUT', linkUrl, { status: 'inactive' }, bearer(owner.session));
  t.equal(same.status, 200);
  t.match(same.body.data, { status: 'inactive' });
  const [after] = await sql<{ n: number }[]>`
    select count(*)::int as n from cache_invalidations where kind = 'link' and key = ${link.short_link}`;
  t.equal(after!.n, before!.n, 'no write for an unchanged status');

  const on = await send('PUT', linkUrl, { status: 'active' }, bearer(owner.session));
  t.match(on.body.data, { status: 'active' });
  await waitFor(
    'click endpoint to see the active link',
    async () => (await click(link.short_link)).body.success === true,
    5000,
    50,
  );

  // The click counters the worker keeps are what the link listing shows.
  const listed = await waitFor('clicks counted', async () => {
    const r = await getJson(`${programsUrl}/${p.id}/partners/${a.partner.id}/links`, bearer(owner.session));
    const l = (r.body.data as Link[])[0]!;
    return l.clicks >= 2 ? l : null;
  });
  t.type(listed.last_clicked, 'string');

  for (const body of [{}, { status: 'paused' }, { status: null }]) {
    const r = await send('PUT', linkUrl, body, bearer(owner.session));
    t.equal(r.status, 400);
    t.same(r.body, { error: "status must be 'active' or 'inactive'" });
  }
  const b = await partnerIn(owner, p.id);
  for (const path of [
    `${programsUrl}/${p.id}/partners/${b.partner.id}/links/${link.id}`,
    `${programsUrl}/${p.id}/partners/${a.partner.id}/links/99999999`,
    `${programsUrl}/${p.id}/partners/${a.partner.id}/links/abc`,
  ]) {
    const r = await send('PUT', path, { status: 'inactive' }, bearer(owner.session));
    t.equal(r.status, 404, path);
    t.same(r.body, { error: 'Referral link not found' });
  }
  const member = await memberOf(svc, sql, owner.workspaceId, 'member');
  t.equal((await send('PUT', linkUrl, { status: 'inactive' }, bearer(member.session))).status, 403);
});

// ---- commissions from real sales ----

async function apiKey(u: User, scopes: string[]): Promise<string> {
  const key = generateSecret('affk_');
  await sql`
    insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes)
    values (${u.workspaceId}, ${u.userId}, 'test key', ${key.slice(0, 9)}, ${hashSecret(key)}, ${maskSecret(key)},
            ${scopes}::text[])`;
  return key;
}

interface Sale {
  transactionId: string;
  commissionId: number;
}
/** A click through the link, then a sale of `amountCents` attributed to it by click_id. */
async function sale(
  program: Created,
  shortLink: string,
  amountCents: number,
  currency = 'USD',
): Promise<Sale> {
  const c = await click(shortLink);
  if (c.status !== 200 || c.body.success !== true) throw new Error(`click failed: ${JSON.stringify(c.body)}`);
  const clickId = c.body.click_id as string;
  await waitFor('the click to land', async () => {
    const [row] = await sql`select 1 from customers where click_id = ${clickId}`;
    return row;
  });
  const transactionId = `txn-${uniq()}`;
  const s = await postJson(
    url('/api/v1/track/sale'),
    { transaction_id: transactionId, amount_cents: amountCents, click_id: clickId, currency },
    bearer(program.token),
  );
  if (s.status !== 200 || typeof s.body.commission_id !== 'number') {
    throw new Error(`sale failed: ${s.status} ${JSON.stringify(s.body)}`);
  }
  return { transactionId, commissionId: s.body.commission_id };
}

interface Balances {
  partner: number;
  program: number;
  partnerSum: number;
  programSum: number;
}
async function balances(partnerId: number, partnerProgramId: number): Promise<Balances> {
  const [r] = await sql<{ partner: string; program: string; psum: string; ppsum: string }[]>`
    select p.balance_cents as partner, pp.balance_cents as program,
           (select coalesce(sum(partner_cents), 0) from ledger_entries where partner_id = p.id)::text as psum,
           (select coalesce(sum(program_cents), 0) from ledger_entries where partner_program_id = pp.id)::text as ppsum
    from partners p, partner_programs pp where p.id = ${partnerId} and pp.id = ${partnerProgramId}`;
  return {
    partner: Number(r!.partner),
    program: Number(r!.program),
    partnerSum: Number(r!.psum),
    programSum: Number(r!.ppsum),
  };
}

interface Commission {
  id: number;
  status: string;
  amount_cents: number;
  currency: string;
  sale_id: number;
  partner_id: number;
  refund_reason: string | null;
  paid_at: string | null;
  created_at: string;
}

t.test('mark paid: status, ledger entry, balances; then a refund drives the balance negative', async (t) => {
  const program = await newProgram(owner, {
    commission: { type: 'percentage', percent: 30 },
    currency: 'EUR',
  });
  const a = await partnerIn(owner, program.id);
  // A second program of the same partner (in the same currency: a partner's programs share one): the
  // partner balance spans both, the program balance does not.
  const program2 = await newProgram(owner, {
    commission: { type: 'flat', amount_cents: 700 },
    currency: 'EUR',
  });
  const a2 = (await addPartner(owner, program2.id, { name: 'x', email: a.partner.email })).body
    .data as PartnerCreated;
  t.equal(a2.partner.id, a.partner.id);
  const link = (await newLink(owner, program.id, a.partner.id)).body.data as Link;
  const link2 = (await newLink(owner, program2.id, a.partner.id)).body.data as Link;

  const s1 = await sale(program, link.short_link, 10_000, 'EUR'); // commission 3000
  await sale(program2, link2.short_link, 5_000, 'EUR'); // commission 700 (flat)
  await waitFor('both commissions credited', async () => {
    const b = await balances(a.partner.id, a.partner_program.id);
    return b.partner === 3700 && b.program === 3000;
  });

  const commissionsUrl = `${programsUrl}/${program.id}/commissions`;
  const list = await getJson(commissionsUrl, bearer(owner.session));
  t.equal(list.status, 200);
  const [c] = list.body.data as Commission[];
  t.match(c, {
    id: s1.commissionId,
    status: 'pending',
    amount_cents: 3000,
    currency: 'EUR',
    sale_id: Number,
    partner_id: a.partner.id,
    refund_reason: null,
    paid_at: null,
    created_at: String,
  });
  t.equal((list.body.data as Commission[]).length, 1, 'only this program’s commissions');

  const paid = await send('POST', url(`/api/advertiser/commissions/${c!.id}/mark-paid`), undefined, {
    ...bearer(owner.session),
  });
  t.equal(paid.status, 200, paid.text);
  const pc = paid.body.data as Commission;
  t.match(pc, { id: c!.id, status: 'paid', amount_cents: 3000 });
  t.ok(Date.parse(pc.paid_at!) > Date.now() - 60_000, 'paid_at set');

  // The entry and the balances are there as soon as the request returns: same transaction.
  const entries = await sql<
    { kind: string; requested: string; partner: string; program: string; commission_id: string }[]
  >`select kind, requested_cents as requested, partner_cents as partner, program_cents as program, commission_id
    from ledger_entries where entry_key = ${`commission:${c!.id}:paid`}`;
  t.same(entries, [
    {
      kind: 'commission_paid',
      requested: '-3000',
      partner: '-3000',
      program: '-3000',
      commission_id: String(c!.id),
    },
  ]);
  t.same(await balances(a.partner.id, a.partner_program.id), {
    partner: 700,
    program: 0,
    partnerSum: 700,
    programSum: 0,
  });
  const partners = await getJson(`${programsUrl}/${program.id}/partners`, bearer(owner.session));
  t.match((partners.body.data as Record<string, unknown>[])[0], {
    id: a.partner.id,
    balance_cents: 700,
    program_balance_cents: 0,
  });

  const twice = await send('POST', url(`/api/advertiser/commissions/${c!.id}/mark-paid`), undefined, {
    ...bearer(owner.session),
  });
  t.equal(twice.status, 409);
  t.same(twice.body, { error: 'Commission is already paid' });
  const [n] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_entries where commission_id = ${c!.id}`;
  t.equal(n!.n, 2, 'created and paid: one entry each');

  t.same(
    ((await getJson(`${commissionsUrl}?status=paid`, bearer(owner.session))).body.data as Commission[]).map(
      (x) => x.id,
    ),
    [c!.id],
  );
  t.same((await getJson(`${commissionsUrl}?status=pending`, bearer(owner.session))).body.data, []);

  // A full refund of the paid commission: deducted in full, not clamped at zero.
  const refund = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: s1.transactionId, refund_reason: 'chargeback' },
    bearer(program.token),
  );
  t.equal(refund.status, 200, JSON.stringify(refund.body));
  t.match(refund.body, { success: true, status: 'reversed', commission_id: c!.id, deductionAmount: 30 });
  const after = await waitFor('refund deducted', async () => {
    const b = await balances(a.partner.id, a.partner_program.id);
    return b.program < 0 ? b : null;
  });
  t.same(
    after,
    { partner: -2300, program: -3000, partnerSum: -2300, programSum: -3000 },
    'negative balances',
  );
  const reversed = (await getJson(`${commissionsUrl}?status=reversed`, bearer(owner.session))).body
    .data as Commission[];
  t.match(reversed, [{ id: c!.id, status: 'reversed', refund_reason: 'chargeback' }]);
  const afterRefund = await send('POST', url(`/api/advertiser/commissions/${c!.id}/mark-paid`), undefined, {
    ...bearer(owner.session),
  });
  t.equal(afterRefund.status, 409);
  t.same(afterRefund.body, { error: 'A reversed commission cannot be marked paid' });
  const partnersAfter = await getJson(`${programsUrl}/${program.id}/partners`, bearer(owner.session));
  t.match((partnersAfter.body.data as Record<string, unknown>[])[0], {
    balance_cents: -2300,
    program_balance_cents: -3000,
  });
});

t.test('mark paid: refunded commissions, access and 404s; commission list validation', async (t) => {
  const program = await newProgram(owner, { commission: { type: 'percentage', percent: 10 } });
  const a = await partnerIn(owner, program.id);
  const link = (await newLink(owner, program.id, a.partner.id)).body.data as Link;
  const s = await sale(program, link.short_link, 20_000);
  const partial = await postJson(
    url('/api/v1/track/refund'),
    { transaction_id: s.transactionId, refund_amount_cents: 5_000 },
    bearer(program.token),
  );
  t.match(partial.body, { status: 'refunded' });
  const markUrl = url(`/api/advertiser/commissions/${s.commissionId}/mark-paid`);
  const r = await send('POST', markUrl, undefined, bearer(owner.session));
  t.equal(r.status, 409);
  t.same(r.body, { error: 'A refunded commission cannot be marked paid' });

  const s2 = await sale(program, link.short_link, 1_000);
  const mark2 = url(`/api/advertiser/commissions/${s2.commissionId}/mark-paid`);
  const stranger = await signup(svc);
  const foreign = await send('POST', mark2, undefined, bearer(stranger.session));
  t.equal(foreign.status, 404, 'another workspace’s commission is 404');
  t.same(foreign.body, { error: 'Commission not found' });
  for (const id of ['99999999', 'abc', '0']) {
    const res = await send('POST', url(`/api/advertiser/commissions/${id}/mark-paid`), undefined, {
      ...bearer(owner.session),
    });
    t.equal(res.status, 404, id);
    t.same(res.body, { error: 'Commission not found' });
  }
  for (const role of ['member', 'viewer'] as const) {
    const u = await memberOf(svc, sql, owner.workspaceId, role);
    const res = await send('POST', mark2, undefined, bearer(u.session));
    t.equal(res.status, 403, role);
    t.same(res.body, { error: `Your role (${role}) lacks permission program:update` });
    t.equal(
      (await getJson(`${programsUrl}/${program.id}/commissions`, bearer(u.session))).status,
      200,
      `${role} reads commissions`,
    );
  }
  const readKey = await apiKey(owner, ['program:read']);
  t.same((await send('POST', mark2, undefined, bearer(readKey))).body, {
    error: 'API key lacks scope program:update',
  });
  const [still] = await sql`select status from commissions where id = ${s2.commissionId}`;
  t.equal(still!.status, 'pending', 'refused attempts changed nothing');
  const writeKey = await apiKey(owner, ['program:update']);
  t.equal((await send('POST', mark2, undefined, bearer(writeKey))).status, 200, 'a key with program:update');

  const commissionsUrl = `${programsUrl}/${program.id}/commissions`;
  const all = (await getJson(commissionsUrl, bearer(owner.session))).body.data as Commission[];
  t.same(
    all.map((c) => [c.id, c.status]),
    [
      [s2.commissionId, 'paid'],
      [s.commissionId, 'refunded'],
    ],
    'newest first',
  );
  t.same(
    (
      (await getJson(`${commissionsUrl}?limit=1&offset=1`, bearer(owner.session))).body.data as Commission[]
    ).map((c) => c.id),
    [s.commissionId],
  );
  for (const [q, error] of [
    ['status=bogus', 'status must be one of pending, approved, paid, reversed, refunded, review'],
    ['status=', 'status must be one of pending, approved, paid, reversed, refunded, review'],
    ['limit=0', 'limit must be an integer from 1 to 1000'],
    ['limit=1001', 'limit must be an integer from 1 to 1000'],
    ['limit=x', 'limit must be an integer from 1 to 1000'],
    ['offset=-1', 'offset must be a non-negative integer'],
  ] as [string, string][]) {
    const res = await getJson(`${commissionsUrl}?${q}`, bearer(owner.session));
    t.equal(res.status, 400, q);
    t.same(res.body, { error }, q);
  }
  t.equal((await getJson(`${programsUrl}/${program.id}/commissions`, bearer(stranger.session))).status, 404);
});

t.test('mark paid before the credit lands: the deduction is not clamped, the sums still agree', async (t) => {
  const program = await newProgram(owner, { commission: { type: 'flat', amount_cents: 2500 } });
  const a = await partnerIn(owner, program.id);
  const link = (await newLink(owner, program.id, a.partner.id)).body.data as Link;
  await svc.stop('ledger-worker');
  const s = await sale(program, link.short_link, 9_900);
  t.same(await balances(a.partner.id, a.partner_program.id), {
    partner: 0,
    program: 0,
    partnerSum: 0,
    programSum: 0,
  });
  const r = await send('POST', url(`/api/advertiser/commissions/${s.commissionId}/mark-paid`), undefined, {
    ...bearer(owner.session),
  });
  t.equal(r.status, 200, r.text);
  t.same(
    await balances(a.partner.id, a.partner_program.id),
    { partner: -2500, program: -2500, partnerSum: -2500, programSum: -2500 },
    'paid in full from a zero balance (clamp_at_zero false)',
  );
  await svc.start('ledger-worker');
  const settled = await waitFor('the credit to land', async () => {
    const b = await balances(a.partner.id, a.partner_program.id);
    return b.partner === 0 ? b : null;
  });
  t.same(settled, { partner: 0, program: 0, partnerSum: 0, programSum: 0 });
});

t.test('mark paid is one transaction: a ledger failure leaves the commission unpaid', async (t) => {
  const program = await newProgram(owner, { commission: { type: 'flat', amount_cents: 100 } });
  const a = await partnerIn(owner, program.id);
  const b = await partnerIn(owner, program.id);
  const link = (await newLink(owner, program.id, a.partner.id)).body.data as Link;
  const s = await sale(program, link.short_link, 1_000);
  // Point the commission at another partner's partner-program: the ledger step rejects the entry.
  // world-by-hand: a fault injected on purpose (a commission whose partner-program is not its partner's, which
  // no lifecycle transition makes), so that the ledger step fails inside mark-paid's transaction.
  await sql`update commissions set partner_program_id = ${b.partner_program.id} where id = ${s.commissionId}`;
  const markUrl = url(`/api/advertiser/commissions/${s.commissionId}/mark-paid`);
  const r = await send('POST', markUrl, undefined, bearer(owner.session));
  t.equal(r.status, 500);
  const [c] = await sql`select status, paid_at from commissions where id = ${s.commissionId}`;
  t.same(c, { status: 'pending', paid_at: null }, 'the status change rolled back with the entry');
  const [n] = await sql<{ n: number }[]>`
    select count(*)::int as n from ledger_entries where entry_key = ${`commission:${s.commissionId}:paid`}`;
  t.equal(n!.n, 0);
  // world-by-hand: the fault taken away again.
  await sql`update commissions set partner_program_id = ${a.partner_program.id} where id = ${s.commissionId}`;
  t.equal((await send('POST', markUrl, undefined, bearer(owner.session))).status, 200, 'and can be retried');
});
