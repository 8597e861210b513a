// The risk view of a program (CONTRACT part three "Risk at a glance"): what is held for review, by reason and
// partner, and how many clicks were bots or prefetches. Pure shaping of the dal's rows.
import { FILTERED_QUALITIES } from '../../../../shared/tracking/quality.ts';
import type { HeldRow } from './dal.ts';

/** Days of filtered clicks in `filtered_by_day`: today and the 29 before. */
export const RISK_DAYS = 30;

export function riskBody(
  held: HeldRow[],
  byQuality: { quality: string; clicks: string }[],
  byDay: { date: string; quality: string; clicks: string }[],
) {
  const total = new Map(byQuality.map((r) => [r.quality, Number(r.clicks)]));
  return {
    data: {
      held: held.map((r) => ({
        reason: r.reason,
        partner_id: Number(r.partner_id),
        partner_name: r.partner_name,
        commissions: r.commissions,
        amount_cents: Number(r.amount_cents),
      })),
      // Both qualities, always, in a fixed order (zero when none).
      filtered_clicks: FILTERED_QUALITIES.map((quality) => ({ quality, clicks: total.get(quality) ?? 0 })),
      filtered_by_day: byDay.map((r) => ({ date: r.date, quality: r.quality, clicks: Number(r.clicks) })),
    },
  };
}

/** The first instant of the first day of `filtered_by_day`, `now` being now. */
export function riskSince(now: number): string {
  const day = Math.floor(now / 86_400_000) - (RISK_DAYS - 1);
  return new Date(day * 86_400_000).toISOString();
}
