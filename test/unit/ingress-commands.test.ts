import t from 'tap';
import { errorOf } from '../helpers/errors.ts';
import { Type } from '@sinclair/typebox';
import { bodyCheck } from '../../shared/http/validation.ts';
import {
  AdditionalData,
  CommandAdditionalData,
  OptString,
  additionalData,
  commandAdditionalData,
  trimmed,
} from '../../services/ingress/input.ts';
import {
  answersRequest,
  requestFingerprint,
  requestIdFor,
  stillProcessing,
} from '../../services/ingress/commands/answer.ts';
import {
  buildLeadCommand,
  checkLeadIdentity,
  checkTestLeadProgram,
  LeadFirst,
  leadInput,
  leadKey,
} from '../../services/ingress/commands/lead.ts';
import {
  buildSaleCommand,
  parseSaleBody,
  saleKey,
  testSaleProgram,
  testTransactionId,
} from '../../services/ingress/commands/sale.ts';
import { RefundFirst, buildRefundCommand, refundFields } from '../../services/ingress/commands/refund.ts';

const CLICK = 'cust_7_250203861799666688';

// What the routes do with a body: the schema's check (the 400s), then what the checked body says.
const optString = (body: Record<string, unknown>, field: string, max?: number) =>
  trimmed(bodyCheck(Type.Object({ [field]: OptString(field, max) }))(body)[field] as string | undefined);
const checkAd = bodyCheck(Type.Object({ additional_data: AdditionalData }));
const parseAdditionalData = (body: Record<string, unknown>) => additionalData(checkAd(body).additional_data);
const checkCommandAd = bodyCheck(Type.Object({ additional_data: CommandAdditionalData }));
const parseCommandAdditionalData = (body: Record<string, unknown>) =>
  commandAdditionalData(checkCommandAd(body).additional_data);
const checkLead = bodyCheck(LeadFirst);
const parseLeadBody = (body: Record<string, unknown>) => leadInput(checkLead(body));
const checkRefund = bodyCheck(RefundFirst);
const parseRefundBody = (body: Record<string, unknown>) => refundFields(checkRefund(body));

t.test('optString trims, maps empty to null and names the field in its 400s', async (t) => {
  t.equal(optString({ a: '  x ' }, 'a'), 'x');
  t.equal(optString({ a: '   ' }, 'a'), null);
  t.equal(optString({}, 'a'), null);
  t.equal(optString({ a: null }, 'a'), null);
  t.equal(
    errorOf(() => optString({ a: 5 }, 'a')),
    '400 a must be a string',
  );
  t.equal(
    errorOf(() => optString({ a: 'x'.repeat(256) }, 'a')),
    '400 a must be at most 255 characters',
  );
  t.equal(optString({ a: 'x'.repeat(300) }, 'a', 300), 'x'.repeat(300));
});

t.test('additional_data: test_mode and program_id, with the exact 400s', async (t) => {
  t.same(parseAdditionalData({}), { testMode: false, programId: null });
  t.same(parseAdditionalData({ additional_data: null }), { testMode: false, programId: null });
  const ad = { test_mode: true, program_id: 4 };
  t.same(parseAdditionalData({ additional_data: ad }), { testMode: true, programId: 4 });
  t.same(parseAdditionalData({ additional_data: { program_id: null } }), {
    testMode: false,
    programId: null,
  });
  t.equal(
    errorOf(() => parseAdditionalData({ additional_data: [] })),
    '400 additional_data must be an object',
  );
  t.equal(
    errorOf(() => parseAdditionalData({ additional_data: 'x' })),
    '400 additional_data must be an object',
  );
  t.equal(
    errorOf(() => parseAdditionalData({ additional_data: { test_mode: 'yes' } })),
    '400 additional_data.test_mode must be a boolean',
  );
  t.equal(
    errorOf(() => parseAdditionalData({ additional_data: { test_mode: null } })),
    '400 additional_data.test_mode must be a boolean',
  );
  for (const bad of [0, -1, 1.5, '3', 2 ** 53]) {
    t.equal(
      errorOf(() => parseAdditionalData({ additional_data: { program_id: bad } })),
      '400 additional_data.program_id must be a positive integer',
      `program_id ${bad}`,
    );
  }
  t.equal(
    parseAdditionalData({ additional_data: { event_name: 5 } }).testMode,
    false,
    'click ignores event_name',
  );
  t.equal(
    errorOf(() => parseCommandAdditionalData({ additional_data: { event_name: 5 } })),
    '400 event_name must be a string',
  );
  t.equal(parseCommandAdditionalData({ additional_data: { event_name: ' signup ' } }).eventName, 'signup');
});

