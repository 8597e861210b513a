// The partner API with real traffic through the pipeline (CONTRACT part two "The partner API"): two
// partners of one program click, lead and sell; each partner's performance, events and commissions count
// only its own (performance equal to plain SQL over the raw events), no customer key or email reaches a
// partner, links follow the program's and the review's rules, and a refund of a paid commission notifies the
// partner and warns the advertiser, with read state on both sides.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, invitedPartner } from '../helpers/partners.ts';
import type { Partner } from '../helpers/partners.ts';

const sql = testSql(t);
const svc = await startServices(t, [
  'web',
  'click-worker',
  'attribution-worker',
  'reversal-worker',
  'ledger-worker',
  'notification-worker',
  'outbox-relay',
]);
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const program = await apiProgram(svc, owner, { commission: { type: 'percentage', percent: 10 } });
const A = await invitedPartner(svc, owner, program.id);
const B = await invitedPartner(svc, owner, program.id);
const P = `/api/advertiser/affiliate-programs/${program.id}`;

async function linkOf(p: Partner): Promise<{ id: number; short_link: string }> {
  const r = await send('POST', url(`${P}/partners/${p.partnerId}/links`), {}, bearer(owner.session));
  return r.body.data as { id: number; short_link: string };
}
const linkA = await linkOf(A);
const linkB = await linkOf(B);

const tracked = bearer(program.token);
// Visitors click from an address of their own: a click from the partner's sign-in address (127.0.0.1 here)
// would hold the commission for review (partner_ip, docs/payouts.md).
const visitor = { 'x-forwarded-for': '198.51.100.7' };
async function journey(link: { short_link: string }, opts: { lead?: boolean; saleCents?: number }) {
  const c = await postJson(
    url('/api/v1/track/click'),
    {
      affiliate_url: `https://shop.example/?aff=${link.short_link}`,
      page_url: 'https://shop.example/pricing',
    },
    visitor,
  );
  if (c.status !== 200) throw new Error(`click ${c.status} ${JSON.stringify(c.body)}`);
  const clickId = c.body.click_id as string;
  const key = `cust-${randomBytes(4).toString('hex')}`;
  if (opts.lead || opts.saleCents) {
    const l = await postJson(
      url('/api/v1/track/lead'),
      { click_id: clickId, customer_key: key, email: `${key}@customer.example` },
      tracked,
    );
    if (l.status !== 200) throw new Error(`lead ${l.status} ${JSON.stringify(l.body)}`);
  }
  let txn: string | null = null;
  if (opts.saleCents) {
    txn = `txn-${randomBytes(5).toString('hex')}`;
    const s = await postJson(
      url('/api/v1/track/sale'),
      { transaction_id: txn, amount_cents: opts.saleCents, customer_key: key },
      tracked,
    );
    if (s.status !== 200) throw new Error(`sale ${s.status} ${JSON.stringify(s.body)}`);
  }
  return { clickId, key, txn };
}

const a1 = await journey(linkA, { saleCents: 10_000 });
const a2 = await journey(linkA, { lead: true });
await journey(linkA, {});
const b1 = await journey(linkB, { saleCents: 4_000 });
await journey(linkB, {});
await waitFor(
  'clicks stored',
  async () => {
    const [r] = await sql<{ n: number }[]>`
      select count(*)::int as n from click_events where program_id = ${program.id} and not is_test`;
    return r!.n === 5;
  },
  60_000,
);

