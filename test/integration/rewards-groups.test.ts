// Groups (CONTRACT part four "Groups" and "What a partner earns"; docs/rewards.md) on the real stack: the
// default group is the program's policy both ways; a group's own policy, hold and product rules price its
// partners' sales; a partner's override wins over both; every commission carries group_id and the rule that
// priced it; a changed group policy leaves existing commissions as they were; placing (add, application
// `?group=`), moving and locking partners; deleting a group moves its partners to the default (announced)
// and keeps its commissions; bad input is a 400/404/409 naming the field, and changes nothing.
import t from 'tap';
import { startServices, testSql } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram, uniqEmail } from '../helpers/partners.ts';
import { commissionsOf, createGroup, customerOf, groupsOf, trackSale } from '../helpers/rewards.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'attribution-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const own = bearer(owner.session);
await sql`insert into webhook_endpoints (workspace_id, url, secret)
          values (${owner.workspaceId}, 'https://hooks.example/groups', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`;
const program = await apiProgram(svc, owner, {
  commission: { type: 'percentage', percent: 10 },
  hold_days: 30,
  public_page: true,
});
const other = await apiProgram(svc, owner);
const P = `/api/advertiser/affiliate-programs/${program.id}`;

/** The partner.group_changed events this file's web process recorded, oldest first. */
async function groupChanges() {
  const rows = await sql<{ payload: { type: string; data: Record<string, unknown> } }[]>`
    select payload from outbox where topic = ${outboxTopic(svc.prefix, 'webhookEvents')}
    and payload ->> 'type' = 'partner.group_changed' order by id`;
  return rows.map((r) => r.payload.data);
}

t.test('the default group is the program policy, both ways', async (t) => {
  const [only, ...rest] = await groupsOf(svc, owner, program.id);
  t.same(rest, [], 'a new program has one group');
  t.match(only, { name: 'Default', slug: 'default', is_default: true, partners: 0 });
  t.match(only!.commission, { type: 'percentage', percent: 10 });
  let r = await send('PUT', url(P), { commission: { type: 'percentage', percent: 12 } }, own);
  t.equal(r.status, 200);
  t.match((await groupsOf(svc, owner, program.id))[0]!.commission, { percent: 12 }, 'program → group');
  r = await send(
    'PUT',
    url(`${P}/groups/${only!.id}`),
    { commission: { type: 'percentage', percent: 10 } },
    own,
  );
  t.equal(r.status, 200, r.text);
  const read = await getJson(url(P), own);
  t.match((read.body.data as { commission: unknown }).commission, { percent: 10 }, 'group → program');
  r = await send('DELETE', url(`${P}/groups/${only!.id}`), undefined, own);
  t.same([r.status, r.body], [409, { error: 'The default group cannot be deleted' }]);
});

