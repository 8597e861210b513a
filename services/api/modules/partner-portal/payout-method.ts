// How a partner wants to be paid (GET/PUT /api/partner/payout-method): one method per account, applying to
// every record it claimed; the advertisers whose records it claimed read it in their payouts and exports
// (payouts/dal.ts). Every change is mailed to the account (operations.ts).
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { HttpError, errorResponses } from '../../../../shared/http/server.ts';
import { Checked, Email, StringEnum as CheckedEnum } from '../../../../shared/http/validation.ts';
import type { TypeBoxProvider } from '../../../../shared/http/validation.ts';
import { DateTime, Nullable, Obj, StringEnum, dataOf, requireBodyObject } from '../../common.ts';
import type { ApiDeps } from '../../deps.ts';
import { partnerOf, partnerSecurity } from '../partner-auth/access.ts';
import * as dal from './dal.ts';
import { changePayoutMethod } from './operations.ts';
import { ERR, PAYOUT_TYPES, payoutMethodOf } from './service.ts';

const tags = ['partner'];
const security = partnerSecurity;
const PayoutMethodOut = dataOf(
  Nullable(
    Obj({
      type: StringEnum(PAYOUT_TYPES),
      email: Nullable(Type.String()),
      details: Nullable(Type.String()),
      updated_at: DateTime(),
    }),
  ),
);

export function registerPayoutMethodRoutes(fastify: FastifyInstance, deps: ApiDeps): void {
  const app = fastify.withTypeProvider<TypeBoxProvider>();
  const { sql } = deps;

  app.get(
    '/api/partner/payout-method',
    {
      schema: {
        tags,
        summary: 'How the account wants to be paid (null until set)',
        security,
        response: { 200: PayoutMethodOut, ...errorResponses(401) },
      },
    },
    async (req) => {
      const row = await dal.payoutMethod(sql, partnerOf(req).accountId);
      return { data: payoutMethodAnswer(row) };
    },
  );

  app.put(
    '/api/partner/payout-method',
    {
      preValidation: requireBodyObject,
      schema: {
        tags,
        summary: 'Set how the account wants to be paid',
        description:
          '`{ type: paypal|wise|bank_transfer, email?, details? }`: paypal and wise need `email`, ' +
          'bank_transfer needs `details` (account holder, IBAN or account number, bank; free text). It applies ' +
          "to every claimed partner record; the advertiser's payout exports read it. Every change is announced " +
          'by mail to the account (the time and the new method, masked). Errors: 400 `' +
          `${ERR.payoutType}\`, \`${ERR.payoutEmail}\`, \`${ERR.payoutDetails}\`.`,
        security,
        body: Type.Object(
          {
            type: CheckedEnum(PAYOUT_TYPES, ERR.payoutType),
            email: Type.Optional(
              Checked<string | null>({ type: ['string', 'null'], pattern: EMAIL_PATTERN }, (v) =>
                v === undefined || v === null || (typeof v === 'string' && emailLike(v))
                  ? null
                  : ERR.payoutEmail,
              ),
            ),
            details: Type.Optional(
              Checked<string | null>({ type: ['string', 'null'], pattern: DETAILS_PATTERN }, (v) =>
                v === undefined || v === null || (typeof v === 'string' && v.trim().length <= 2000)
                  ? null
                  : ERR.payoutDetails,
              ),
            ),
          },
          { allOf: NEEDS },
        ),
        response: { 200: PayoutMethodOut, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const method = payoutMethodOf(req.body);
      if (typeof method === 'string') throw new HttpError(400, method);
      const row = await changePayoutMethod(sql, deps, partnerOf(req).accountId, method);
      return { data: payoutMethodAnswer(row) };
    },
  );
}

// What the OpenAPI states of the body (payoutMethodOf checks it): each field's form once trimmed, and which
// field each type needs. Documentation only: the checks above and payoutMethodOf give the messages.
const EMAIL_PATTERN = Email(320).pattern!;
/** At most 2000 characters once trimmed (empty is allowed here; bank_transfer needs some, below). */
const DETAILS_PATTERN = '^\\s*(?:\\S(?:[\\s\\S]{0,1998}\\S)?)?\\s*$';
const NEEDS = [
  {
    if: { properties: { type: { enum: ['paypal', 'wise'] } } },
    then: { required: ['email'], properties: { email: { type: 'string' } } },
  },
  {
    if: { properties: { type: { const: 'bank_transfer' } } },
    then: { required: ['details'], properties: { details: { type: 'string', pattern: '\\S' } } },
  },
];

const emailLike = (v: string) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.trim()) && v.trim().length <= 320;

function payoutMethodAnswer(row: { payout_method: unknown; updated_at: Date } | undefined) {
  const m = row?.payout_method as {
    type: string;
    email: string | null;
    details: string | null;
    updated_at: string;
  } | null;
  if (!row || !m) return null;
  return { type: m.type, email: m.email, details: m.details, updated_at: m.updated_at };
}