t.test("performance counts only the partner's own, equal to plain SQL; partners is 0", async (t) => {
  const r = await getJson(
    url(`/api/partner/programs/${program.id}/performance?period=7d`),
    bearer(A.session),
  );
  t.equal(r.status, 200);
  const m = r.body.metrics as Record<string, unknown>;
  const [raw] = await sql<
    { clicks: number; leads: number; conversions: number; revenue: string; commission: string }[]
  >`
    select
      (select count(*)::int from click_events where program_id = ${program.id} and partner_id = ${A.partnerId} and not is_test) as clicks,
      (select count(*)::int from customers where program_id = ${program.id} and partner_id = ${A.partnerId} and signup_date is not null) as leads,
      (select count(*)::int from customers where program_id = ${program.id} and partner_id = ${A.partnerId} and customer_status = 'conversion') as conversions,
      (select coalesce(sum(s.amount_cents), 0)::text from sales s join customers c on c.id = s.customer_id
        where s.program_id = ${program.id} and c.partner_id = ${A.partnerId} and not s.is_test) as revenue,
      (select coalesce(sum(amount_cents), 0)::text from commissions where program_id = ${program.id} and partner_id = ${A.partnerId}) as commission`;
  t.match(m, {
    totalClicks: raw!.clicks,
    totalLeads: raw!.leads,
    totalConversions: raw!.conversions,
    totalRevenue: Number(raw!.revenue) / 100,
    totalPartnersCommission: Number(raw!.commission) / 100,
    totalPartners: 0,
    partnersTrend: { trend: 0, trendDirection: 'stable' },
  });
  t.same(
    [raw!.clicks, raw!.leads, raw!.conversions, raw!.revenue, raw!.commission],
    [3, 2, 1, '10000', '1000'],
  );
  t.ok((r.body.data as { partners: number }[]).every((d) => d.partners === 0));
  t.equal((r.body.data as unknown[]).length, 7);
  const byLink = await getJson(
    url(`/api/partner/programs/${program.id}/performance?linkId=${linkA.id}`),
    bearer(A.session),
  );
  t.equal((byLink.body.metrics as { totalClicks: number }).totalClicks, 3, 'its own link');
  const foreignLink = await getJson(
    url(`/api/partner/programs/${program.id}/performance?linkId=${linkB.id}`),
    bearer(A.session),
  );
  t.same(
    [foreignLink.status, foreignLink.body],
    [404, { error: 'Link not found' }],
    "another partner's link",
  );
  const b = await getJson(url(`/api/partner/programs/${program.id}/performance`), bearer(B.session));
  t.equal((b.body.metrics as { totalClicks: number }).totalClicks, 2, 'B sees its 2 clicks');
  const bad = await getJson(
    url(`/api/partner/programs/${program.id}/performance?period=1y`),
    bearer(A.session),
  );
  t.same([bad.status, bad.body], [400, { error: 'period must be one of 7d, 30d, 90d, all' }]);
});

t.test("events: only the partner's, never a customer key or email", async (t) => {
  await waitFor('the sale rows', async () => {
    const [r] = await sql<
      { n: number }[]
    >`select count(*)::int as n from sales where program_id = ${program.id}`;
    return r!.n === 2;
  });
  const r = await getJson(url(`/api/partner/programs/${program.id}/events?pageSize=100`), bearer(A.session));
  t.equal(r.status, 200);
  const events = r.body.data as Record<string, unknown>[];
  t.same(
    events.map((e) => e.event_type).sort(),
    ['click', 'click', 'click', 'conversion', 'lead', 'lead'],
    'three clicks, two leads, one sale',
  );
  t.same(r.body.meta, { pagination: { page: 1, pageSize: 100, pageCount: 1, total: 6 } });
  t.ok(
    events.every((e) => !('customer_key' in e) && !('email' in e)),
    'no customer_key or email field',
  );
  for (const secret of [a1.key, a2.key, 'customer.example', b1.clickId]) {
    t.notOk(r.text.includes(secret), `the answer does not contain ${secret}`);
  }
  const page2 = await getJson(
    url(`/api/partner/programs/${program.id}/events?pageSize=4&page=2`),
    bearer(A.session),
  );
  t.equal((page2.body.data as unknown[]).length, 2, 'paged');
  const leads = await getJson(
    url(`/api/partner/programs/${program.id}/events?eventType=lead`),
    bearer(A.session),
  );
  t.equal((leads.body.data as unknown[]).length, 2);
  const bad = await getJson(url(`/api/partner/programs/${program.id}/events?pageSize=0`), bearer(A.session));
  t.same([bad.status, bad.body], [400, { error: 'pageSize must be an integer between 1 and 100' }]);
});

