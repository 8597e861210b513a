// Notifications (the partner portal's list, the dashboard's bell, and the mail of those marked `mail`) leave
// a transaction one way: an outbox row on the `notifications` topic, written in the transaction of the change
// that causes them (shared/db/outbox.ts). The relay publishes it; the notification worker
// (services/workers/notifications) stores the in-app row once per `notification_key` and, for a new one
// marked `mail`, queues its mail. No other code writes notification rows (docs/architecture.md "One
// notification path").
import type { Sql, Tx } from './sql.ts';
import { outboxTopic, writeOutbox } from './outbox.ts';
import type { NotificationEffect } from '../contracts/commands.ts';

/** A notification as its cause queues it: the worker's message (NotificationEffect) without its topic. */
export type NotificationInput = Omit<NotificationEffect, 'topic' | 'data'> & {
  data?: Record<string, unknown>;
};

/** The message the outbox carries to the notification worker; its `id` is the notification_key. */
export function notificationMessage(n: NotificationInput): NotificationEffect & { id: string } {
  return {
    id: n.notification_key,
    topic: 'notifications',
    notification_key: n.notification_key,
    recipient_type: n.recipient_type,
    partner_id: n.partner_id,
    workspace_id: n.workspace_id,
    program_id: n.program_id,
    kind: n.kind,
    title: n.title,
    body: n.body,
    data: n.data ?? {},
    mail: n.mail === true,
  };
}

/** Queues the notifications in the caller's transaction (one outbox statement whatever their number). */
export async function queueNotifications(
  tx: Tx | Sql,
  kafkaPrefix: string,
  items: readonly NotificationInput[],
): Promise<void> {
  await writeOutbox(
    tx,
    items.map((n) => ({
      topic: outboxTopic(kafkaPrefix, 'notifications'),
      key: n.notification_key,
      payload: notificationMessage(n),
    })),
  );
}
