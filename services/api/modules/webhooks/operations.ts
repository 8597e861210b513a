// The endpoint and delivery writes that take more than one statement, one transaction each (the
// unit-of-work rule: docs/architecture.md): the SQL is dal.ts's, the event a test sends is recorded through
// the one webhook-event writer (shared/db/webhook-events.ts), and the delivery workers are woken at commit.
import type { Sql } from '../../../../shared/db/sql.ts';
import { recordWebhookEvents } from '../../../../shared/db/webhook-events.ts';
import * as dal from './dal.ts';
import type { DeliveryRow, EndpointInput, EndpointRow } from './dal.ts';
import { webhookTestView } from '../../../../shared/views/webhook-test.ts';

/** Changes an endpoint; enabling it makes its waiting deliveries due at once, in the same transaction. */
export function updateEndpoint(
  sql: Sql,
  id: number,
  change: Partial<EndpointInput> & { status?: 'enabled' | 'disabled' },
): Promise<EndpointRow | undefined> {
  return sql.begin(async (tx) => {
    const row = await dal.updateEndpoint(tx, id, change);
    if (row && change.status === 'enabled') await dal.resumeDeliveries(tx, id);
    return row;
  });
}

export function enableEndpoint(sql: Sql, id: number): Promise<EndpointRow | undefined> {
  return updateEndpoint(sql, id, { status: 'enabled' });
}

/** One more attempt of a delivery (dal.markForRetry says when), and the delivery as it is then. */
export function retryDelivery(sql: Sql, id: number): Promise<DeliveryRow | undefined> {
  return sql.begin(async (tx) => {
    await dal.markForRetry(tx, id);
    return dal.findDelivery(tx, id);
  });
}

/**
 * A `webhook.test` event for this endpoint only, recorded like any event (signed, retried, logged); its
 * id, or undefined when the endpoint was disabled meanwhile and nothing was recorded.
 */
export async function sendTestEvent(
  sql: Sql,
  kafkaPrefix: string,
  endpoint: Pick<EndpointRow, 'id' | 'workspace_id'>,
): Promise<string | undefined> {
  const [eventId] = await sql.begin((tx) =>
    recordWebhookEvents(tx, kafkaPrefix, [
      {
        type: 'webhook.test',
        workspace_id: Number(endpoint.workspace_id),
        program_id: null,
        endpoint_id: Number(endpoint.id),
        data: webhookTestView(Number(endpoint.id)),
      },
    ]),
  );
  return eventId;
}
