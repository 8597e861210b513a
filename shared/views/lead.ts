// A lead as `lead.created` carries it: the lead event and the customer it made a lead. No management route
// answers a lead by itself (the spec's events list has its own fields); one function and one schema.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { IS_TEST, OrNull, Time, UPDATED_AT, View, iso, num } from './common.ts';

export const LeadView = View(
  {
    id: Type.Integer(),
    program_id: Type.Integer(),
    customer_id: OrNull(Type.Integer()),
    partner_id: OrNull(Type.Integer(), { description: 'Null: the lead was attributed to no partner' }),
    click_id: OrNull(Type.String()),
    customer_key: OrNull(Type.String()),
    email: OrNull(Type.String()),
    event_name: OrNull(Type.String()),
    is_test: IS_TEST,
    lead_timestamp: Time(),
    created_at: Time(),
    updated_at: UPDATED_AT,
  },
  'A lead: lead.created',
);
export type Lead = Static<typeof LeadView>;

export interface LeadViewRow {
  id: number | string;
  program_id: number;
  customer_id: number | string | null;
  partner_id: number | string | null;
  click_id: string | null;
  customer_key: string | null;
  email: string | null;
  event_name: string | null;
  is_test: boolean;
  lead_timestamp: Date | string;
}

/** The lead; its times are the lead's. */
export function leadView(l: LeadViewRow): Lead {
  const at = iso(l.lead_timestamp)!;
  return {
    id: Number(l.id),
    program_id: l.program_id,
    customer_id: num(l.customer_id),
    partner_id: num(l.partner_id),
    click_id: l.click_id,
    customer_key: l.customer_key,
    email: l.email,
    event_name: l.event_name,
    is_test: l.is_test,
    lead_timestamp: at,
    created_at: at,
    updated_at: at,
  };
}