t.test('requestIdFor: a fresh id without Idempotency-Key, a scoped stable one with it', async (t) => {
  t.equal(
    requestIdFor(undefined, 'lead', 3, () => 'uuid'),
    'uuid',
  );
  t.equal(requestIdFor('k1', 'sale', 3), 'sale:3:k1');
  t.equal(requestIdFor('k1', 'lead', null), 'lead:anon:k1');
  for (const bad of ['', 'x'.repeat(201), ['a', 'b']]) {
    t.equal(
      errorOf(() => requestIdFor(bad, 'refund', 1)),
      '400 Idempotency-Key must be 1 to 200 characters',
    );
  }
  t.same(stillProcessing('sale'), {
    error: 'The sale was accepted and is still being processed; retry the same request to get its result',
  });
});

t.test('requestFingerprint: the same parameters in any key order, not other parameters', async (t) => {
  const a = requestFingerprint('sale', {
    transaction_id: 't',
    amount_cents: 1,
    line_items: { x: 1, y: [2, { b: 1, a: 2 }] },
  });
  const b = requestFingerprint('sale', {
    line_items: { y: [2, { a: 2, b: 1 }], x: 1 },
    amount_cents: 1,
    transaction_id: 't',
  });
  t.equal(a, b, 'key order is not a parameter');
  t.match(a, /^[0-9a-f]{64}$/);
  t.not(
    requestFingerprint('sale', { transaction_id: 't', amount_cents: 2 }),
    requestFingerprint('sale', { transaction_id: 't', amount_cents: 1 }),
  );
  t.not(
    requestFingerprint('sale', { transaction_id: 't', amount_cents: 1, coupon_code: 'A1B' }),
    requestFingerprint('sale', { transaction_id: 't', amount_cents: 1, coupon_code: 'C2D' }),
    'the coupon_code is a parameter',
  );
  t.not(
    requestFingerprint('sale', { amount_cents: 1 }),
    requestFingerprint('sale', { amount_cents: '1' }),
    'types count',
  );
  t.not(requestFingerprint('lead', {}), requestFingerprint('refund', {}), 'the kind counts');
  const outcome = { statusCode: 200, body: {}, requestHash: a };
  t.ok(answersRequest(outcome, b));
  t.notOk(answersRequest(outcome, requestFingerprint('sale', {})));
  t.ok(
    answersRequest({ ...outcome, requestHash: null }, b),
    'an outcome recorded without a hash cannot tell',
  );
});

t.test('lead: identity rules in their order', async (t) => {
  const lead = (body: Record<string, unknown>, tokenProgram: number | null) =>
    errorOf(() => checkLeadIdentity(parseLeadBody(body), tokenProgram));
  t.equal(lead({}, 1), '400 click_id or customer_key is required');
  t.equal(lead({ click_id: ' ' }, 1), '400 click_id or customer_key is required', 'blank is absent');
  t.equal(
    lead({ customer_key: 'c' }, null),
    '400 Customer not found. Provide a valid click_id or customer_key.',
  );
  t.equal(
    lead({ customer_key: 'c', additional_data: { program_id: 2 } }, null),
    null,
    'browser mode names its program',
  );
  t.equal(lead({ customer_key: 'c' }, 1), null, 'server mode');
  t.equal(lead({ click_id: 'nope' }, 1), '400 Customer not found. Provide a valid click_id or customer_key.');
  t.equal(lead({ click_id: CLICK }, null), null);
  t.equal(lead({ additional_data: { test_mode: true } }, null), null, 'test mode skips them');
  t.equal(
    errorOf(() => checkTestLeadProgram(parseLeadBody({ additional_data: { test_mode: true } }), null)),
    '400 additional_data.program_id is required for a test lead without a tracking token',
  );
  t.equal(
    errorOf(() => checkTestLeadProgram(parseLeadBody({}), null)),
    null,
  );
  t.equal(
    errorOf(() => parseLeadBody({ email: 'e'.repeat(321) })),
    '400 email must be at most 320 characters',
  );
});

