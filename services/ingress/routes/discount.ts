// GET /api/v1/track/discount?customer_key= (CONTRACT part four "Discounts"; docs/rewards.md): the discount a
// known customer of the token's program is owed, for the integrator's checkout to apply: its partner's
// group's processor coupon (with the processor ids), or `{ data: null }`: no such customer, no partner, the
// partner not approved, the group without a discount, or a `once` discount the customer used on a purchase.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERROR_SCHEMA, HttpError } from '../../../shared/http/server.ts';
import { DiscountOut, storedDiscount } from '../../../shared/domain/discount.ts';
import type { Discount } from '../../../shared/domain/discount.ts';
import type { Sql } from '../../../shared/db/sql.ts';
import { requireTrackingToken } from '../auth.ts';
import { tokenIsLive } from '../commands/answer.ts';
import type { IngressDeps } from '../deps.ts';

export const CUSTOMER_KEY_REQUIRED = 'customer_key is required (1 to 255 characters)';

/** What the customer is owed now (null: nothing). */
export async function discountOwed(
  sql: Sql,
  programId: number,
  customerKey: string,
): Promise<Discount | null> {
  const [row] = await sql<{ discount: unknown; purchased: boolean }[]>`
    select g.discount, c.first_purchase_date is not null as purchased
    from customers c
    join partner_programs pp on pp.id = c.partner_program_id and pp.status = 'approved'
    join program_groups g on g.id = pp.group_id
    where c.program_id = ${programId} and c.customer_key = ${customerKey}`;
  const discount = storedDiscount(row?.discount ?? null);
  if (discount === null || (discount.duration === 'once' && row!.purchased)) return null;
  return discount;
}

const schema = {
  tags: ['tracking'],
  summary: 'The discount a known customer is owed',
  description:
    "Tracking token. The discount of the customer's partner's group (the processor coupon, with its ids at " +
    'each processor) for the checkout to apply, or `{ data: null }`: an unknown customer_key, a customer ' +
    'without a partner, a partner not approved, a group without a discount, or a `once` discount after the ' +
    'customer’s first purchase. 400 `' +
    CUSTOMER_KEY_REQUIRED +
    '`; 401 for a missing or wrong token.',
  security: [{ trackingToken: [] }] as Record<string, string[]>[],
  querystring: {
    type: 'object',
    // Required, and not blank (a key of spaces is none), as the handler checks it.
    properties: { customer_key: { type: 'string', minLength: 1, maxLength: 255, pattern: '\\S' } },
    required: ['customer_key'],
  },
  response: {
    200: {
      type: 'object',
      properties: { data: { anyOf: [DiscountOut, { type: 'null' }] } },
      required: ['data'],
    },
    400: ERROR_SCHEMA,
    401: ERROR_SCHEMA,
  },
};

export function registerDiscountRoute(app: FastifyInstance, deps: IngressDeps): void {
  app.get(
    '/api/v1/track/discount',
    {
      schema,
      // The token before the query: a caller without one learns nothing from its 400s.
      validatorCompiler: () => (data) => ({ value: data }),
    },
    async (req: FastifyRequest) => {
      const programId = await requireTrackingToken(req, deps.cache);
      // The cache may be a poll behind a regeneration or a deletion: ask Postgres, as the CLI status does.
      if (!(await tokenIsLive(deps.sql, programId, req.trackingToken!.hash))) {
        throw new HttpError(401, 'Invalid tracking token');
      }
      const key = (req.query as { customer_key?: unknown }).customer_key;
      if (typeof key !== 'string' || key.trim() === '' || key.length > 255) {
        throw new HttpError(400, CUSTOMER_KEY_REQUIRED);
      }
      return { data: await discountOwed(deps.sql, programId, key.trim()) };
    },
  );
}