t.test('commissions: own only, with the sale amount; filters; payouts empty', async (t) => {
  await waitFor('commissions', async () => {
    const [r] = await sql<
      { n: number }[]
    >`select count(*)::int as n from commissions where program_id = ${program.id}`;
    return r!.n === 2;
  });
  const r = await getJson(url('/api/partner/commissions'), bearer(A.session));
  t.equal(r.status, 200);
  t.match(r.body.data, [
    {
      program_id: program.id,
      status: 'pending',
      amount_cents: 1000,
      deducted_cents: 0,
      currency: 'USD',
      sale_amount_cents: 10_000,
      // The sale's time plus the program's hold (30 days by default): when it becomes payable.
      payable_at: /^\d{4}-\d\d-\d\dT/,
      payout_id: null,
    },
  ]);
  t.equal((r.body.data as unknown[]).length, 1);
  t.same(r.body.meta, { pagination: { page: 1, pageSize: 20, pageCount: 1, total: 1 } });
  t.equal(
    (
      (
        await getJson(
          url(`/api/partner/commissions?program_id=${program.id}&status=pending`),
          bearer(A.session),
        )
      ).body.data as unknown[]
    ).length,
    1,
  );
  t.equal(
    ((await getJson(url('/api/partner/commissions?status=paid'), bearer(A.session))).body.data as unknown[])
      .length,
    0,
  );
  const other = await apiProgram(svc, owner);
  const foreign = await getJson(url(`/api/partner/commissions?program_id=${other.id}`), bearer(A.session));
  t.same([foreign.status, foreign.body], [404, { error: 'Program not found' }]);
  for (const [q, error] of [
    ['status=review', 'status must be one of pending, approved, paid, reversed, refunded'],
    ['program_id=0', 'program_id must be a positive integer'],
    ['page=0', 'page must be an integer of at least 1'],
    ['pageSize=101', 'pageSize must be an integer between 1 and 100'],
  ] as const) {
    const bad = await getJson(url(`/api/partner/commissions?${q}`), bearer(A.session));
    t.same([bad.status, bad.body], [400, { error }], q);
  }
  const payouts = await getJson(url('/api/partner/payouts'), bearer(A.session));
  t.same(payouts.body, { data: [], meta: { pagination: { page: 1, pageSize: 20, pageCount: 0, total: 0 } } });
});

t.test('links: own links, the program setting, approval, 409 taken, the limit', async (t) => {
  const list = await getJson(url(`/api/partner/programs/${program.id}/links`), bearer(A.session));
  t.match(list.body.data, [{ id: linkA.id, short_link: linkA.short_link, clicks: 3 }]);
  const own = await send(
    'POST',
    url(`/api/partner/programs/${program.id}/links`),
    { short_link: `mine-${A.partnerId}` },
    bearer(A.session),
  );
  t.match(
    [own.status, own.body.data],
    [201, { short_link: `mine-${A.partnerId}`, status: 'active', clicks: 0 }],
  );
  const taken = await send(
    'POST',
    url(`/api/partner/programs/${program.id}/links`),
    { short_link: linkB.short_link },
    bearer(A.session),
  );
  t.same([taken.status, taken.body], [409, { error: 'short_link is already taken' }]);
  const bad = await send(
    'POST',
    url(`/api/partner/programs/${program.id}/links`),
    { short_link: 'a b' },
    bearer(A.session),
  );
  t.same(
    [bad.status, bad.body],
    [400, { error: 'short_link must be 1 to 64 characters: letters, digits, _ or -' }],
  );
  const generated = await send(
    'POST',
    url(`/api/partner/programs/${program.id}/links`),
    {},
    bearer(A.session),
  );
  t.match(generated.body.data, { short_link: /^[A-Za-z0-9_-]{8}$/ });

  const closed = await apiProgram(svc, owner, { partner_links: false });
  // A's record (same workspace, same email) joins the closed program: claimed already, so A sees it.
  await addPartner(svc, owner, closed.id, { email: A.email });
  const r = await send('POST', url(`/api/partner/programs/${closed.id}/links`), {}, bearer(A.session));
  t.same([r.status, r.body], [403, { error: 'This program does not let partners create links' }]);
  const open = await apiProgram(svc, owner);
  await addPartner(svc, owner, open.id, { email: A.email, status: 'pending' });
  const pending = await send('POST', url(`/api/partner/programs/${open.id}/links`), {}, bearer(A.session));
  t.same(
    [pending.status, pending.body],
    [403, { error: 'Only approved partners can create links in this program' }],
  );

  await sql`insert into referral_links (short_link, program_id, partner_id, partner_program_id)
            select 'cap-' || g || '-' || ${A.partnerId}, ${program.id}, ${A.partnerId}, ${A.ppId}
            from generate_series(1, 30) g`;
  const capped = await send('POST', url(`/api/partner/programs/${program.id}/links`), {}, bearer(A.session));
  t.same([capped.status, capped.body], [409, { error: 'A partner may have at most 25 links in a program' }]);
});

