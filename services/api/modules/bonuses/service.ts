// The rules of bonuses (CONTRACT part four "Bonuses"; docs/rewards.md), pure: a create body's messages and
// the checks no schema states (a window that makes sense, groups of this program), and a bonus as the API
// shows it. What counts towards a bonus is shared/domain/bonuses.ts's.
import { BONUS_METRICS, BONUS_PERIODS } from '../../../../shared/domain/bonuses.ts';
import type { BonusMetric, BonusPeriod } from '../../../../shared/domain/bonuses.ts';
import { MAX_AMOUNT_CENTS } from '../../../../shared/domain/money.ts';
import { iso } from '../../common.ts';
import type { BonusInput, BonusRow } from './dal.ts';

export type { BonusInput };

export const ERR = {
  notFound: 'Bonus not found',
  name: 'name is required and must be 1 to 100 characters',
  groupIds: 'group_ids must be null (every group) or an array of group ids',
  groupId: (i: number) => `group_ids[${i}] must be the id of a group of this program`,
  metric: `metric must be one of ${BONUS_METRICS.join(', ')}`,
  threshold: 'threshold must be a positive integer',
  amount: `amount_cents must be an integer from 1 to ${MAX_AMOUNT_CENTS}`,
  period: `period must be one of ${BONUS_PERIODS.join(', ')}`,
  startsAt: 'starts_at must be a date-time (ISO 8601)',
  endsAt: 'ends_at is required and must be a date-time (ISO 8601)',
  window: 'ends_at must be after starts_at',
  past: 'ends_at must be in the future',
} as const;

/** Whether `v` is an RFC 3339 date-time (what JSON Schema's `date-time` format means). */
export function isoTime(v: unknown): boolean {
  return (
    typeof v === 'string' &&
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) &&
    !Number.isNaN(Date.parse(v))
  );
}

/** A create body once its schema passed. */
export interface BonusBody {
  name: string;
  group_ids?: number[] | null;
  metric: BonusMetric;
  threshold: number;
  amount_cents: number;
  period: BonusPeriod;
  starts_at?: string | null;
  ends_at: string;
}

/** A validated, normalised bonus to create, or the 400's message. */
export function bonusInput(b: BonusBody, now = new Date()): BonusInput | string {
  const startsAt = b.starts_at ? new Date(b.starts_at) : now;
  const endsAt = new Date(b.ends_at);
  if (Number.isNaN(startsAt.getTime())) return ERR.startsAt;
  if (Number.isNaN(endsAt.getTime())) return ERR.endsAt;
  if (endsAt <= now) return ERR.past;
  if (endsAt <= startsAt) return ERR.window;
  return {
    name: b.name.trim(),
    groupIds: b.group_ids === undefined || b.group_ids === null ? null : [...new Set(b.group_ids)],
    metric: b.metric,
    threshold: b.threshold,
    amountCents: b.amount_cents,
    period: b.period,
    startsAt,
    endsAt,
  };
}

/** The first group named that is not a live group of the program, as its message; null when all are. */
export function groupIdsError(groupIds: readonly number[] | null, live: ReadonlySet<number>): string | null {
  const i = (groupIds ?? []).findIndex((g) => !live.has(g));
  return i === -1 ? null : ERR.groupId(i);
}

export const toBonus = (r: BonusRow) => ({
  id: Number(r.id),
  program_id: Number(r.program_id),
  name: r.name,
  group_ids: r.group_ids === null ? null : r.group_ids.map(Number),
  metric: r.metric,
  threshold: Number(r.threshold),
  amount_cents: Number(r.amount_cents),
  period: r.period,
  starts_at: iso(r.starts_at)!,
  ends_at: iso(r.ends_at)!,
  awarded: Number(r.awarded),
  created_at: iso(r.created_at)!,
});
