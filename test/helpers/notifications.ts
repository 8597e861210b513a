// Notifications are outbox rows that the relay publishes and the notification worker stores (and mails).
// Test files that run the web process without the relay (they read the mail the web process queues straight
// from the outbox, which a relay would take away) deliver them here instead: the rows of their own prefix
// taken from the outbox and stored by the notification worker's own step, in one transaction, as the relay
// and the worker would. The files that test the path itself run the relay and the worker.
import type { Sql } from '../../shared/db/sql.ts';
import { outboxTopic } from '../../shared/db/outbox.ts';
import type { NotificationEffect } from '../../shared/contracts/commands.ts';
import { storeNotifications } from '../../services/workers/notifications/apply.ts';

/** Stores the notifications queued under `prefix` (their mail queued in the outbox); returns how many were new. */
export async function deliverNotifications(sql: Sql, prefix: string, publicUrl: string): Promise<number> {
  return sql.begin(async (tx) => {
    const rows = await tx<{ id: string; payload: NotificationEffect }[]>`
      delete from outbox
      where id in (select id from outbox where topic = ${outboxTopic(prefix, 'notifications')} for update)
      returning id, payload`;
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    const { inserted } = await storeNotifications(
      tx,
      { kafkaPrefix: prefix, publicUrl },
      rows.map((r) => r.payload),
    );
    return inserted;
  });
}