t.test('lead: the command and its key', async (t) => {
  const body = {
    click_id: CLICK,
    email: 'a@b.c',
    session_id: 's',
    additional_data: { event_name: 'signup' },
  };
  const cmd = buildLeadCommand(parseLeadBody(body), body, {
    requestId: 'r',
    ts: 5,
    tokenProgram: null,
    programId: 9,
  });
  t.same(cmd, {
    v: 1,
    type: 'lead',
    request_id: 'r',
    ts: 5,
    token_program_id: null,
    program_id_hint: null,
    click_id: CLICK,
    customer_key: null,
    email: 'a@b.c',
    event_name: 'signup',
    session_id: 's',
    page_url: null,
    is_test: false,
  });
  t.equal(leadKey(cmd, 9), CLICK, 'ordered behind its click');
  const test = { customer_key: 'k', additional_data: { test_mode: true } };
  const testCmd = buildLeadCommand(parseLeadBody(test), test, {
    requestId: 'r',
    ts: 5,
    tokenProgram: 3,
    programId: 3,
  });
  t.equal(testCmd.program_id_hint, 3, 'a test lead carries its program');
  t.equal(leadKey(testCmd, 3), 'key:3:k');
  const bare = { additional_data: { test_mode: true } };
  t.equal(
    leadKey(
      buildLeadCommand(parseLeadBody(bare), bare, { requestId: 'r', ts: 5, tokenProgram: 3, programId: 3 }),
      3,
    ),
    'key:3:r',
  );
  t.equal(
    errorOf(() =>
      buildLeadCommand(
        parseLeadBody({}),
        { page_url: 'x'.repeat(2049) },
        { requestId: 'r', ts: 5, tokenProgram: 1, programId: 1 },
      ),
    ),
    '400 page_url must be at most 2048 characters',
  );
});

t.test('sale: the exact 400s, in order', async (t) => {
  const sale = (b: Record<string, unknown>, testMode = false) => errorOf(() => parseSaleBody(b, testMode));
  const ok = { transaction_id: 't1', amount_cents: 100, customer_key: 'c' };
  t.equal(sale(ok), null);
  t.equal(sale({ ...ok, transaction_id: undefined }), '400 transaction_id is required and must be a string');
  t.equal(sale({ ...ok, transaction_id: ' ' }), '400 transaction_id is required and must be a string');
  t.equal(
    sale({ ...ok, transaction_id: 'x'.repeat(256) }),
    '400 transaction_id is required and must be a string',
  );
  for (const bad of [0, -5, 1.5, '100', undefined]) {
    t.equal(
      sale({ ...ok, amount_cents: bad }),
      '400 amount_cents is required and must be a positive integer',
    );
  }
  t.match(sale({ ...ok, amount_cents: 2 ** 52 }), /^400 amount_cents must be at most \d+$/);
  t.equal(sale({ ...ok, currency: 'XXY' }), '400 currency must be an ISO 4217 code');
  t.equal(sale({ ...ok, currency: 5 }), '400 currency must be an ISO 4217 code');
  t.equal(sale({ ...ok, sale_type: 'x' }), "400 sale_type must be 'payment' or 'subscription'");
  t.equal(
    sale({ ...ok, subscription_interval: 'weekly' }),
    "400 subscription_interval must be 'monthly', 'quarterly' or 'annual'",
  );
  t.equal(sale({ ...ok, is_recurring: 'yes' }), '400 is_recurring must be a boolean');
  t.equal(sale({ ...ok, line_items: 'x' }), '400 line_items must be an object');
  t.equal(
    sale({ ...ok, customer_key: undefined }),
    '400 Customer not found. Provide customer_key or click_id.',
  );
  t.equal(sale({ transaction_id: undefined, amount_cents: 0 }, true), null, 'test mode fills both in');
  t.equal(
    errorOf(() => testSaleProgram(null, null)),
    '400 additional_data.program_id is required for a test sale without a tracking token',
  );
  t.equal(testSaleProgram(3, 4), 3, 'the token wins');
  t.equal(testSaleProgram(null, 4), 4);
});

