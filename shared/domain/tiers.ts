// Tier rules, pure (CONTRACT part four "Tiers"; docs/rewards.md): which rule moves a partner now, the
// metrics a rule reads and how one sale or refund changes them, and the ladder's checks (no rule to its own
// group, no cycle). The SQL and the moves themselves are shared/rewards/ and the attribution worker's.

export const TIER_METRICS = ['sales_cents', 'customers', 'commission_cents'] as const;
export type TierMetric = (typeof TIER_METRICS)[number];
export const TIER_WINDOWS = ['lifetime', 'calendar_month'] as const;
export type TierWindow = (typeof TIER_WINDOWS)[number];

export interface TierRule {
  id: number;
  fromGroupId: number;
  toGroupId: number;
  metric: TierMetric;
  window: TierWindow;
  threshold: number;
  carryExistingCustomers: boolean;
}

/** A partner-program's figures in one window (a `partner_metrics` row). */
export interface Metrics {
  sales_cents: number;
  customers: number;
  commission_cents: number;
}

export const zeroMetrics = (): Metrics => ({ sales_cents: 0, customers: 0, commission_cents: 0 });

/** The period a window's row is kept under: 1970-01-01 for lifetime, the UTC month's first day else. */
export const LIFETIME = '1970-01-01';
export function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}
export function periodOf(window: TierWindow, at: Date): string {
  return window === 'lifetime' ? LIFETIME : monthOf(at);
}

/**
 * The rule that moves a partner in `groupId` now (the first, in the ladder's order, from that group whose
 * metric in its window reached its threshold), or null. `metrics(window)` is the partner's figures in the
 * window of the sale or refund just applied.
 */
export function tierMove(
  rules: readonly TierRule[],
  groupId: number,
  metrics: (window: TierWindow) => Metrics,
): TierRule | null {
  for (const r of rules) {
    if (r.fromGroupId === groupId && metrics(r.window)[r.metric] >= r.threshold) return r;
  }
  return null;
}

/**
 * The moves one decision makes, in order: up the first rule that applies, then from the group it reached
 * (a sale may cross two thresholds at once), never twice through the same group (the ladder has no cycle,
 * but a guard costs nothing).
 */
export function tierMoves(
  rules: readonly TierRule[],
  groupId: number,
  metrics: (window: TierWindow) => Metrics,
): TierRule[] {
  const out: TierRule[] = [];
  const seen = new Set([groupId]);
  let at = groupId;
  for (;;) {
    const r = tierMove(rules, at, metrics);
    if (!r || seen.has(r.toGroupId)) return out;
    out.push(r);
    seen.add(r.toGroupId);
    at = r.toGroupId;
  }
}

/** A cycle of the ladder as the group ids it passes (first repeated last), or null when there is none. */
export function findCycle(rules: readonly Pick<TierRule, 'fromGroupId' | 'toGroupId'>[]): number[] | null {
  const next = new Map<number, number[]>();
  for (const r of rules) next.set(r.fromGroupId, [...(next.get(r.fromGroupId) ?? []), r.toGroupId]);
  const state = new Map<number, 'open' | 'done'>();
  const path: number[] = [];
  const visit = (g: number): number[] | null => {
    if (state.get(g) === 'open') return [...path.slice(path.indexOf(g)), g];
    if (state.get(g) === 'done') return null;
    state.set(g, 'open');
    path.push(g);
    for (const n of next.get(g) ?? []) {
      const c = visit(n);
      if (c) return c;
    }
    path.pop();
    state.set(g, 'done');
    return null;
  };
  for (const g of [...next.keys()].sort((a, b) => a - b)) {
    const c = visit(g);
    if (c) return c;
  }
  return null;
}
