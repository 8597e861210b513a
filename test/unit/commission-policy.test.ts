import t from 'tap';
import { commissionAmount, parsePolicy, recurrenceBlocks } from '../../shared/domain/commission-policy.ts';
import type { CommissionPolicy } from '../../shared/domain/commission-policy.ts';
import { mulDivRoundHalfUp } from '../../shared/domain/money.ts';
import { documentDecimals } from '../../shared/http/server.ts';

const policy = (p: unknown) => {
  const r = parsePolicy(p);
  if (typeof r === 'string') throw new Error(r);
  return r;
};

t.test('round half up, exactly, in integer cents', async (t) => {
  t.equal(mulDivRoundHalfUp(1, 1, 2), 1, '0.5 rounds up');
  t.equal(mulDivRoundHalfUp(1, 1, 3), 0, '0.333 rounds down');
  t.equal(mulDivRoundHalfUp(5, 1, 3), 2, '1.667 rounds up');
  t.equal(mulDivRoundHalfUp(0, 7, 9), 0);
  t.equal(mulDivRoundHalfUp(2 ** 50, 3, 2 ** 10), 2 ** 40 * 3, 'no floating-point loss on large values');
});

t.test('percentage commission: amount × percent / 100, round half up', async (t) => {
  const p = policy({ type: 'percentage', percent: 30 });
  t.equal(commissionAmount(p, 10_000, null), 3000);
  t.equal(commissionAmount(p, 1, null), 0, '0.3 cents → 0');
  t.equal(commissionAmount(p, 5, null), 2, '1.5 cents → 2 (half up)');
  t.equal(commissionAmount(policy({ type: 'percentage', percent: 12.5 }), 999, null), 125, '124.875 → 125');
  t.equal(
    commissionAmount(policy({ type: 'percentage', percent: 33.3333 }), 300, null),
    100,
    '99.99999 → 100',
  );
});

t.test('flat commission and product rules override', async (t) => {
  const p = policy({
    type: 'percentage',
    percent: 30,
    product_rules: [
      { product_id: 'pro', type: 'flat', amount_cents: 500 },
      { product_id: 'team', type: 'percentage', percent: 10 },
    ],
  });
  t.equal(commissionAmount(p, 10_000, 'pro'), 500);
  t.equal(commissionAmount(p, 10_000, 'team'), 1000);
  t.equal(commissionAmount(p, 10_000, 'other'), 3000);
  t.equal(commissionAmount(policy({ type: 'flat', amount_cents: 1234 }), 1, null), 1234);
});

t.test('recurrence: lifetime by default; one_time; months', async (t) => {
  const first = new Date('2026-01-31T10:00:00Z');
  const lifetime = policy({ type: 'percentage', percent: 10 });
  t.same(lifetime.recurring, { mode: 'recurring', months: null, first: null });
  t.equal(recurrenceBlocks(lifetime, first, new Date('2036-01-01T00:00:00Z')), null);
  t.equal(recurrenceBlocks(lifetime, null, new Date()), null, 'the first sale always earns');
  const once = policy({ type: 'percentage', percent: 10, recurring: { mode: 'one_time' } });
  t.match(recurrenceBlocks(once, first, new Date('2026-02-01T00:00:00Z')), /One-time/);
  t.equal(recurrenceBlocks(once, null, new Date()), null);
  const year: CommissionPolicy = policy({
    type: 'percentage',
    percent: 10,
    recurring: { mode: 'recurring', months: 12 },
  });
  t.equal(recurrenceBlocks(year, first, new Date('2027-01-30T10:00:00Z')), null, 'inside 12 months');
  t.match(recurrenceBlocks(year, first, new Date('2027-02-01T10:00:00Z')), /12 months has ended/);
});

t.test('invalid policies are named', async (t) => {
  t.equal(parsePolicy(null), 'commission must be an object');
  t.match(parsePolicy({ type: 'percentage', percent: 101 }), /percent must be/);
  t.match(parsePolicy({ type: 'percentage', percent: 1.00001 }), /at most 4 decimals/);
  t.match(parsePolicy({ type: 'flat', amount_cents: -1 }), /amount_cents/);
  t.equal(
    parsePolicy({ type: 'flat', amount_cents: 1_000_000_000_001 }),
    'amount_cents must be at most 1000000000000',
  );
  t.equal(
    parsePolicy({
      type: 'percentage',
      percent: 10,
      product_rules: [{ product_id: 'p', type: 'flat', amount_cents: 2e12 }],
    }),
    'product_rules[0].amount_cents must be at most 1000000000000',
  );
  t.equal(
    (parsePolicy({ type: 'flat', amount_cents: 1_000_000_000_000 }) as { amount_cents: number }).amount_cents,
    1e12,
  );
  t.match(parsePolicy({ type: 'bonus' }), /type must be/);
  t.match(parsePolicy({ type: 'flat', amount_cents: 1, recurring: { mode: 'forever' } }), /recurring.mode/);
  t.match(parsePolicy({ type: 'flat', amount_cents: 1, recurring: { months: 0 } }), /months/);
  t.match(
    parsePolicy({ type: 'flat', amount_cents: 1, product_rules: [{ type: 'flat', amount_cents: 1 }] }),
    /product_id/,
  );
});