t.test('sale: defaults, the command and its key', async (t) => {
  const b = {
    transaction_id: ' t1 ',
    amount_cents: 100,
    click_id: CLICK,
    currency: 'eur',
    product_id: 'pro',
  };
  const cmd = buildSaleCommand(parseSaleBody(b, false), b, { requestId: 'r', ts: 5, programId: 2 });
  t.same(cmd, {
    v: 1,
    type: 'sale',
    request_id: 'r',
    ts: 5,
    program_id: 2,
    transaction_id: 't1',
    amount_cents: 100,
    currency: 'EUR',
    customer_key: null,
    click_id: CLICK,
    sale_type: 'payment',
    line_items: null,
    is_recurring: false,
    subscription_id: null,
    subscription_interval: null,
    product_id: 'pro',
    is_test: false,
  });
  t.equal(saleKey(cmd), CLICK);
  t.equal(saleKey({ ...cmd, customer_key: 'c' }), 'c', 'keyed by customer first');
  // A partner code (docs/codes.md): trimmed; absent when empty; a non-string is a 400.
  const coded = { ...b, coupon_code: ' Summer10 ' };
  t.equal(
    buildSaleCommand(parseSaleBody(coded, false), coded, { requestId: 'r', ts: 5, programId: 2 }).coupon_code,
    'Summer10',
  );
  const blank = { ...b, coupon_code: '  ' };
  t.notOk(
    'coupon_code' in
      buildSaleCommand(parseSaleBody(blank, false), blank, { requestId: 'r', ts: 5, programId: 2 }),
  );
  const wrong = { ...b, coupon_code: 10 };
  t.throws(
    () => buildSaleCommand(parseSaleBody(wrong, false), wrong, { requestId: 'r', ts: 5, programId: 2 }),
    {
      statusCode: 400,
      message: 'coupon_code must be a string',
    },
  );
  t.equal(saleKey({ ...cmd, click_id: null }), 't1');
  const test = parseSaleBody({}, true, () => 'test_txn_1');
  t.equal(test.transaction_id, 'test_txn_1');
  t.equal(test.amount_cents, 0);
  t.equal(test.is_test, true);
  t.equal(testTransactionId(1000), 'test_txn_1000');
  t.equal(testTransactionId(1000), 'test_txn_1000_1', 'unique within one millisecond');
  t.equal(testTransactionId(1001), 'test_txn_1001');
});

t.test('test_txn_<timestamp>: two ingress processes minting in one millisecond do not collide', async (t) => {
  // Each ingress process has its own module state (a fresh import is a second process) and its own node
  // (the snowflake node it takes from a Postgres sequence at boot, what the sale route passes).
  const here = new URL('../../services/ingress/commands/sale.ts', import.meta.url).href;
  type SaleModule = { testTransactionId: typeof testTransactionId };
  const a = (await import(`${here}?process=a`)) as SaleModule;
  const b = (await import(`${here}?process=b`)) as SaleModule;
  const minted = [a.testTransactionId(5000, 1), b.testTransactionId(5000, 2)];
  minted.push(a.testTransactionId(5000, 1), b.testTransactionId(5000, 2));
  t.equal(new Set(minted).size, 4, `all distinct: ${minted.join(' ')}`);
  for (const id of minted) t.match(id, /^test_txn_5000(_|$)/, 'the spec form test_txn_<timestamp> leads');
});

t.test('refund: transaction_id and amount rules, 0 means full', async (t) => {
  t.same(parseRefundBody({ transaction_id: ' t ' }), { transactionId: 't', refundAmount: null });
  t.same(parseRefundBody({ transaction_id: 't', refund_amount_cents: 0 }), {
    transactionId: 't',
    refundAmount: null,
  });
  t.same(parseRefundBody({ transaction_id: 't', refund_amount_cents: 50 }), {
    transactionId: 't',
    refundAmount: 50,
  });
  t.equal(
    errorOf(() => parseRefundBody({})),
    '400 transaction_id is required',
  );
  for (const bad of [-1, 1.5, '5']) {
    t.equal(
      errorOf(() => parseRefundBody({ transaction_id: 't', refund_amount_cents: bad })),
      '400 refund_amount_cents must be a positive integer',
    );
  }
  const b = { transaction_id: 't', refund_reason: 'broken' };
  t.same(buildRefundCommand(parseRefundBody(b), b, { requestId: 'r', ts: 5, programId: 2 }), {
    v: 1,
    type: 'refund',
    request_id: 'r',
    ts: 5,
    program_id: 2,
    transaction_id: 't',
    refund_amount_cents: null,
    refund_reason: 'broken',
  });
});
