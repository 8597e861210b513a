// A commission policy's one shape (CONTRACT "Programs" and part four): one definition, from which come
//   - the TypeScript type (`CommissionPolicy`, the normalised policy every reader gets),
//   - the check and its messages (`parsePolicy`: the request schema walked by `firstError` below),
//   - the OpenAPI request schema (`PolicyIn`: what a program, a group or a partner override accepts) and
//     response schema (`PolicyOut`: what every answer that carries a policy shows).
// Programs, groups and partner overrides all use it; nothing else spells the policy's fields.
//
// `PolicyIn` is lenient where the API always was (recurring and product_rules may be omitted or null; a
// rate's type says which of percent / amount_cents it reads, the other is ignored); `PolicyOut` is the
// normalised form, every field present.
import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import { isPlainObject } from '../json.ts';
import { MAX_AMOUNT_CENTS } from './money.ts';

const RATE_TYPES = ['percentage', 'flat'] as const;
const MODES = ['one_time', 'recurring'] as const;

const MSG = {
  type: "type must be 'percentage' or 'flat'",
  percent: 'percent must be a number from 0 to 100 (at most 4 decimals)',
  amount: 'amount_cents must be a non-negative integer',
  amountMax: `amount_cents must be at most ${MAX_AMOUNT_CENTS}`,
};

// Each part of the policy is defined once, both ways side by side: `in` (what a request may send, with the
// messages) and `out` (the normalised form an answer shows).

/** A rate's fields: `percentage` reads `percent`, `flat` reads `amount_cents` (the other is null). */
const rate = {
  in: () => ({
    type: Type.String({ enum: [...RATE_TYPES], errorMessage: MSG.type }),
    percent: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], {
        description: 'For percentage: a number from 0 to 100, at most 4 decimals',
        errorMessage: MSG.percent,
      }),
    ),
    amount_cents: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: `For flat: an integer from 0 to ${MAX_AMOUNT_CENTS}`,
        errorMessage: MSG.amount,
      }),
    ),
  }),
  out: () => ({
    type: Type.Union(
      RATE_TYPES.map((t) => Type.Literal(t)),
      { description: 'percentage (reads percent) or flat (reads amount_cents)' },
    ),
    percent: Type.Union([Type.Number(), Type.Null()], { description: 'For percentage: 0..100' }),
    amount_cents: Type.Union([Type.Integer(), Type.Null()], { description: 'For flat: in cents' }),
  }),
};

/** What a rate's type requires (JSON Schema if/then, which `firstError` applies before the fields). */
const rateNeeds = () => [
  {
    if: { properties: { type: { const: 'percentage' } } },
    then: {
      required: ['percent'],
      properties: {
        percent: { type: 'number', minimum: 0, maximum: 100, 'x-decimals': 4, errorMessage: MSG.percent },
      },
    },
  },
  {
    if: { properties: { type: { const: 'flat' } } },
    then: {
      required: ['amount_cents'],
      properties: {
        amount_cents: {
          type: 'integer',
          minimum: 0,
          maximum: MAX_AMOUNT_CENTS,
          errorMessage: MSG.amount,
          maximumMessage: MSG.amountMax,
        },
      },
    },
  },
];

/** The largest `recurring.first.count` (CONTRACT part four "Stepped recurring rates"). */
export const MAX_FIRST_COUNT = 120;

const firstDoc =
  'The first `count` commissions of one partner–customer pair are priced by this rate, later ones by the ' +
  "policy's (a refunded or rejected commission still counts)";
/** A stepped rate: `recurring.first` (docs/rewards.md "Stepped recurring rates"). */
const firstRate = {
  in: () =>
    Type.Object(
      {
        count: Type.Integer({
          minimum: 1,
          maximum: MAX_FIRST_COUNT,
          errorMessage: `count must be an integer from 1 to ${MAX_FIRST_COUNT}`,
        }),
        ...rate.in(),
      },
      { description: firstDoc, allOf: rateNeeds(), errorMessage: 'first must be an object or null' },
    ),
  out: () => Type.Object({ count: Type.Integer(), ...rate.out() }, { description: firstDoc }),
};

const recurringDoc =
  '`mode` one_time (only the first commission of a partner–customer pair) or recurring (default); ' +
  "`months` null = lifetime, else counted from the pair's first commission; `first`: a stepped rate for the " +
  "pair's first commissions";
