// Applications and the advertiser's review (CONTRACT part two "Applications", "Review"): the program
// settings, the public program, applying (one record per email per workspace, auto-approval, the account an
// application makes or the sign-in link it mails), approve / reject / re-invite, the notifications and
// webhook events they write, and a click on the link of a partner who is not approved.
import t from 'tap';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, memberOf, send, signup } from '../helpers/accounts.ts';
import { generateSecret, hashSecret, maskSecret } from '../../shared/domain/secrets.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import { SCOPES } from '../../services/api/modules/auth/service.ts';
import { addPartner, apiProgram, magicTokenOf, mailsTo, uniqEmail } from '../helpers/partners.ts';
import { deliverNotifications } from '../helpers/notifications.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web'], { APPLY_RATE_LIMIT_PER_MINUTE: '4' });
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const P = '/api/advertiser/affiliate-programs';
// Webhook events are written only for a workspace with an enabled endpoint (docs/webhooks.md): this one has.
await sql`insert into webhook_endpoints (workspace_id, url, secret)
  values (${owner.workspaceId}, 'https://hooks.example/partners', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;

const apply = (slug: string, body: unknown, headers: Record<string, string> = {}) =>
  postJson(url(`/api/public/programs/${slug}/apply`), body, headers);
let ipCounter = 0;
/** A fresh client address per application (the per-IP limit is tested on its own). */
const freshIp = () => ({ 'x-forwarded-for': `203.0.113.${++ipCounter % 250}` });

async function webhookEvents(type: string, programId: number) {
  return sql<{ payload: { type: string; data: Record<string, unknown> } }[]>`
    select payload from outbox where topic = ${outboxTopic(svc.prefix, 'webhookEvents')}
      and payload ->> 'type' = ${type} and (payload ->> 'program_id')::bigint = ${programId}
    order by id`;
}

t.test('program settings: defaults, create, update, read, 400s', async (t) => {
  const r = await send(
    'POST',
    url(`${P}?workspace_id=${owner.workspaceId}`),
    { name: 'Settings' },
    bearer(owner.session),
  );
  t.match(r.body.data, { public_page: false, auto_approve: false, description: null, partner_links: true });
  const id = (r.body.data as { id: number }).id;
  const u = await send(
    'PUT',
    url(`${P}/${id}`),
    { public_page: true, auto_approve: true, description: '  Sell our things  ', partner_links: false },
    bearer(owner.session),
  );
  t.match(u.body.data, {
    public_page: true,
    auto_approve: true,
    description: 'Sell our things',
    partner_links: false,
  });
  const cleared = await send('PUT', url(`${P}/${id}`), { description: null }, bearer(owner.session));
  t.match(cleared.body.data, { description: null, public_page: true }, 'null clears the description only');
  const read = await getJson(url(`${P}/${id}`), bearer(owner.session));
  t.match(read.body.data, { public_page: true, auto_approve: true, partner_links: false });
  const bad: [Record<string, unknown>, string][] = [
    [{ public_page: 'yes' }, 'public_page must be true or false'],
    [{ auto_approve: 1 }, 'auto_approve must be true or false'],
    [{ partner_links: 'no' }, 'partner_links must be true or false'],
    [{ description: 'x'.repeat(2001) }, 'description must be a string of at most 2000 characters'],
    [{ description: 5 }, 'description must be a string of at most 2000 characters'],
    [{ public_page: null }, 'public_page cannot be null'],
  ];
  for (const [body, error] of bad) {
    const res = await send('PUT', url(`${P}/${id}`), body, bearer(owner.session));
    t.same([res.status, res.body], [400, { error }], JSON.stringify(body).slice(0, 40));
  }
  const created = await send(
    'POST',
    url(`${P}?workspace_id=${owner.workspaceId}`),
    { name: 'Bad', description: 'x'.repeat(2001) },
    bearer(owner.session),
  );
  t.same(created.body, { error: 'description must be a string of at most 2000 characters' });
  t.equal(
    (
      await send(
        'POST',
        url(`${P}?workspace_id=${owner.workspaceId}`),
        { name: 'Ok', description: null, public_page: null },
        bearer(owner.session),
      )
    ).status,
    201,
    'null on create is omitted',
  );
});

t.test('the public program: only public and live; its terms', async (t) => {
  const p = await apiProgram(svc, owner, {
    public_page: true,
    description: 'Partners earn 25%',
    commission: { type: 'percentage', percent: 25 },
  });
  const r = await getJson(url(`/api/public/programs/${p.slug}`));
  t.equal(r.status, 200);
  t.same(r.body.data, {
    name: (r.body.data as { name: string }).name,
    slug: p.slug,
    description: 'Partners earn 25%',
    currency: 'USD',
    cookie_window_days: 60,
    commission: {
      type: 'percentage',
      percent: 25,
      amount_cents: null,
      recurring: { mode: 'recurring', months: null, first: null },
      product_rules: [],
    },
    hold_days: 30,
    min_payout_cents: 0,
  });
  const notFound = { error: 'Program not found' };
  const hidden = await apiProgram(svc, owner);
  t.same((await getJson(url(`/api/public/programs/${hidden.slug}`))).body, notFound, 'not public');
  const draft = await send(
    'POST',
    url(`${P}?workspace_id=${owner.workspaceId}`),
    { name: 'Draft', public_page: true },
    bearer(owner.session),
  );
  const draftSlug = (draft.body.data as { slug: string }).slug;
  t.same((await getJson(url(`/api/public/programs/${draftSlug}`))).body, notFound, 'a draft');
  t.same(
    (await apply(draftSlug, { name: 'A', email: uniqEmail() }, freshIp())).body,
    notFound,
    'applying to a draft',
  );
  t.same((await getJson(url('/api/public/programs/nope-nope'))).body, notFound);
  await send('DELETE', url(`${P}/${p.id}`), undefined, bearer(owner.session));
  t.same((await getJson(url(`/api/public/programs/${p.slug}`))).body, notFound, 'deleted');
});

t.test(
  'apply: pending; repeat is 200 and changes nothing; notifications, mail and partner.applied',
  async (t) => {
    const p = await apiProgram(svc, owner, { public_page: true });
    const email = uniqEmail('applicant');
    const r = await apply(
      p.slug,
      { name: 'Ada', email: email.toUpperCase(), website: 'https://ada.example', message: 'Hi' },
      freshIp(),
    );
    t.same([r.status, r.body], [201, { data: { status: 'pending' } }]);
    const again = await apply(p.slug, { name: 'Ada 2', email }, freshIp());
    t.same([again.status, again.body], [200, { data: { status: 'pending' } }], 'repeat: the current status');
    const [counts] = await sql<{ partners: number; pps: number }[]>`
    select (select count(*)::int from partners where lower(email) = ${email}) as partners,
           (select count(*)::int from partner_programs where program_id = ${p.id}) as pps`;
    t.same(counts, { partners: 1, pps: 1 }, 'one record');
    const listed = await getJson(url(`${P}/${p.id}/partners`), bearer(owner.session));
    t.match(listed.body.data, [
      {
        email,
        name: 'Ada',
        status: 'pending',
        source: 'application',
        application: { website: 'https://ada.example', message: 'Hi' },
        claimed: false,
      },
    ]);
    // The notification worker's part (the notifications are outbox rows: test/helpers/notifications.ts).
    await deliverNotifications(sql, svc.prefix, svc.baseUrl);
    const notes = await sql<{ recipient_type: string; kind: string }[]>`
    select recipient_type, kind from notifications where program_id = ${p.id} order by id`;
    t.same(
      notes.map((n) => `${n.recipient_type}:${n.kind}`),
      ['advertiser:partner_applied', 'partner:application_received'],
    );
    const mails = await mailsTo(sql, svc.prefix, email);
    t.same(
      mails.map((m) => m.template).sort(),
      ['magic_link', 'notification'],
      'a sign-in link and the confirmation',
    );
    t.equal(
      (await mailsTo(sql, svc.prefix, owner.email)).filter((m) => m.template === 'notification').length >= 1,
      true,
      'the owner is mailed',
    );
    const events = await webhookEvents('partner.applied', p.id);
    t.equal(events.length, 1);
    t.match(events[0]!.payload.data, { program_id: p.id, email, status: 'pending', source: 'application' });
    // The sign-in link claims the application's record.
    const v = await postJson(url('/api/partner/auth/magic-link/verify'), {
      token: await magicTokenOf(sql, svc.prefix, email),
    });
    const programs = await getJson(
      url('/api/partner/programs'),
      bearer((v.body.data as { session_token: string }).session_token),
    );
    t.match(programs.body.data, [{ program: { id: p.id }, status: 'pending' }]);
  },
);

t.test(
  'apply with a password: an unverified account that sees nothing until the mailed link; auto-approve: one link',
  async (t) => {
    const p = await apiProgram(svc, owner, { public_page: true, auto_approve: true });
    const email = uniqEmail('auto');
    const r = await apply(p.slug, { name: 'Bo', email, password: 'bo password 123' }, freshIp());
    t.same([r.status, r.body], [201, { data: { status: 'approved' } }]);
    const login = await postJson(url('/api/partner/auth/login'), { email, password: 'bo password 123' });
    t.equal(login.status, 200, 'the password signs in');
    const unverified = (login.body.data as { session_token: string }).session_token;
    const me = await getJson(url('/api/partner/me'), bearer(unverified));
    t.match(me.body.data, { account: { email_verified: false, mailbox_verified: false }, partners: [] });
    const hidden = await getJson(url('/api/partner/programs'), bearer(unverified));
    t.equal(hidden.status, 403, 'and sees nothing until the address is proven');
    t.match(hidden.body, { error: /^Email address not verified/ });
    const links0 = await mailsTo(sql, svc.prefix, email);
    const claimLink = links0.filter((m) => m.template === 'magic_link');
    t.equal(claimLink.length, 1, 'a link that confirms the application');
    t.match(claimLink[0]!.data, { program_name: String });
    const v = await postJson(url('/api/partner/auth/magic-link/verify'), {
      token: await magicTokenOf(sql, svc.prefix, email),
    });
    t.equal(v.status, 200);
    const session = (v.body.data as { session_token: string }).session_token;
    const old = await getJson(url('/api/partner/me'), bearer(unverified));
    t.equal(old.status, 401, "the form's session ended: the mailbox owner's account now");
    const programs = await getJson(url('/api/partner/programs'), bearer(session));
    t.match(programs.body.data, [{ program: { id: p.id }, status: 'approved' }]);
    const links = await getJson(url(`/api/partner/programs/${p.id}/links`), bearer(session));
    t.equal((links.body.data as unknown[]).length, 1, 'one link');
    t.equal((await webhookEvents('partner.approved', p.id)).length, 1, 'partner.approved too');
    const relogin = await postJson(url('/api/partner/auth/login'), { email, password: 'bo password 123' });
    t.equal(relogin.status, 401, 'the password typed into the form was cleared by the proof');
    // Applying to another program of the workspace while signed in: the same record, already claimed.
    const p2 = await apiProgram(svc, owner, { public_page: true });
    const r2 = await apply(p2.slug, { name: 'Bo', email }, { ...freshIp(), ...bearer(session) });
    t.equal(r2.status, 201);
    t.equal((await mailsTo(sql, svc.prefix, email)).filter((m) => m.template === 'magic_link').length, 1);
    const after = await getJson(url('/api/partner/programs'), bearer(session));
    t.equal((after.body.data as unknown[]).length, 2);
    // Another workspace, signed in with the mailbox-verified account: its new record is claimed at once.
    const other = await signup(svc);
    const p4 = await apiProgram(svc, other, { public_page: true });
    const r4 = await apply(p4.slug, { name: 'Bo', email }, { ...freshIp(), ...bearer(session) });
    t.equal(r4.status, 201);
    t.equal((await mailsTo(sql, svc.prefix, email)).filter((m) => m.template === 'magic_link').length, 1);
    t.equal(
      ((await getJson(url('/api/partner/programs'), bearer(session))).body.data as unknown[]).length,
      3,
    );
    // An existing account's email with a password, not signed in: no second account, no password change,
    // nothing claimed; a sign-in link that would claim the new record instead.
    const p3 = await apiProgram(svc, await signup(svc), { public_page: true });
    const r3 = await apply(p3.slug, { name: 'Bo', email, password: 'not bos password' }, freshIp());
    t.equal(r3.status, 201);
    t.equal((await mailsTo(sql, svc.prefix, email)).filter((m) => m.template === 'magic_link').length, 2);
    const still = await postJson(url('/api/partner/auth/login'), { email, password: 'not bos password' });
    t.equal(still.status, 401, "the password typed into the form is not the account's");
    const seen = await getJson(url('/api/partner/programs'), bearer(session));
    t.equal((seen.body.data as unknown[]).length, 3, 'not claimed by the application alone');
  },
);

t.test('apply: bad input is 400 with its message; concurrent applications make one record', async (t) => {
  const p = await apiProgram(svc, owner, { public_page: true });
  const cases: [unknown, string][] = [
    [{ email: uniqEmail() }, 'name is required and must be 1 to 200 characters'],
    [{ name: '  ', email: uniqEmail() }, 'name is required and must be 1 to 200 characters'],
    [{ name: 'A' }, 'email must be a valid email address'],
    [{ name: 'A', email: 'x@' }, 'email must be a valid email address'],
    [{ name: 'A', email: uniqEmail(), password: 'short' }, 'password must be at least 10 characters'],
    [
      { name: 'A', email: uniqEmail(), website: 'ftp://x.example' },
      'website must be an http(s) URL of at most 500 characters',
    ],
    [
      { name: 'A', email: uniqEmail(), website: 'not a url' },
      'website must be an http(s) URL of at most 500 characters',
    ],
    [
      { name: 'A', email: uniqEmail(), message: 'x'.repeat(2001) },
      'message must be a string of at most 2000 characters',
    ],
    ['[1]', 'Request body must be a JSON object'],
    ['{bad', 'Invalid JSON body'],
  ];
  for (const [body, error] of cases) {
    const r = await apply(p.slug, body, freshIp());
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body).slice(0, 50));
  }
  const email = uniqEmail('race');
  const answers = await Promise.all(
    Array.from({ length: 6 }, () => apply(p.slug, { name: 'Racer', email }, freshIp())),
  );
  t.same(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 201]);
  const [n] = await sql<
    { n: number }[]
  >`select count(*)::int as n from partners where lower(email) = ${email}`;
  t.equal(n!.n, 1);
});

t.test('apply is rate-limited per IP: 429 with Retry-After', async (t) => {
  const p = await apiProgram(svc, owner, { public_page: true });
  const ip = { 'x-forwarded-for': '198.51.100.77' };
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push(await apply(p.slug, { name: 'R', email: uniqEmail() }, ip));
  t.same(
    statuses.map((s) => s.status),
    [201, 201, 201, 201, 429],
  );
  t.same(statuses[4]!.body, { error: 'Too many attempts' });
  t.match(statuses[4]!.headers.get('retry-after'), /^[1-9][0-9]*$/);
  const other = await apply(
    p.slug,
    { name: 'R', email: uniqEmail() },
    { 'x-forwarded-for': '198.51.100.78' },
  );
  t.equal(other.status, 201, 'another address is not limited');
});

t.test(
  'approve, reject, re-invite: scope partners:write, notices, events, and the link answering',
  async (t) => {
    const p = await apiProgram(svc, owner);
    const added = await addPartner(svc, owner, p.id, { status: 'pending' });
    const base = `${P}/${p.id}/partners/${added.partnerId}`;
    // Not approved: no link yet; give it one to click.
    const link = await send(
      'POST',
      url(`${base}/links`),
      { short_link: `rev-${added.partnerId}` },
      bearer(owner.session),
    );
    t.equal(link.status, 201);
    const click = () =>
      postJson(url('/api/v1/track/click'), {
        affiliate_url: `https://shop.example/?aff=rev-${added.partnerId}`,
      });
    t.same((await click()).body, { success: false, error: 'Referral link is inactive' }, 'pending: inactive');

    const member = await memberOf(svc, sql, owner.workspaceId, 'member');
    const denied = await send('POST', url(`${base}/approve`), undefined, bearer(member.session));
    t.same(
      [denied.status, denied.body],
      [403, { error: 'Your role (member) lacks permission partners:write' }],
    );
    const key = generateSecret('affk_');
    await sql`insert into api_keys (workspace_id, created_by, name, prefix, key_hash, key_masked, scopes)
            values (${owner.workspaceId}, ${owner.userId}, 'k', 'affk_', ${hashSecret(key)}, ${maskSecret(key)},
                    ${SCOPES.filter((s) => s !== '*' && s !== 'partners:write')}::text[])`;
    const noScope = await send('POST', url(`${base}/approve`), undefined, bearer(key));
    t.same([noScope.status, noScope.body], [403, { error: 'API key lacks scope partners:write' }]);

    const ok = await send('POST', url(`${base}/approve`), undefined, bearer(owner.session));
    t.equal(ok.status, 200);
    t.match(ok.body.data, { id: added.partnerId, status: 'approved', rejection_reason: null });
    await waitFor('the link to count clicks', async () => (await click()).body.success === true, 30_000);
    const again = await send('POST', url(`${base}/approve`), undefined, bearer(owner.session));
    t.equal(again.status, 200, 'approving twice is fine');
    t.equal((await webhookEvents('partner.approved', p.id)).length, 1, 'one partner.approved');

    const rej = await send('POST', url(`${base}/reject`), { reason: '  Not a fit  ' }, bearer(owner.session));
    t.match(rej.body.data, { status: 'rejected', rejection_reason: 'Not a fit' });
    await waitFor('the link to answer inactive', async () => (await click()).body.success === false, 30_000);
    t.same((await click()).body, { success: false, error: 'Referral link is inactive' });
    const badReason = await send(
      'POST',
      url(`${base}/reject`),
      { reason: 'x'.repeat(501) },
      bearer(owner.session),
    );
    t.same(
      [badReason.status, badReason.body],
      [400, { error: 'reason must be a string of at most 500 characters' }],
    );

    await deliverNotifications(sql, svc.prefix, svc.baseUrl);
    const notes = await sql<{ kind: string; body: string }[]>`
    select kind, body from notifications where partner_id = ${added.partnerId} and recipient_type = 'partner' order by id`;
    t.same(
      notes.map((n) => n.kind),
      ['partner_approved', 'partner_rejected'],
    );
    t.match(notes[1]!.body, /Reason: Not a fit$/);
    t.equal(
      (await mailsTo(sql, svc.prefix, added.email)).filter((m) => m.template === 'notification').length,
      2,
      'both mailed',
    );

    // Approving a partner with no link creates one.
    const bare = await addPartner(svc, owner, p.id, { status: 'pending' });
    const approved = await send(
      'POST',
      url(`${P}/${p.id}/partners/${bare.partnerId}/approve`),
      undefined,
      bearer(owner.session),
    );
    t.equal(approved.status, 200);
    const links = await getJson(url(`${P}/${p.id}/partners/${bare.partnerId}/links`), bearer(owner.session));
    t.equal((links.body.data as unknown[]).length, 1, 'a link if none');

    const notIn = { error: 'Partner not found in this program' };
    // An unknown id, and ids that are no number (schemathesis sent `null,null`: once a 500): 404 alike.
    for (const partnerId of ['999999999', 'null%2Cnull', 'abc', '1.5', '99999999999999999999']) {
      for (const action of ['approve', 'reject', 'invite']) {
        const r = await send(
          'POST',
          url(`${P}/${p.id}/partners/${partnerId}/${action}`),
          {},
          bearer(owner.session),
        );
        t.same([r.status, r.body], [404, notIn], `${action} ${partnerId}`);
      }
    }
    const other = await signup(svc);
    const foreign = await send('POST', url(`${base}/approve`), undefined, bearer(other.session));
    t.same([foreign.status, foreign.body], [404, { error: 'Program not found' }], 'another workspace');
  },
);

t.test('partner.created and the invite on adding a partner', async (t) => {
  const p = await apiProgram(svc, owner);
  const added = await addPartner(svc, owner, p.id);
  const events = await webhookEvents('partner.created', p.id);
  t.equal(events.length, 1);
  t.match(events[0]!.payload.data, {
    id: added.partnerId,
    email: added.email,
    status: 'approved',
    source: 'advertiser',
  });
  t.match(events[0]!.payload.data.updated_at, /^\d{4}-/);
});
