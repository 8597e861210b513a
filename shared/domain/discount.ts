// A group's discount for the customers its partners bring (CONTRACT part four "Discounts"; docs/rewards.md):
// the processor coupon the advertiser created for the group. One definition, both ways (`in`: what a group
// accepts, checked by the policy schema's walker with its messages; `out`: what answers show), as the policy's
// (policy-schema.ts). The click answer and the tracker carry it without the processor ids.
import { Type } from '@sinclair/typebox';
import type { Static, TOptional, TSchema, TString } from '@sinclair/typebox';
import { isPlainObject } from '../json.ts';
import { PROCESSORS } from '../processors/index.ts';
import type { Processor } from '../processors/index.ts';
import { MAX_AMOUNT_CENTS } from './money.ts';
import { firstError, toDecimals } from './policy-schema.ts';
import type { SchemaNode } from './policy-schema.ts';

const RATE_TYPES = ['percentage', 'flat'] as const;
const DURATIONS = ['once', 'repeating', 'forever'] as const;
/** A discount's processor_ids: one entry per processor (shared/processors/index.ts). */
export const DISCOUNT_PROCESSORS = PROCESSORS;
export const MAX_DISCOUNT_MONTHS = 120;

const doc =
  "The processor coupon for the customers this group's partners bring: `percentage` (`percent`, more than 0, " +
  'at most 100) or `flat` (`amount_cents`, positive); `duration` once, repeating (for `months`) or forever; ' +
  "`processor_ids`: the coupon's or promotion code's id at each processor (docs/rewards.md)";

const fields = {
  out: () => ({
    type: Type.Union(RATE_TYPES.map((t) => Type.Literal(t))),
    percent: Type.Union([Type.Number(), Type.Null()]),
    amount_cents: Type.Union([Type.Integer(), Type.Null()]),
    duration: Type.Union(DURATIONS.map((t) => Type.Literal(t))),
    months: Type.Union([Type.Integer(), Type.Null()], { description: 'For repeating: how many months' }),
  }),
};

/** A group's discount as the API accepts it (null: none). */
export const DiscountIn = Type.Object(
  {
    type: Type.String({ enum: [...RATE_TYPES], errorMessage: "type must be 'percentage' or 'flat'" }),
    percent: Type.Optional(
      Type.Union([Type.Number(), Type.Null()], { description: 'For percentage: (0, 100]' }),
    ),
    amount_cents: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], { description: `For flat: 1 to ${MAX_AMOUNT_CENTS}` }),
    ),
    duration: Type.String({
      enum: [...DURATIONS],
      errorMessage: "duration must be 'once', 'repeating' or 'forever'",
    }),
    months: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: `For repeating: 1 to ${MAX_DISCOUNT_MONTHS}`,
      }),
    ),
    processor_ids: Type.Optional(
      Type.Union(
        [
          Type.Object(
            Object.fromEntries(
              DISCOUNT_PROCESSORS.map((p) => [
                p,
                Type.Optional(
                  Type.String({
                    minLength: 1,
                    maxLength: 200,
                    errorMessage: `${p} must be a string of 1 to 200 characters`,
                  }),
                ),
              ]),
            ),
          ),
          Type.Null(),
        ],
        { errorMessage: 'processor_ids must be an object' },
      ),
    ),
  },
  {
    description: doc,
    errorMessage: 'discount must be an object or null',
    allOf: [
      {
        if: { properties: { type: { const: 'percentage' } } },
        then: {
          required: ['percent'],
          properties: {
            percent: {
              type: 'number',
              exclusiveMinimum: 0,
              maximum: 100,
              'x-decimals': 4,
              errorMessage: 'percent must be more than 0 and at most 100 (at most 4 decimals)',
            },
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
              minimum: 1,
              maximum: MAX_AMOUNT_CENTS,
              errorMessage: `amount_cents must be an integer from 1 to ${MAX_AMOUNT_CENTS}`,
            },
          },
        },
      },
      {
        if: { properties: { duration: { const: 'repeating' } } },
        then: {
          required: ['months'],
          properties: {
            months: {
              type: 'integer',
              minimum: 1,
              maximum: MAX_DISCOUNT_MONTHS,
              errorMessage: `months must be an integer from 1 to ${MAX_DISCOUNT_MONTHS} (required for repeating)`,
            },
          },
        },
      },
    ],
  },
);

const ProcessorIds = Type.Object(
  Object.fromEntries(PROCESSORS.map((p) => [p, Type.Optional(Type.String())])) as {
    [P in Processor]: TOptional<TString>;
  },
);
/** A group's discount as the management API (and the tracking token's discount route) shows it. */
export const DiscountOut = Type.Object(
  { ...fields.out(), processor_ids: ProcessorIds },
  { description: doc },
);
/** The discount a click answer and the tracker carry: no processor ids. */
export const PublicDiscountOut = Type.Object(fields.out(), {
  description: "The discount of the clicked partner's group, for the checkout to apply (docs/rewards.md)",
});
export type Discount = Static<typeof DiscountOut>;
export type PublicDiscount = Static<typeof PublicDiscountOut>;

const num = (v: unknown) => v as number;

/** Returns the discount, normalised (null stays null), or a message naming what is wrong with it. */
export function parseDiscount(input: unknown): Discount | null | string {
  if (input === null) return null;
  const e = firstError(DiscountIn as TSchema as SchemaNode, input, '', 'discount.');
  if (e !== null) return e;
  const d = input as Record<string, unknown>;
  const ids = isPlainObject(d.processor_ids) ? d.processor_ids : {};
  return {
    type: d.type as Discount['type'],
    percent: d.type === 'percentage' ? toDecimals(num(d.percent)) : null,
    amount_cents: d.type === 'flat' ? num(d.amount_cents) : null,
    duration: d.duration as Discount['duration'],
    months: d.duration === 'repeating' ? num(d.months) : null,
    processor_ids: Object.fromEntries(
      DISCOUNT_PROCESSORS.filter((p) => typeof ids[p] === 'string').map((p) => [
        p,
        (ids[p] as string).trim(),
      ]),
    ),
  };
}

/** null, or why `v` is not a discount (null is none). */
export const discountError = (v: unknown): string | null => {
  const r = parseDiscount(v);
  return typeof r === 'string' ? r : null;
};

/** A stored discount as readers use it (null: none, or one that no longer parses). */
export function storedDiscount(v: unknown): Discount | null {
  const d = v === null || v === undefined ? null : parseDiscount(v);
  return typeof d === 'string' ? null : d;
}

/** The discount a click answer and the tracker show: without the processor ids. */
export function publicDiscount(d: Discount | null): PublicDiscount | null {
  if (d === null) return null;
  return {
    type: d.type,
    percent: d.percent,
    amount_cents: d.amount_cents,
    duration: d.duration,
    months: d.months,
  };
}