const recurring = {
  in: () =>
    Type.Union(
      [
        Type.Object(
          {
            mode: Type.Optional(
              Type.Union([Type.String({ enum: [...MODES] }), Type.Null()], {
                errorMessage: "mode must be 'one_time' or 'recurring'",
              }),
            ),
            months: Type.Optional(
              Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
                errorMessage: 'months must be a positive integer or null (lifetime)',
              }),
            ),
            first: Type.Optional(
              Type.Union([firstRate.in(), Type.Null()], { errorMessage: 'first must be an object or null' }),
            ),
          },
          { description: recurringDoc },
        ),
        Type.Null(),
      ],
      { errorMessage: 'recurring must be an object' },
    ),
  out: () =>
    Type.Object(
      {
        mode: Type.Union(MODES.map((m) => Type.Literal(m))),
        months: Type.Union([Type.Integer(), Type.Null()]),
        first: Type.Union([firstRate.out(), Type.Null()]),
      },
      { description: recurringDoc },
    ),
};

const productRuleDoc = "Overrides the policy's rate for sales of its product_id";
const productRule = {
  in: () =>
    Type.Object(
      {
        product_id: Type.String({ minLength: 1, errorMessage: 'product_id must be a string' }),
        ...rate.in(),
      },
      { description: productRuleDoc, allOf: rateNeeds(), errorMessage: 'product_id must be a string' },
    ),
  out: () => Type.Object({ product_id: Type.String(), ...rate.out() }, { description: productRuleDoc }),
};

const policyDoc =
  'Commission policy: `percentage` with `percent`, or `flat` with `amount_cents`; `recurring.mode` ' +
  '`one_time` or `recurring` (default), `months` null = lifetime, `first: { count, type, percent | ' +
  'amount_cents }` prices the first `count` commissions of a partner–customer pair; a `product_rules` ' +
  'entry overrides the rate for its product_id (docs/rewards.md).';

/** What a program, a group or an override accepts as `commission` (OpenAPI request schema). */
export const PolicyIn = Type.Object(
  {
    ...rate.in(),
    recurring: Type.Optional(recurring.in()),
    product_rules: Type.Optional(
      Type.Union([Type.Array(productRule.in()), Type.Null()], {
        errorMessage: 'product_rules must be an array',
      }),
    ),
  },
  { description: policyDoc, allOf: rateNeeds(), errorMessage: 'commission must be an object' },
);
/** A policy as every answer shows it, normalised (OpenAPI response schema, and the type below). */
export const PolicyOut = Type.Object(
  { ...rate.out(), recurring: recurring.out(), product_rules: Type.Array(productRule.out()) },
  { description: policyDoc },
);

export type CommissionPolicy = Static<typeof PolicyOut>;

/** What priced a commission (docs/rewards.md): which rule, and its rate as it was then. */
export const RuleOut = Type.Object(
  {
    source: Type.Union(
      (['override', 'group', 'product', 'first_period', 'bonus', 'imported'] as const).map((s) =>
        Type.Literal(s),
      ),
      {
        description:
          "override: the partner's own policy; group: its group's (the default group's is the program's); " +
          "product: a product rule of the policy applied; first_period: the policy's stepped rate for a " +
          "pair's first commissions; bonus: a bonus's amount; imported: brought by an import with the amount the other " +
          'service had decided (docs/importing.md)',
      },
    ),
    ...rate.out(),
  },
  {
    description:
      'The rule that priced the commission. Commissions from before rules were recorded show the rate of the ' +
      "program's policy when it reproduces their amount, else type, percent and amount_cents null",
  },
);
export type Rate = Pick<CommissionPolicy, 'type' | 'percent' | 'amount_cents'>;
export type FirstRate = NonNullable<CommissionPolicy['recurring']['first']>;

// ---- the check: the request schema, walked ----

export type SchemaNode = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  /** At most this many decimals (an exact rule, where JSON Schema's multipleOf would be a float's). */
  'x-decimals'?: number;
  minLength?: number;
  maxLength?: number;
  required?: string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  allOf?: { if: SchemaNode; then: SchemaNode }[];
  errorMessage?: string;
  maximumMessage?: string;
};

const typeOk = (t: string, v: unknown): boolean =>
  t === 'object'
    ? isPlainObject(v)
    : t === 'array'
      ? Array.isArray(v)
      : t === 'null'
        ? v === null
        : t === 'string'
          ? typeof v === 'string'
          : t === 'integer'
            ? Number.isSafeInteger(v)
            : t === 'number'
              ? typeof v === 'number' && Number.isFinite(v)
              : true;

/** Whether `v` meets the `if` of a conditional (only `properties` with `const` are used here). */
const matches = (cond: SchemaNode, v: Record<string, unknown>) =>
  Object.entries(cond.properties ?? {}).every(([k, c]) => v[k] === c.const);

