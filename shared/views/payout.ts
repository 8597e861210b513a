// A payout as the payouts API answers it (GET /api/advertiser/payouts/:id and the lists) and as
// `payout.created` / `payout.paid` carry it: one function and one schema for both.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { IS_TEST, OrNull, Time, UPDATED_AT, View, iso } from './common.ts';

export type PayoutStatus = 'pending' | 'paid' | 'canceled';
export const PAYOUT_STATUSES: readonly PayoutStatus[] = ['pending', 'paid', 'canceled'];

/** A partner's payout method as the partner portal stores it (CONTRACT "Partners who sign in"). */
export interface PayoutMethod {
  type: 'paypal' | 'wise' | 'bank_transfer';
  email: string | null;
  details: unknown;
}

/** The stored method when it is one the API knows, else null (treated as "no payout method"). */
export function payoutMethodOf(v: unknown): PayoutMethod | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const m = v as Record<string, unknown>;
  if (m.type !== 'paypal' && m.type !== 'wise' && m.type !== 'bank_transfer') return null;
  return {
    type: m.type,
    email: typeof m.email === 'string' && m.email.trim() !== '' ? m.email.trim() : null,
    details: m.details ?? null,
  };
}

export const PayoutMethodOut = OrNull(
  Type.Object({
    type: Type.String({ enum: ['paypal', 'wise', 'bank_transfer'] }),
    email: OrNull(Type.String()),
    details: Type.Unknown(),
  }),
  { description: "The partner's payout method from the partner portal (null: none set)" },
);

export const PayoutView = View(
  {
    id: Type.Integer(),
    program_id: Type.Integer(),
    partner_id: Type.Integer(),
    partner_name: Type.String(),
    partner_email: Type.String(),
    payout_method: PayoutMethodOut,
    amount_cents: Type.Integer({
      description: 'What is sent: commissions_cents - recovered_cents, never below 0',
    }),
    commissions_cents: Type.Integer({ description: "The commissions' amounts less their deductions" }),
    recovered_cents: Type.Integer({ description: 'Clawbacks of earlier payments recovered by this payout' }),
    currency: Type.String(),
    status: Type.String({ enum: [...PAYOUT_STATUSES] }),
    commission_ids: Type.Array(Type.Integer()),
    reference: OrNull(Type.String()),
    is_test: IS_TEST,
    created_at: Time(),
    paid_at: OrNull(Time()),
    canceled_at: OrNull(Time()),
    updated_at: UPDATED_AT,
  },
  'A payout: GET /api/advertiser/payouts/:id, and payout.* events',
);
export type Payout = Omit<Static<typeof PayoutView>, 'payout_method' | 'status'> & {
  payout_method: PayoutMethod | null;
  status: PayoutStatus;
};

/** A payout's row, with its partner's name, email and payout method, and its commissions' ids. */
export interface PayoutViewRow {
  id: string;
  program_id: string;
  partner_id: string;
  partner_name: string;
  partner_email: string;
  payout_method: unknown;
  currency: string;
  amount_cents: string;
  commissions_cents: string;
  recovered_cents: string;
  status: PayoutStatus;
  reference: string | null;
  created_at: Date;
  paid_at: Date | null;
  canceled_at: Date | null;
  updated_at: Date;
  commission_ids: string[];
}

export function payoutView(r: PayoutViewRow): Payout {
  return {
    id: Number(r.id),
    program_id: Number(r.program_id),
    partner_id: Number(r.partner_id),
    partner_name: r.partner_name,
    partner_email: r.partner_email,
    payout_method: payoutMethodOf(r.payout_method),
    amount_cents: Number(r.amount_cents),
    commissions_cents: Number(r.commissions_cents),
    recovered_cents: Number(r.recovered_cents),
    currency: r.currency.trim(),
    status: r.status,
    commission_ids: r.commission_ids.map(Number),
    reference: r.reference,
    // No test mode for payouts: they pay live commissions.
    is_test: false,
    created_at: iso(r.created_at)!,
    paid_at: iso(r.paid_at),
    canceled_at: iso(r.canceled_at),
    updated_at: iso(r.updated_at)!,
  };
}