t.test(
  'one shape: what parsePolicy returns is the answer schema, and the routes carry the schemas',
  async (t) => {
    const { Value } = await import('@sinclair/typebox/value');
    const { PolicyIn, PolicyOut } = await import('../../shared/domain/policy-schema.ts');
    const { buildOpenApiDocument } = await import('../../scripts/lib/openapi.ts');
    for (const input of [
      { type: 'percentage', percent: 12.5 },
      { type: 'flat', amount_cents: 500, percent: 7, recurring: null, product_rules: null },
      {
        type: 'flat',
        amount_cents: 1,
        recurring: { mode: 'one_time' },
        product_rules: [{ product_id: 'pro', type: 'percentage', percent: 40 }],
      },
    ]) {
      const p = policy(input);
      t.ok(Value.Check(PolicyOut, p), `${JSON.stringify(input)} → a PolicyOut`);
      t.same(policy(p), p, 'a normalised policy parses to itself');
    }
    const doc = (await buildOpenApiDocument()) as {
      paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>>;
    };
    // As @fastify/swagger writes it: `const` becomes a one-value `enum`.
    const json = (v: unknown) =>
      JSON.parse(JSON.stringify(v), (_k, x: unknown) =>
        x !== null && typeof x === 'object' && 'const' in x
          ? Object.fromEntries(Object.entries(x).map(([k, y]) => (k === 'const' ? ['enum', [y]] : [k, y])))
          : x,
      ) as unknown;
    const asServed = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;
    const op = doc.paths['/api/advertiser/affiliate-programs/{id}']!;
    type Obj = { properties: Record<string, unknown>; anyOf?: Obj[] };
    const bodyOf = (o: { requestBody?: unknown }) => {
      const schema = (o.requestBody as { content: { 'application/json': { schema: Obj } } }).content[
        'application/json'
      ].schema;
      return (schema.anyOf?.[0] ?? schema).properties;
    };
    const answerOf = (o: { responses: Record<string, unknown> }) =>
      (
        o.responses['200'] as {
          content: {
            'application/json': { schema: { properties: { data: { properties: Record<string, unknown> } } } };
          };
        }
      ).content['application/json'].schema.properties.data.properties;
    t.same(
      asServed(bodyOf(op.put!).commission),
      documentDecimals(json(PolicyIn)),
      'the update body is the request schema (its x-decimals also as multipleOf)',
    );
    t.same(asServed(answerOf(op.get!).commission), json(PolicyOut), 'the answer is the response schema');
  },
);

t.test('nested messages name where they are', async (t) => {
  t.equal(
    parsePolicy({ type: 'flat', amount_cents: 1, recurring: { mode: 'x' } }),
    "recurring.mode must be 'one_time' or 'recurring'",
  );
  t.equal(parsePolicy({ type: 'flat', amount_cents: 1, recurring: 'x' }), 'recurring must be an object');
  t.equal(
    parsePolicy({
      type: 'flat',
      amount_cents: 1,
      product_rules: [
        { product_id: 'a', type: 'flat', amount_cents: 1 },
        { product_id: 'b', type: 'percentage', percent: 100.5 },
      ],
    }),
    'product_rules[1].percent must be a number from 0 to 100 (at most 4 decimals)',
  );
  t.equal(
    parsePolicy({ type: 'flat', amount_cents: 1, product_rules: {} }),
    'product_rules must be an array',
  );
  t.equal(
    parsePolicy({ type: 'flat', amount_cents: 1, product_rules: [5] }),
    'product_rules[0].product_id must be a string',
  );
  t.equal(
    parsePolicy({ type: 'percentage', percent: '5' }),
    'percent must be a number from 0 to 100 (at most 4 decimals)',
  );
});

t.test('4 decimals within a float: 3 × 0.0001 passes as 0.0003; a fifth decimal is refused', async (t) => {
  // What a client (or the OpenAPI document's multipleOf: 0.0001) computes: 0.00030000000000000003.
  const p = parsePolicy({ type: 'percentage', percent: 3 * 0.0001 });
  t.equal(typeof p === 'string' ? p : p.percent, 0.0003);
  const q = parsePolicy({ type: 'percentage', percent: 61.4946 + 1e-13 });
  t.equal(typeof q === 'string' ? q : q.percent, 61.4946);
  t.match(parsePolicy({ type: 'percentage', percent: 61.494638292316836 }), /at most 4 decimals/);
  t.match(parsePolicy({ type: 'percentage', percent: 0.00005 }), /at most 4 decimals/);
});