t.test('payout method: null, 400s, set, read', async (t) => {
  t.same((await getJson(url('/api/partner/payout-method'), bearer(B.session))).body, { data: null });
  const cases: [unknown, string][] = [
    [{}, "type must be 'paypal', 'wise' or 'bank_transfer'"],
    [{ type: 'cash' }, "type must be 'paypal', 'wise' or 'bank_transfer'"],
    [{ type: 'paypal' }, 'email must be a valid email address (required for paypal and wise)'],
    [{ type: 'wise', email: 'nope' }, 'email must be a valid email address (required for paypal and wise)'],
    [
      { type: 'bank_transfer' },
      'details must be a string of 1 to 2000 characters (required for bank_transfer)',
    ],
    [
      { type: 'bank_transfer', details: 'x'.repeat(2001) },
      'details must be a string of 1 to 2000 characters (required for bank_transfer)',
    ],
  ];
  for (const [body, error] of cases) {
    const r = await send('PUT', url('/api/partner/payout-method'), body, bearer(B.session));
    t.same([r.status, r.body], [400, { error }], JSON.stringify(body).slice(0, 40));
  }
  const ok = await send(
    'PUT',
    url('/api/partner/payout-method'),
    { type: 'bank_transfer', details: ' IBAN DE89 3704 0044 0532 0130 00 ' },
    bearer(B.session),
  );
  t.match(ok.body.data, { type: 'bank_transfer', email: null, details: 'IBAN DE89 3704 0044 0532 0130 00' });
  const read = await getJson(url('/api/partner/payout-method'), bearer(B.session));
  t.match(read.body.data, { type: 'bank_transfer', updated_at: /^\d{4}-/ });
  const [stored] = await sql<{ payout_method: { type: string } }[]>`
    select payout_method from partner_accounts where id = ${B.accountId}`;
  t.equal(stored!.payout_method.type, 'bank_transfer', 'on the account, where the payout exports read it');
});

