// The delivery log is kept for WEBHOOK_RETENTION_DAYS: ended deliveries (delivered or failed) older than that
// are deleted with their attempts, then the events no delivery refers to any more. A pending delivery is
// never pruned, however old (its endpoint may be disabled, waiting to be enabled again). In batches, so
// a large backlog never holds one long transaction.
import type { Sql } from '../../../shared/db/sql.ts';

const BATCH = 5_000;

/** One round: true when more may be waiting. */
export async function pruneDeliveryLog(sql: Sql, retentionDays: number): Promise<boolean> {
  const gone = await sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries
      where status <> 'pending' and created_at < now() - ${retentionDays} * interval '1 day'
      limit ${BATCH})
    returning id`;
  const orphans = await sql`
    delete from webhook_events where id in (
      select ev.id from webhook_events ev
      where ev.received_at < now() - ${retentionDays} * interval '1 day'
        and not exists (select 1 from webhook_deliveries d where d.event_id = ev.id)
      limit ${BATCH})
    returning id`;
  return gone.length === BATCH || orphans.length === BATCH;
}
