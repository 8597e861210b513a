// The attribution decision, without Postgres: refusals, the cookie window (click_id matches in `click`
// status only), one-time and recurring-months policies, product rules, and zero commissions.
import t from 'tap';
import { NOT_FOUND, attribute } from '../../services/workers/attribution/attribute.ts';
import type { CustomerRow, Via } from '../../services/workers/attribution/attribute.ts';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 12);
const customer = (c: Partial<CustomerRow> = {}): CustomerRow => ({
  id: '7',
  program_id: '1',
  partner_id: '3',
  partner_program_id: '5',
  customer_status: 'click',
  last_click_at: new Date(NOW - DAY),
  first_purchase_date: null,
  first_commission_at: null,
  link_id: '9',
  attr_country: null,
  attr_device: null,
  attr_browser: null,
  attr_os: null,
  attr_referrer: null,
  attr_landing_page: null,
  ...c,
});
const sale = (s: Partial<{ amount_cents: number; product_id: string | null; ts: number }> = {}) => ({
  program_id: 1,
  amount_cents: 10_000,
  product_id: null,
  ts: NOW,
  ...s,
});
const program = (commission: unknown = { type: 'percentage', percent: 30 }, cookie_window_days = 30) => ({
  commission,
  cookie_window_days,
});
const pp = { partner_id: '3' };
const found = (row: CustomerRow, via: Via = 'click_id') => ({ row, via });

t.test('refusals', async (t) => {
  t.same(attribute(sale(), program(), null, pp), { refused: NOT_FOUND });
  t.same(attribute(sale(), program(), found(customer({ program_id: '2' })), pp), {
    refused: 'No affiliate attribution found for this customer in this program',
  });
  t.same(attribute(sale(), program(), found(customer({ partner_id: null })), pp), {
    refused: 'No affiliate attribution found for this customer in this program',
  });
  t.same(attribute(sale(), program(), found(customer()), undefined), {
    refused: 'No partner-program relationship found for this customer',
  });
  t.same(attribute(sale(), program(), found(customer()), { partner_id: null }), {
    refused: 'partnerId required to create commission',
  });
});

t.test('the cookie window binds only a click_id match in click status', async (t) => {
  const old = customer({ last_click_at: new Date(NOW - 31 * DAY) });
  const d = attribute(sale(), program(), found(old), pp);
  t.match(d, { amount: 0, noCommission: 'Attribution window expired' });
  t.match(
    attribute(sale(), program(), found(customer({ last_click_at: new Date(NOW - 30 * DAY) })), pp),
    {
      amount: 3000,
      noCommission: null,
    },
    'exactly the window: still attributed',
  );
  t.match(attribute(sale(), program(), found(old, 'customer_key'), pp), { amount: 3000, noCommission: null });
  t.match(attribute(sale(), program(), found({ ...old, customer_status: 'lead' }), pp), { amount: 3000 });
  t.match(
    attribute(sale(), program(), found(customer({ last_click_at: null })), pp),
    {
      noCommission: 'Attribution window expired',
    },
    'no click time: expired',
  );
});

t.test('one-time and recurring months', async (t) => {
  const earned = customer({ customer_status: 'conversion', first_commission_at: new Date(NOW - 40 * DAY) });
  const once = program({ type: 'percentage', percent: 30, recurring: { mode: 'one_time' } });
  t.match(attribute(sale(), once, found(earned), pp), {
    amount: 0,
    noCommission: 'One-time commission already earned for this customer',
  });
  t.match(attribute(sale(), once, found(customer()), pp), { amount: 3000, noCommission: null }, 'first sale');
  const month = program({ type: 'percentage', percent: 30, recurring: { mode: 'recurring', months: 1 } });
  t.match(attribute(sale(), month, found(earned), pp), {
    noCommission: 'Recurring commission period of 1 months has ended',
  });
  const twoMonths = program({ type: 'percentage', percent: 30, recurring: { mode: 'recurring', months: 2 } });
  t.match(attribute(sale(), twoMonths, found(earned), pp), { amount: 3000, noCommission: null });
});

t.test('product rules, flat amounts, the default policy and zero commissions', async (t) => {
  const rules = program({
    type: 'percentage',
    percent: 30,
    product_rules: [{ product_id: 'pro', type: 'flat', amount_cents: 500 }],
  });
  t.match(attribute(sale({ product_id: 'pro' }), rules, found(customer()), pp), { amount: 500 });
  t.match(attribute(sale({ product_id: 'other' }), rules, found(customer()), pp), { amount: 3000 });
  t.match(
    attribute(sale(), program('not a policy'), found(customer()), pp),
    { amount: 2000 },
    'default 20 %',
  );
  t.match(attribute(sale({ amount_cents: 1 }), program(), found(customer()), pp), {
    amount: 0,
    noCommission: 'The commission policy gives no commission for this sale',
  });
  t.match(attribute(sale(), program(), found(customer()), pp), { partnerId: '3', customer: { id: '7' } });
});