/** The properties of an object node as they apply to `v`: the `then` of each matching `if` merged in. */
function effective(node: SchemaNode, v: Record<string, unknown>) {
  const props: Record<string, SchemaNode> = { ...node.properties };
  const required = new Set(node.required ?? []);
  for (const c of node.allOf ?? []) {
    if (!matches(c.if, v)) continue;
    for (const r of c.then.required ?? []) required.add(r);
    for (const [k, s] of Object.entries(c.then.properties ?? {})) props[k] = s;
  }
  return { props, required };
}

/**
 * The first thing wrong with `v` under `node` (properties in schema order, each one's conditions applied
 * first), as the failing node's message prefixed with where it is; null when it is fine. `at` prefixes this
 * node's own message, `inner` its children's (`recurring.`, `product_rules[0].`). A union (Nullable) is fine
 * when a member is; else its object or array member judges a value of that kind, with its own messages.
 */
export function firstError(node: SchemaNode, v: unknown, at = '', inner = at): string | null {
  const fail = (message?: string) => `${at}${message ?? node.errorMessage ?? 'is invalid'}`;
  if (node.anyOf) {
    if (node.anyOf.some((m) => firstError(m, v) === null)) return null;
    const kind = node.anyOf.find((m) => (m.type === 'object' || m.type === 'array') && typeOk(m.type, v));
    return kind ? firstError({ errorMessage: node.errorMessage, ...kind }, v, at, inner) : fail();
  }
  if (node.type !== undefined) {
    const types = Array.isArray(node.type) ? node.type : [node.type];
    if (!types.some((t) => typeOk(t, v))) return fail();
  }
  if (node.enum && !node.enum.includes(v)) return fail();
  if (typeof v === 'number') {
    if (node.minimum !== undefined && v < node.minimum) return fail();
    if (node.exclusiveMinimum !== undefined && v <= node.exclusiveMinimum) return fail();
    // Within a float's error of n decimals (0.0003 × 10^4 is 2.9999999999999996): what a client computing
    // `k × 0.0001` sends passes, and the value is rounded to them (toDecimals).
    if (node['x-decimals'] !== undefined) {
      const x = v * 10 ** node['x-decimals'];
      if (Math.abs(Math.round(x) - x) > 1e-6) return fail();
    }
    if (node.maximum !== undefined && v > node.maximum) return fail(node.maximumMessage);
  }
  if (typeof v === 'string') {
    if (node.minLength !== undefined && v.length < node.minLength) return fail();
    if (node.maxLength !== undefined && v.length > node.maxLength) return fail();
  }
  if (Array.isArray(v) && node.items) {
    const base = inner.endsWith('.') ? inner.slice(0, -1) : inner;
    for (const [i, item] of v.entries()) {
      const e = firstError(node.items, item, `${base}[${i}].`);
      if (e !== null) return e;
    }
  }
  if (isPlainObject(v) && (node.properties || node.allOf)) {
    const { props, required } = effective(node, v);
    for (const [k, s] of Object.entries(props)) {
      if (v[k] === undefined && !required.has(k)) continue;
      const e = firstError(s, v[k], inner, `${inner}${k}.`);
      if (e !== null) return e;
    }
  }
  return null;
}

const walk = (node: TSchema, v: unknown, inner: string) => firstError(node as SchemaNode, v, '', inner);

// ---- normalising (after the check passed) ----

const num = (v: unknown) => v as number;
/** A number that passed an `x-decimals: n` check, exactly n decimals (no float residue). */
export const toDecimals = (v: number, n = 4) => Math.round(v * 10 ** n) / 10 ** n;

function rateOf(r: Record<string, unknown>): Rate {
  return r.type === 'percentage'
    ? { type: 'percentage', percent: toDecimals(num(r.percent)), amount_cents: null }
    : { type: 'flat', percent: null, amount_cents: num(r.amount_cents) };
}

/** Returns the policy, normalised, or a message saying what is wrong with it. */
export function parsePolicy(input: unknown): CommissionPolicy | string {
  const e = walk(PolicyIn, input, '');
  if (e !== null) return e;
  const p = input as Record<string, unknown>;
  const r = isPlainObject(p.recurring) ? p.recurring : {};
  const rules = Array.isArray(p.product_rules) ? (p.product_rules as Record<string, unknown>[]) : [];
  const first = isPlainObject(r.first) ? { count: num(r.first.count), ...rateOf(r.first) } : null;
  return {
    ...rateOf(p),
    recurring: {
      mode: (r.mode as CommissionPolicy['recurring']['mode'] | null | undefined) ?? 'recurring',
      months: (r.months as number | null | undefined) ?? null,
      first,
    },
    product_rules: rules.map((x) => ({ product_id: x.product_id as string, ...rateOf(x) })),
  };
}

/** null, or why `v` is not a policy (the schemas' Checked node). */
export const policyError = (v: unknown): string | null => {
  const r = parsePolicy(v);
  return typeof r === 'string' ? r : null;
};
