// The partner API's one multi-step change: setting the payout method, which is announced by mail to the
// account in the same transaction (CONTRACT part three "A changed payout method is announced"): whoever
// changed it, the account's mailbox hears of it, with the time and the new method masked.
import type { Sql } from '../../../../shared/db/sql.ts';
import { queueMail } from '../../../../shared/db/mail.ts';
import { maskedMethod } from '../partner-claims/service.ts';
import { setPayoutMethod } from './dal.ts';
import type { PayoutMethod } from './service.ts';

export function changePayoutMethod(
  sql: Sql,
  ctx: { kafkaPrefix: string; publicUrl: string },
  accountId: number,
  method: PayoutMethod,
) {
  return sql.begin(async (tx) => {
    const changedAt = new Date();
    const row = (await setPayoutMethod(tx, accountId, { ...method, updated_at: changedAt.toISOString() }))!;
    await queueMail(tx, ctx.kafkaPrefix, [
      {
        id: `payout-method:${accountId}:${changedAt.getTime()}`,
        to: row.email,
        template: 'payout_method_changed',
        data: {
          url: `${ctx.publicUrl}/partner/payout-method`,
          changed_at: `${changedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
          method: maskedMethod(method),
        },
        workspace_id: null,
      },
    ]);
    return row;
  });
}
