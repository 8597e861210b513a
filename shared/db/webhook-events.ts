// Recording outbound webhook events: an outbox row per event, in the transaction of the change it reports
// (shared/db/outbox.ts), so a committed change always sends its event and a rolled-back one never does. The
// webhook worker (services/workers/webhooks) fans each one out to the workspace's endpoints that want it.
//
// One row per event, not per (event, endpoint): the hot paths (a chunk of sales) write one row per change
// whatever the number of endpoints, and never read them; which endpoints get what is decided once, by the
// worker, against the endpoints as they are when it arrives. What the hot path does read is one indexed
// question per call: which of these workspaces has an enabled endpoint at all? An installation or a
// workspace without webhooks then writes nothing (bench:sales measures the cost either way: docs/webhooks.md).
import { randomUUID } from 'node:crypto';
import type { Sql, Tx } from './sql.ts';
import { outboxTopic, writeOutbox } from './outbox.ts';
import type { WebhookEvent, WebhookEventType } from '../contracts/webhook-events.ts';
import type { EventData } from '../views/events.ts';

/** An event to record: its `data` is its object's view (shared/views/events.ts says which, per type). */
export type WebhookEventInput<T extends WebhookEventType = WebhookEventType> = {
  [K in T]: {
    type: K;
    workspace_id: number;
    program_id: number | null;
    data: EventData[K];
    /** Only this endpoint receives it (a `webhook.test` event). */
    endpoint_id?: number;
  };
}[T];

/** A new event id: `evt_` and 32 hex digits. */
export const newEventId = (): string => `evt_${randomUUID().replaceAll('-', '')}`;

/**
 * Writes the events to the outbox of `kafkaPrefix`'s deployment, in `tx`, but only those of workspaces with
 * an enabled endpoint (an endpoint created or enabled later does not receive what happened before it).
 * Returns the ids of the events written. `memo` (a command chunk's) keeps the answer about each workspace for
 * the rest of the chunk: the per-command appliers (leads, refunds) then ask once per chunk, not per command.
 */
export async function recordWebhookEvents(
  tx: Tx | Sql,
  kafkaPrefix: string,
  events: readonly WebhookEventInput[],
  memo?: Map<string, unknown>,
): Promise<string[]> {
  if (events.length === 0) return [];
  const key = (ws: number) => `webhooks-listening:${ws}`;
  const listening = new Map<number, boolean>();
  for (const e of events) {
    const known = memo?.get(key(e.workspace_id));
    if (typeof known === 'boolean') listening.set(e.workspace_id, known);
  }
  const unknown = [...new Set(events.map((e) => e.workspace_id))].filter((ws) => !listening.has(ws));
  if (unknown.length > 0) {
    const rows = await tx<{ workspace_id: string }[]>`
      select distinct workspace_id from webhook_endpoints
      where workspace_id = any(${unknown}::bigint[]) and status = 'enabled'`;
    const enabled = new Set(rows.map((r) => Number(r.workspace_id)));
    for (const ws of unknown) {
      listening.set(ws, enabled.has(ws));
      memo?.set(key(ws), enabled.has(ws));
    }
  }
  return write(
    tx,
    kafkaPrefix,
    events.filter((e) => listening.get(e.workspace_id) === true),
  );
}

async function write(tx: Tx | Sql, kafkaPrefix: string, wanted: WebhookEventInput[]): Promise<string[]> {
  if (wanted.length === 0) return [];
  const now = new Date().toISOString();
  const written = wanted.map((e): WebhookEvent => ({ id: newEventId(), created_at: now, ...e }));
  await writeOutbox(
    tx,
    written.map((event) => ({
      topic: outboxTopic(kafkaPrefix, 'webhookEvents'),
      key: String(event.workspace_id),
      payload: event,
    })),
  );
  return written.map((e) => e.id);
}

/**
 * The workspace of each program (programs without one are absent), memoised in `memo` when given (a
 * command chunk's memo: every lead of a chunk asks about the same few programs).
 */
export async function programWorkspaces(
  tx: Tx | Sql,
  programIds: readonly number[],
  memo?: Map<string, unknown>,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const missing: number[] = [];
  for (const id of new Set(programIds)) {
    const known = memo?.get(`workspace-of:${id}`) as number | null | undefined;
    if (known === undefined) missing.push(id);
    else if (known !== null) out.set(id, known);
  }
  if (missing.length > 0) {
    const rows = await tx<{ id: string; workspace_id: string | null }[]>`
      select id, workspace_id from programs where id = any(${missing}::bigint[])`;
    const found = new Map(
      rows.map((r) => [Number(r.id), r.workspace_id === null ? null : Number(r.workspace_id)]),
    );
    for (const id of missing) {
      const ws = found.get(id) ?? null;
      memo?.set(`workspace-of:${id}`, ws);
      if (ws !== null) out.set(id, ws);
    }
  }
  return out;
}
