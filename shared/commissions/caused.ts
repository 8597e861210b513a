// What a transition caused, and the one way it is written (docs/architecture.md "Commission lifecycle"):
// every transition returns a Caused; the caller's transaction writes it with `recordCaused`, once for all the
// transitions it ran (a payout's, a sale chunk's), with anything of its own added (a payout's event).
//   - webhook events: outbox rows (shared/db/webhook-events.ts), for workspaces with an enabled endpoint;
//   - notifications: outbox rows the notification worker stores and mails (shared/db/notifications.ts);
//   - ledger entries: applied in the transaction (shared/ledger/dal.ts), except a command's, which are its
//     outcome's effects, published to the ledger worker after the commit (docs/architecture.md "The ledger's two paths").
import type { Tx } from '../db/sql.ts';
import type { LedgerEffect } from '../contracts/commands.ts';
import { applyLedgerEntries } from '../ledger/dal.ts';
import { queueNotifications } from '../db/notifications.ts';
import type { NotificationInput } from '../db/notifications.ts';
import { recordWebhookEvents } from '../db/webhook-events.ts';
import type { WebhookEventInput } from '../db/webhook-events.ts';
import { commissionView } from '../views/commission.ts';
import type { CommissionRecord } from './dal.ts';

export interface Caused {
  ledger: LedgerEffect[];
  events: WebhookEventInput[];
  notifications: NotificationInput[];
}

export const nothing = (): Caused => ({ ledger: [], events: [], notifications: [] });

/** The effects of several transitions, in order. */
export function merge(...all: Caused[]): Caused {
  return {
    ledger: all.flatMap((c) => c.ledger),
    events: all.flatMap((c) => c.events),
    notifications: all.flatMap((c) => c.notifications),
  };
}

/**
 * The event of a commission's row (none for a program without a workspace): its `data` is the commission's
 * view (shared/views/commission.ts), the row as it now is, as the API answers it.
 */
export function commissionEvent(
  type: 'commission.created' | 'commission.updated',
  r: CommissionRecord,
): WebhookEventInput[] {
  if (r.workspace_id === null) return [];
  return [
    {
      type,
      workspace_id: Number(r.workspace_id),
      program_id: Number(r.program_id),
      data: commissionView(r),
    },
  ];
}

export interface RecordContext {
  /** KAFKA_PREFIX: the outbox topics. */
  kafkaPrefix: string;
  /** A command chunk's memo (which workspaces listen to webhooks). */
  memo?: Map<string, unknown>;
  /**
   * `in-transaction` (default): the ledger entries are applied in `tx`, with the change. `after-commit`: a
   * command's, returned for its outcome, published to the ledger worker once the transaction committed.
   */
  ledger?: 'in-transaction' | 'after-commit';
}

/** Writes what the transitions caused, in `tx`; returns the ledger entries left for after the commit. */
export async function recordCaused(tx: Tx, ctx: RecordContext, caused: Caused): Promise<LedgerEffect[]> {
  const afterCommit = ctx.ledger === 'after-commit';
  if (!afterCommit && caused.ledger.length > 0) await applyLedgerEntries(tx, caused.ledger);
  await recordWebhookEvents(tx, ctx.kafkaPrefix, caused.events, ctx.memo);
  await queueNotifications(tx, ctx.kafkaPrefix, caused.notifications);
  return afterCommit ? caused.ledger : [];
}
