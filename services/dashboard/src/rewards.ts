// A tier rule's or a bonus's figure in words, the same on the dashboard's Groups page and the portal's progress
// bars: money metrics (sales, commission) in the program's currency, customers and conversions as counts; the
// window or period as a phrase.
import { money, num } from './format.ts';

export type TierMetric = 'sales_cents' | 'customers' | 'commission_cents';
export type TierWindow = 'lifetime' | 'calendar_month';

export const TIER_METRICS: { value: TierMetric; label: string }[] = [
  { value: 'sales_cents', label: 'Sales' },
  { value: 'customers', label: 'Customers' },
  { value: 'commission_cents', label: 'Commission' },
];
export const TIER_WINDOWS: { value: TierWindow; label: string }[] = [
  { value: 'lifetime', label: 'Lifetime' },
  { value: 'calendar_month', label: 'Calendar month (UTC)' },
];

/** Whether the metric is an amount of money in cents (entered and shown in the currency's main unit). */
export const isMoneyMetric = (m: string): boolean => m === 'sales_cents' || m === 'commission_cents';

/** A figure of the metric: "$1,000.00" for money, "12" for customers. */
export function metricValue(metric: string, value: number, currency: string): string {
  return isMoneyMetric(metric) ? money(value, currency) : num(value);
}

/** "$1,000.00 of sales", "10 customers", "3 conversions", "$200.00 of commission". */
export function metricAmount(metric: string, value: number, currency: string): string {
  if (metric === 'customers') return `${num(value)} ${value === 1 ? 'customer' : 'customers'}`;
  if (metric === 'conversions') return `${num(value)} ${value === 1 ? 'conversion' : 'conversions'}`;
  return `${money(value, currency)} of ${metric === 'sales_cents' ? 'sales' : 'commission'}`;
}

export type BonusMetric = 'sales_cents' | 'customers' | 'conversions';
export const BONUS_METRICS: { value: BonusMetric; label: string }[] = [
  { value: 'sales_cents', label: 'Sales' },
  { value: 'customers', label: 'Customers' },
  { value: 'conversions', label: 'Conversions (first purchases)' },
];

/** "once" or "each calendar month (UTC)". */
export function bonusPeriodText(period: string): string {
  return period === 'calendar_month' ? 'each calendar month (UTC)' : 'once';
}

/** A figure's share of its threshold, 0..100 (whole percent, rounded down: 100 only once reached). */
export function percentOf(value: number, threshold: number): number {
  if (threshold <= 0) return 100;
  return Math.max(0, Math.min(100, Math.floor((value * 100) / threshold)));
}

/** "in total" or "in a calendar month (UTC)". */
export function windowText(window: string): string {
  return window === 'calendar_month' ? 'in a calendar month (UTC)' : 'in total';
}
