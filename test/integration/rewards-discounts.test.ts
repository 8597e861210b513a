// Discounts for the customers partners bring (CONTRACT part four "Discounts"; docs/rewards.md) on the real
// stack: a group's discount is checked (a percentage over 100, repeating without months, a flat amount of 0:
// 400 naming the field, nothing changed); the click on a link of a partner in that group answers it without
// the processor ids; GET /api/v1/track/discount answers what a known customer is owed (with the ids), null
// for an unknown one, for a partner without a discount, and for a `once` discount after a purchase; a move
// of the partner changes what its next click answers.
import t from 'tap';
import { createLink, postJson, startServices, testSql, waitFor } from '../helpers/stack.ts';
import { bearer, getJson, send, signup } from '../helpers/accounts.ts';
import { addPartner, apiProgram } from '../helpers/partners.ts';
import { createGroup, customerOf, groupsOf, trackSale } from '../helpers/rewards.ts';

const sql = testSql(t);
const svc = await startServices(t, ['web', 'attribution-worker']);
const url = (p: string) => `${svc.baseUrl}${p}`;
const owner = await signup(svc);
const own = bearer(owner.session);
const program = await apiProgram(svc, owner, { allowed_origins: ['https://shop.example'] });
const discount = {
  type: 'percentage',
  percent: 20,
  duration: 'repeating',
  months: 3,
  processor_ids: { stripe: 'promo_123', paddle: 'dsc_01' },
};
const creators = await createGroup(svc, owner, program.id, { name: 'Creators', discount });
const pub = { type: 'percentage', percent: 20, amount_cents: null, duration: 'repeating', months: 3 };

const click = (shortLink: string) =>
  postJson(url('/api/v1/track/click'), { affiliate_url: `https://shop.example/?aff=${shortLink}` });
const owed = (key: string, token = program.token) =>
  getJson(url(`/api/v1/track/discount?customer_key=${encodeURIComponent(key)}`), bearer(token));

t.test('a discount is checked: 400 naming the field, and nothing changes', async (t) => {
  const cases: [unknown, string][] = [
    [
      { ...discount, percent: 150 },
      'discount.percent must be more than 0 and at most 100 (at most 4 decimals)',
    ],
    [
      { ...discount, percent: 0 },
      'discount.percent must be more than 0 and at most 100 (at most 4 decimals)',
    ],
    [
      { type: 'flat', amount_cents: 0, duration: 'once' },
      'discount.amount_cents must be an integer from 1 to 1000000000000',
    ],
    [
      { type: 'flat', amount_cents: 500, duration: 'repeating' },
      'discount.months must be an integer from 1 to 120 (required for repeating)',
    ],
    [
      { type: 'flat', amount_cents: 500, duration: 'always' },
      "discount.duration must be 'once', 'repeating' or 'forever'",
    ],
    [
      { ...discount, processor_ids: { stripe: '' } },
      'discount.processor_ids.stripe must be a string of 1 to 200 characters',
    ],
    ['20%', 'discount must be an object or null'],
  ];
  for (const [d, error] of cases) {
    const r = await send(
      'PUT',
      url(`/api/advertiser/affiliate-programs/${program.id}/groups/${creators.id}`),
      { discount: d },
      own,
    );
    t.same([r.status, r.body], [400, { error }], JSON.stringify(d));
  }
  const [g] = (await groupsOf(svc, owner, program.id)).filter((x) => x.id === creators.id);
  t.same((g as unknown as { discount: unknown }).discount, { ...pub, processor_ids: discount.processor_ids });
});

t.test('the click answers the discount; the tracking token reads what a customer is owed', async (t) => {
  const inGroup = await addPartner(svc, owner, program.id);
  await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/partners/${inGroup.partnerId}/group`),
    { group_id: creators.id },
    own,
  );
  const plain = await addPartner(svc, owner, program.id);
  const l1 = await createLink(sql, program.id, { partnerId: inGroup.partnerId });
  const l2 = await createLink(sql, program.id, { partnerId: plain.partnerId });
  const a = await click(l1.shortLink);
  t.match(a.body, { success: true, discount: pub });
  t.notOk('processor_ids' in (a.body.discount as object), 'no processor ids in the browser');
  const b = await click(l2.shortLink);
  t.equal(b.body.success, true);
  t.notOk('discount' in b.body, 'none for a partner without one');

  const key = await customerOf(sql, program.id, inGroup);
  t.same((await owed(key)).body, { data: { ...pub, processor_ids: discount.processor_ids } });
  t.same((await owed('nobody')).body, { data: null });
  t.same((await owed(await customerOf(sql, program.id, plain))).body, { data: null });
  t.same((await getJson(url('/api/v1/track/discount'), bearer(program.token))).body, {
    error: 'customer_key is required (1 to 255 characters)',
  });
  t.equal((await getJson(url(`/api/v1/track/discount?customer_key=${key}`))).status, 401);
  const other = await apiProgram(svc, owner);
  t.same((await owed(key, other.token)).body, { data: null }, "another program's token sees nothing of it");

  // A `once` discount is owed until the customer's first purchase.
  const r = await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/groups/${creators.id}`),
    { discount: { type: 'flat', amount_cents: 500, duration: 'once' } },
    own,
  );
  t.equal(r.status, 200, r.text);
  t.match((await owed(key)).body, { data: { type: 'flat', amount_cents: 500, duration: 'once' } });
  await trackSale(svc, program.token, { customer_key: key });
  t.same((await owed(key)).body, { data: null }, 'used by the purchase');

  // The partner moved out of the group: its next click carries no discount (the link cache is evicted).
  const [dflt] = (await groupsOf(svc, owner, program.id)).filter((g) => g.is_default);
  await send(
    'PUT',
    url(`/api/advertiser/affiliate-programs/${program.id}/partners/${inGroup.partnerId}/group`),
    { group_id: dflt!.id },
    own,
  );
  await waitFor(
    'the link evicted',
    async () => !('discount' in (await click(l1.shortLink)).body),
    10_000,
    100,
  );
  t.pass('no discount after the move');
});
