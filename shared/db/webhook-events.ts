// Recording outbound webhook events: an outbox row per event, in the transaction of the change it reports
// (shared/db/outbox.ts), so a committed change always sends its event and a rolled-back one never does.
import { randomUUID } from 'node:crypto';
import type { Sql, Tx } from './sql.ts';
import { outboxTopic, writeOutbox } from './outbox.ts';
import type { WebhookEvent, WebhookEventType } from '../contracts/webhook-events.ts';

export interface WebhookEventInput {
  type: WebhookEventType;
  workspace_id: number;
  program_id: number | null;
  data: Record<string, unknown>;
}

/** A new event id: `evt_` and 32 hex digits. */
export const newEventId = (): string => `evt_${randomUUID().replaceAll('-', '')}`;

/** Writes the events to the outbox of `kafkaPrefix`'s deployment, in `tx`. */
export async function recordWebhookEvents(
  tx: Tx | Sql,
  kafkaPrefix: string,
  events: readonly WebhookEventInput[],
): Promise<void> {
  const now = new Date().toISOString();
  await writeOutbox(
    tx,
    events.map((e) => {
      const event: WebhookEvent = { id: newEventId(), created_at: now, ...e };
      return {
        topic: outboxTopic(kafkaPrefix, 'webhookEvents'),
        key: String(e.workspace_id),
        payload: event,
      };
    }),
  );
}