t.test('bad input names the field and changes nothing', async (t) => {
  const before = await groupsOf(svc, owner, program.id);
  const vip = await createGroup(svc, owner, program.id, { name: 'Taken', slug: 'taken' });
  const cases: [Record<string, unknown>, number, string][] = [
    [
      { name: 'A', commission: { type: 'percentage', percent: 101 } },
      400,
      'percent must be a number from 0 to 100 (at most 4 decimals)',
    ],
    [
      { name: 'A', commission: { type: 'flat', amount_cents: -5 } },
      400,
      'amount_cents must be a non-negative integer',
    ],
    [
      {
        name: 'A',
        commission: { type: 'flat', amount_cents: 5, product_rules: [{ product_id: 'x', type: 'bonus' }] },
      },
      400,
      "product_rules[0].type must be 'percentage' or 'flat'",
    ],
    [{ name: 'A', slug: 'No Caps' }, 400, 'slug must be 1 to 40 lowercase letters, digits or dashes'],
    [
      { name: 'A', hold_days: 400 },
      400,
      'hold_days must be an integer from 0 to 365, or null (the program’s)',
    ],
    [{ name: '' }, 400, 'name is required and must be 1 to 100 characters'],
    [{ name: 'A', slug: 'taken' }, 409, 'slug is already taken in this program'],
  ];
  for (const [body, status, error] of cases) {
    const r = await send('POST', url(`${P}/groups`), body, own);
    t.same([r.status, r.body], [status, { error }], JSON.stringify(body));
  }
  const r = await send('PUT', url(`${P}/groups/${vip.id}`), { commission: { type: 'percentage' } }, own);
  t.same([r.status, r.body.error], [400, 'percent must be a number from 0 to 100 (at most 4 decimals)']);
  t.same(
    (await groupsOf(svc, owner, program.id)).map((g) => [g.id, g.commission]),
    [...before, vip].map((g) => [g.id, g.commission]),
    'only the one good group was made; nothing else changed',
  );
  // Another program's group, and an unknown one, are not groups of this program.
  const otherGroup = await createGroup(svc, owner, other.id, { name: 'Theirs' });
  t.equal((await getJson(url(`${P}/groups/${otherGroup.id}`), own)).status, 404);
  t.equal((await send('PUT', url(`${P}/groups/${otherGroup.id}`), { name: 'x' }, own)).status, 404);
  t.equal((await send('DELETE', url(`${P}/groups/${otherGroup.id}`), undefined, own)).status, 404);
  const added = await send(
    'POST',
    url(`${P}/partners`),
    { name: 'N', email: uniqEmail(), group_id: otherGroup.id },
    own,
  );
  t.same([added.status, added.body], [400, { error: 'group_id must be the id of a group of this program' }]);
  const partner = await addPartner(svc, owner, program.id);
  for (const group_id of [otherGroup.id, 999_999_999]) {
    const moved = await send('PUT', url(`${P}/partners/${partner.partnerId}/group`), { group_id }, own);
    t.same(
      [moved.status, moved.body],
      [400, { error: 'group_id must be the id of a group of this program' }],
    );
  }
  const bad = await send(
    'PUT',
    url(`${P}/partners/${partner.partnerId}/commission`),
    { commission: { type: 'flat' } },
    own,
  );
  t.same([bad.status, bad.body], [400, { error: 'amount_cents must be a non-negative integer' }]);
  const listed = await getJson(url(`${P}/partners`), own);
  const row = (
    listed.body.data as { id: number; group: { slug: string }; commission_override: unknown }[]
  ).find((p) => p.id === partner.partnerId)!;
  t.match(row, { group: { slug: 'default' }, commission_override: null }, 'the partner did not move');
  t.equal(
    (listed.body.data as { name: string }[]).filter((p) => p.name === 'N').length,
    0,
    'no partner was added',
  );
});

