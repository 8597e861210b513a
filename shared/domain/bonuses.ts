// Bonuses, pure (CONTRACT part four "Bonuses"; docs/rewards.md): which sales count towards a bonus, in which
// period, and by how much. A partner whose progress in a period reaches the threshold gets one commission of
// the bonus's amount (shared/commissions `awardBonuses`; unique per bonus, partner and period).

export const BONUS_METRICS = ['sales_cents', 'customers', 'conversions'] as const;
export type BonusMetric = (typeof BONUS_METRICS)[number];
export const BONUS_PERIODS = ['once', 'calendar_month'] as const;
export type BonusPeriod = (typeof BONUS_PERIODS)[number];

export interface Bonus {
  id: number;
  programId: number;
  /** null: every group. */
  groupIds: number[] | null;
  metric: BonusMetric;
  threshold: number;
  amountCents: number;
  period: BonusPeriod;
  startsAt: Date;
  endsAt: Date;
}

/** The period a sale at `at` counts in: 'once', or its UTC month 'YYYY-MM'. */
export function bonusPeriodOf(b: Pick<Bonus, 'period'>, at: Date): string {
  return b.period === 'once' ? 'once' : at.toISOString().slice(0, 7);
}

/** Where the sale's period starts: the bonus's start, or its month's first moment if later. */
export function periodStart(b: Pick<Bonus, 'period' | 'startsAt'>, at: Date): Date {
  if (b.period === 'once') return b.startsAt;
  const month = new Date(`${at.toISOString().slice(0, 7)}-01T00:00:00Z`);
  return month > b.startsAt ? month : b.startsAt;
}

/** Whether a sale at `at` of a partner in `groupId` counts towards the bonus. */
export function bonusCounts(b: Bonus, groupId: number | null, at: Date): boolean {
  if (at < b.startsAt || at >= b.endsAt) return false;
  return b.groupIds === null || (groupId !== null && b.groupIds.includes(groupId));
}

/**
 * What one attributed sale adds to a bonus's progress: its amount (sales_cents); 1 for its customer's first
 * sale with the partner in the period (customers: `lastSaleBefore` is the pair's last sale before this one);
 * 1 for the customer's first purchase (conversions).
 */
export function contribution(
  b: Bonus,
  sale: { amountCents: number; at: Date; firstPurchase: boolean; lastSaleBefore: Date | null },
): number {
  if (b.metric === 'sales_cents') return sale.amountCents;
  if (b.metric === 'conversions') return sale.firstPurchase ? 1 : 0;
  return sale.lastSaleBefore === null || sale.lastSaleBefore < periodStart(b, sale.at) ? 1 : 0;
}
