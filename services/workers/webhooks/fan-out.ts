// The webhook worker's consumer step: each event of the `webhook-events` topic is stored once (its id: the
// outbox relay may publish it twice) and fanned out, in the same transaction, to the endpoints that want it
// as one delivery row per (event, endpoint). The row's webhook-id is derived from that pair, so it is the
// same whatever delivers it, retries it or replays it. Delivery itself is not done here: the rows are due at
// once and the delivery queue (shared/delivery/queue.ts, over send.ts's HTTP transport) takes them, so a slow
// receiver never holds a Kafka partition up.
import type { Sql } from '../../../shared/db/sql.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../shared/contracts/webhook-events.ts';
import type { WebhookBody, WebhookEvent } from '../../../shared/contracts/webhook-events.ts';
import { isPlainObject } from '../../../shared/json.ts';

/** The event in a message, or why it is not one (dead-lettered). */
export function parseWebhookEvent(bytes: Buffer | null): WebhookEvent | string {
  if (bytes === null) return 'empty message';
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch {
    return 'not JSON';
  }
  if (!isPlainObject(v)) return 'not a JSON object';
  if (typeof v.id !== 'string' || !/^evt_[0-9a-f]{32}$/.test(v.id)) return 'bad id';
  if (!(WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(v.type)) return 'unknown event type';
  const positive = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
  if (!positive(v.workspace_id)) return 'bad workspace_id';
  if (v.program_id !== null && !positive(v.program_id)) return 'bad program_id';
  if (typeof v.created_at !== 'string' || Number.isNaN(Date.parse(v.created_at))) return 'bad created_at';
  if (!isPlainObject(v.data)) return 'bad data';
  if (v.endpoint_id !== undefined && !positive(v.endpoint_id)) return 'bad endpoint_id';
  return v as unknown as WebhookEvent;
}

/** The body sent at every attempt to every endpoint (Standard Webhooks: type, timestamp, data). */
export function bodyOf(e: WebhookEvent): string {
  const body: WebhookBody = { type: e.type, timestamp: new Date(e.created_at).toISOString(), data: e.data };
  return JSON.stringify(body);
}

export interface FanOutResult {
  events: number;
  /** Events already stored (a second publication by the relay, a redelivered chunk). */
  duplicates: number;
  deliveries: number;
}

export function createFanOutStep(deps: { sql: Sql }) {
  const { sql } = deps;
  return async function fanOut(given: WebhookEvent[]): Promise<FanOutResult> {
    const byId = new Map<string, WebhookEvent>();
    for (const e of given) if (!byId.has(e.id)) byId.set(e.id, e);
    const events = [...byId.values()];
    if (events.length === 0) return { events: 0, duplicates: 0, deliveries: 0 };
    return sql.begin(async (tx) => {
      const stored = await tx<{ id: string }[]>`
        insert into webhook_events (id, workspace_id, program_id, type, payload, created_at)
        select * from unnest(
          ${events.map((e) => e.id)}::text[],
          ${events.map((e) => e.workspace_id)}::bigint[],
          ${events.map((e) => e.program_id)}::bigint[],
          ${events.map((e) => e.type)}::text[],
          ${events.map(bodyOf)}::text[],
          ${events.map((e) => e.created_at)}::timestamptz[])
        on conflict (id) do nothing
        returning id`;
      const fresh = stored.map((r) => byId.get(r.id)!);
      if (fresh.length === 0) return { events: 0, duplicates: events.length, deliveries: 0 };
      // The endpoints that want each new event: enabled, of its workspace, subscribed to its type (or '*'),
      // and either for every program or for its program (an event about no program goes to all). A test
      // event goes to the endpoint it names and nowhere else.
      const deliveries = await tx<{ id: string }[]>`
        insert into webhook_deliveries (webhook_id, event_id, endpoint_id, workspace_id, type, next_attempt_at)
        select 'msg_' || substr(encode(sha256(convert_to(v.id || ':' || e.id, 'UTF8')), 'hex'), 1, 32),
               v.id, e.id, v.workspace_id, v.type, now()
        from unnest(
          ${fresh.map((e) => e.id)}::text[],
          ${fresh.map((e) => e.workspace_id)}::bigint[],
          ${fresh.map((e) => e.program_id)}::bigint[],
          ${fresh.map((e) => e.type)}::text[],
          ${fresh.map((e) => e.endpoint_id ?? null)}::bigint[]
        ) as v(id, workspace_id, program_id, type, target)
        join webhook_endpoints e on e.workspace_id = v.workspace_id and e.status = 'enabled'
        where case when v.target is not null then e.id = v.target
                   else ('*' = any(e.events) or v.type = any(e.events))
                        and (e.program_ids is null or v.program_id is null or v.program_id = any(e.program_ids))
              end
        on conflict (event_id, endpoint_id) do nothing
        returning id`;
      return {
        events: fresh.length,
        duplicates: events.length - fresh.length,
        deliveries: deliveries.length,
      };
    });
  };
}