t.test(
  'a refund of a paid commission: the partner is notified, the advertiser warned; read state',
  async (t) => {
    const [c] = await sql<{ id: string }[]>`
    select id from commissions where program_id = ${program.id} and partner_id = ${A.partnerId}`;
    const paid = await send(
      'POST',
      url(`/api/advertiser/commissions/${c!.id}/mark-paid`),
      undefined,
      bearer(owner.session),
    );
    t.equal(paid.status, 200);
    const refund = await postJson(
      url('/api/v1/track/refund'),
      { transaction_id: a1.txn, refund_reason: 'returned' },
      tracked,
    );
    t.equal(refund.status, 200);
    const mine = await waitFor(
      "the partner's notification",
      async () => {
        const r = await getJson(url('/api/partner/notifications'), bearer(A.session));
        const items = r.body.data as { kind: string }[];
        return items.some((n) => n.kind === 'commission_reversed') ? r : null;
      },
      60_000,
    );
    const items = mine.body.data as {
      id: number;
      kind: string;
      read_at: string | null;
      program_id: number;
    }[];
    const reversed = items.find((n) => n.kind === 'commission_reversed')!;
    t.equal(reversed.program_id, program.id);
    const unread = (mine.body.meta as { unread: number }).unread;
    t.ok(unread >= 1);
    const bNotes = await getJson(url('/api/partner/notifications'), bearer(B.session));
    t.notOk(
      (bNotes.body.data as { id: number }[]).some((n) => n.id === reversed.id),
      "not in B's list",
    );
    const stolen = await send(
      'POST',
      url(`/api/partner/notifications/${reversed.id}/read`),
      undefined,
      bearer(B.session),
    );
    t.same([stolen.status, stolen.body], [404, { error: 'Notification not found' }], "B cannot read A's");
    const read = await send(
      'POST',
      url(`/api/partner/notifications/${reversed.id}/read`),
      undefined,
      bearer(A.session),
    );
    t.match(read.body.data, { id: reversed.id, read_at: /^\d{4}-/ });
    const unreadOnly = await getJson(url('/api/partner/notifications?unread=true'), bearer(A.session));
    t.notOk((unreadOnly.body.data as { id: number }[]).some((n) => n.id === reversed.id));
    t.equal((unreadOnly.body.meta as { unread: number }).unread, unread - 1);
    const all = await send('POST', url('/api/partner/notifications/read-all'), undefined, bearer(A.session));
    t.equal((all.body.data as { updated: number }).updated, unread - 1);
    t.equal(
      ((await getJson(url('/api/partner/notifications'), bearer(A.session))).body.meta as { unread: number })
        .unread,
      0,
    );
    const badQ = await getJson(url('/api/partner/notifications?unread=yes'), bearer(A.session));
    t.same([badQ.status, badQ.body], [400, { error: "unread must be 'true' or 'false'" }]);

    const bell = await waitFor(
      "the advertiser's warning",
      async () => {
        const r = await getJson(url('/api/advertiser/notifications?unread=true'), bearer(owner.session));
        return (r.body.data as { kind: string }[]).some((n) => n.kind === 'paid_commission_refunded')
          ? r
          : null;
      },
      60_000,
    );
    const warning = (bell.body.data as { id: number; kind: string; workspace_id: number }[]).find(
      (n) => n.kind === 'paid_commission_refunded',
    )!;
    t.equal(warning.workspace_id, owner.workspaceId);
    const outsider = await signup(svc);
    const theirs = await getJson(url('/api/advertiser/notifications'), bearer(outsider.session));
    t.same(theirs.body.data, [], 'another workspace sees none of it');
    const foreignRead = await send(
      'POST',
      url(`/api/advertiser/notifications/${warning.id}/read`),
      undefined,
      bearer(outsider.session),
    );
    t.equal(foreignRead.status, 404);
    const mark = await send(
      'POST',
      url(`/api/advertiser/notifications/${warning.id}/read`),
      undefined,
      bearer(owner.session),
    );
    t.match(mark.body.data, { id: warning.id, read_at: /^\d{4}-/ });
    const ws = await getJson(
      url(`/api/advertiser/notifications?workspace_id=${owner.workspaceId}`),
      bearer(owner.session),
    );
    t.equal(ws.status, 200, 'one workspace');
    const notMine = await getJson(
      url(`/api/advertiser/notifications?workspace_id=${outsider.workspaceId}`),
      bearer(owner.session),
    );
    t.same([notMine.status, notMine.body], [404, { error: 'Workspace not found' }]);
    const readAll = await send(
      'POST',
      url('/api/advertiser/notifications/read-all'),
      undefined,
      bearer(owner.session),
    );
    t.equal(readAll.status, 200);
    t.equal(
      (
        (await getJson(url('/api/advertiser/notifications'), bearer(owner.session))).body.meta as {
          unread: number;
        }
      ).unread,
      0,
    );
  },
);
