// The commissions API's own rules, pure: the listing's filters and messages. A commission as the API shows
// it is its view (shared/views/commission.ts), which its events carry too; which transitions a commission
// allows, and what they write and cause, are the lifecycle's (shared/commissions/states.ts).
import { COMMISSION_STATUSES, REFUSED, REVIEW_REASONS } from '../../../../shared/commissions/states.ts';

export { COMMISSION_STATUSES, REVIEW_REASONS };
/** The listing's filters: a status, or `review` (held for review, not yet approved or rejected). */
export const COMMISSION_FILTERS = [...COMMISSION_STATUSES, 'review'] as const;
export type CommissionFilter = (typeof COMMISSION_FILTERS)[number];

export const ERR = {
  notFound: 'Commission not found',
  status: `status must be one of ${COMMISSION_FILTERS.join(', ')}`,
  limit: 'limit must be an integer from 1 to 1000',
  offset: 'offset must be a non-negative integer',
  reason: 'reason must be a string of at most 500 characters',
  notHeld: REFUSED.notHeld,
  held: REFUSED.held,
} as const;