t.test(
  'precedence: override > group > program; product rules inside; the rule on each commission',
  async (t) => {
    const vip = await createGroup(svc, owner, program.id, {
      name: 'VIP',
      commission: {
        type: 'percentage',
        percent: 40,
        product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 777 }],
      },
      hold_days: 0,
    });
    const inDefault = await addPartner(svc, owner, program.id);
    const inVip = await addPartner(svc, owner, program.id);
    const added = await send(
      'POST',
      url(`${P}/partners`),
      { name: 'V', email: uniqEmail(), group_id: vip.id },
      own,
    );
    t.equal(added.status, 201, added.text);
    const viaAdd = added.body.data as { partner: { id: number }; partner_program: { id: number } };
    let r = await send(
      'PUT',
      url(`${P}/partners/${inVip.partnerId}/group`),
      { group_id: vip.id, locked: true },
      own,
    );
    t.equal(r.status, 200, r.text);
    t.match(r.body.data, { group: { id: vip.id, name: 'VIP', slug: vip.slug }, group_locked: true });

    const sale = async (partner: { partnerId: number; ppId: number }, body: Record<string, unknown> = {}) => {
      const s = await trackSale(svc, program.token, {
        customer_key: await customerOf(sql, program.id, partner),
        ...body,
      });
      t.equal(s.status, 200, JSON.stringify(s.body));
      return s.body.commission_id as number;
    };
    const a = await sale(inDefault);
    const b = await sale(inVip);
    const c = await sale(
      { partnerId: viaAdd.partner.id, ppId: viaAdd.partner_program.id },
      { product_id: 'pro' },
    );
    r = await send(
      'PUT',
      url(`${P}/partners/${inVip.partnerId}/commission`),
      {
        commission: {
          type: 'flat',
          amount_cents: 2500,
          product_rules: [{ product_id: 'pro', type: 'percentage', percent: 1 }],
        },
      },
      own,
    );
    t.equal(r.status, 200, r.text);
    t.match(r.body.data, { commission_override: { type: 'flat', amount_cents: 2500 } });
    const d = await sale(inVip);
    const e = await sale(inVip, { product_id: 'pro' });
    const all = await commissionsOf(svc, owner, program.id);
    const dflt = (await groupsOf(svc, owner, program.id)).find((g) => g.is_default)!;
    t.match(all.get(a), {
      amount_cents: 1000,
      group_id: dflt.id,
      rule: { source: 'group', type: 'percentage', percent: 10, amount_cents: null },
    });
    t.match(all.get(b), {
      amount_cents: 4000,
      group_id: vip.id,
      rule: { source: 'group', type: 'percentage', percent: 40 },
    });
    t.match(all.get(c), {
      amount_cents: 777,
      group_id: vip.id,
      rule: { source: 'product', type: 'flat', amount_cents: 777 },
    });
    t.match(all.get(d), {
      amount_cents: 2500,
      group_id: vip.id,
      rule: { source: 'override', type: 'flat', amount_cents: 2500 },
    });
    t.match(all.get(e), { amount_cents: 100, rule: { source: 'product', type: 'percentage', percent: 1 } });
    // The group's hold (0 days) against the program's (30).
    const hold = (id: number) => Date.parse(all.get(id)!.payable_at!) - Date.parse(all.get(id)!.created_at);
    t.ok(hold(b) < 86_400_000, "the VIP group's hold_days 0");
    t.ok(hold(a) > 29 * 86_400_000, "the default group's: the program's 30");

    // A group policy edit changes no existing commission, only sales decided afterwards.
    r = await send(
      'PUT',
      url(`${P}/groups/${vip.id}`),
      { commission: { type: 'percentage', percent: 5 } },
      own,
    );
    t.equal(r.status, 200, r.text);
    r = await send('PUT', url(`${P}/partners/${inVip.partnerId}/commission`), { commission: null }, own);
    t.match(r.body.data, { commission_override: null });
    const f = await sale(inVip);
    const after = await commissionsOf(svc, owner, program.id);
    for (const id of [a, b, c, d, e]) t.same(after.get(id), all.get(id), `commission ${id} unchanged`);
    t.match(after.get(f), { amount_cents: 500, rule: { source: 'group', percent: 5 } });

    // Deleting the group: its partners move to the default group, announced; its commissions stay.
    const before = (await groupChanges()).length;
    r = await send('DELETE', url(`${P}/groups/${vip.id}`), undefined, own);
    t.equal(r.status, 204, r.text);
    const moves = (await groupChanges()).slice(before);
    t.same(
      moves.map((m) => [m.partner_id, m.from_group_id, m.to_group_id, m.reason]).sort(),
      [
        [inVip.partnerId, vip.id, dflt.id, 'group_deleted'],
        [viaAdd.partner.id, vip.id, dflt.id, 'group_deleted'],
      ].sort(),
    );
    const final = await commissionsOf(svc, owner, program.id);
    for (const id of [b, c, d, e, f])
      t.equal(final.get(id)!.group_id, vip.id, `commission ${id} keeps its group`);
    t.equal((await getJson(url(`${P}/groups/${vip.id}`), own)).status, 404, 'the group is gone');
    const g = await sale(inVip);
    t.match((await commissionsOf(svc, owner, program.id)).get(g), { group_id: dflt.id, amount_cents: 1000 });
  },
);

t.test('applications: ?group=<slug> places the applicant; an unknown slug is 400', async (t) => {
  const creators = await createGroup(svc, owner, program.id, { name: 'Creators', auto_approve: true });
  const email = uniqEmail('applicant');
  let r = await send('POST', url(`/api/public/programs/${program.slug}/apply?group=nope`), {
    name: 'A',
    email,
  });
  t.same([r.status, r.body], [400, { error: 'group must be the slug of a group of this program' }]);
  r = await send('POST', url(`/api/public/programs/${program.slug}/apply?group=${creators.slug}`), {
    name: 'A',
    email,
  });
  t.same([r.status, r.body], [201, { data: { status: 'approved' } }], "the group's auto_approve");
  const listed = await getJson(url(`${P}/partners`), own);
  t.match(
    (listed.body.data as { email: string }[]).find((p) => p.email === email),
    {
      group: { id: creators.id, slug: creators.slug },
      status: 'approved',
    },
  );
  const page = await getJson(url(`/api/public/programs/${program.slug}?group=${creators.slug}`));
  t.equal(page.status, 200);
});

t.test('other credentials reach none of it', async (t) => {
  const stranger = await signup(svc);
  const [dflt] = await groupsOf(svc, owner, program.id);
  t.equal(
    (await getJson(url(`${P}/groups`), bearer(stranger.session))).status,
    404,
    "another workspace's read",
  );
  for (const [method, path] of [
    ['POST', `${P}/groups`],
    ['PUT', `${P}/groups/${dflt!.id}`],
  ] as const) {
    const r = await send(method, url(path), { name: 'x' }, bearer(stranger.session));
    t.equal(r.status, 404, `${method} ${path}: another workspace's session`);
  }
});
