// The rules of the advertiser's mail log, pure: the query's 400s and row → answer (the
// recipient and subject are shown, the body never: it may hold a sign-in link).
import { MAIL_STATUSES } from '../../../../shared/contracts/mail-log.ts';
import { iso } from '../../common.ts';
import type { MailRow } from './dal.ts';

export const MAX_PAGE_SIZE = 100;

export const ERR = {
  status: `status must be one of ${MAIL_STATUSES.join(', ')}`,
  page: 'page must be a positive integer',
  pageSize: `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`,
} as const;

/** The next attempt is shown only while one is planned (for `sending` the column holds the lease's end). */
export const toMail = (r: MailRow) => ({
  id: r.id,
  to: r.recipient,
  template: r.template,
  subject: r.subject,
  status: r.status,
  attempts: r.attempts,
  last_error: r.last_error,
  next_attempt_at: r.status === 'queued' ? iso(r.next_attempt_at) : null,
  sent_at: iso(r.sent_at),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

export function pagination(page: number, pageSize: number, total: number) {
  return { page, pageSize, pageCount: Math.ceil(total / pageSize), total };
}
