// The SQL of webhook endpoints and their delivery log (0016_webhooks.sql). No HTTP, no rules.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';

const ENDPOINT_COLUMNS = `id, workspace_id, url, description, events, program_ids, status, disabled_reason,
  disabled_at, failing_since, previous_secret_expires_at, created_at, updated_at`;

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  events: string[];
  program_ids: string[] | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  webhook_id: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_response: string | null;
  next_attempt_at: Date | null;
  lease_id: string | null;
  created_at: Date;
  delivered_at: Date | null;
  payload: string;
}

export interface AttemptRow {
  attempted_at: Date;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response: string | null;
}

export interface EndpointInput {
  url: string;
  description: string | null;
  events: string[];
  program_ids: number[] | null;
}

/** Wakes the webhook workers at once (a retry asked for, an endpoint enabled) instead of at their poll. */
const wakeWorkers = (tx: Tx) => tx`select pg_notify('svc_webhook_due', '')`;

export async function livePrograms(sql: Sql, workspaceId: number, ids: number[]): Promise<number[]> {
  const rows = await sql<{ id: string }[]>`
    select id from programs where workspace_id = ${workspaceId} and id = any(${ids}::bigint[]) and deleted_at is null`;
  return rows.map((r) => Number(r.id));
}

export async function insertEndpoint(
  sql: Sql,
  workspaceId: number,
  input: EndpointInput,
  secret: string,
): Promise<EndpointRow> {
  const [row] = await sql<EndpointRow[]>`
    insert into webhook_endpoints (workspace_id, url, description, events, program_ids, secret)
    values (${workspaceId}, ${input.url}, ${input.description}, ${input.events}::text[],
            ${input.program_ids}::bigint[], ${secret})
    returning ${sql.unsafe(ENDPOINT_COLUMNS)}`;
  return row!;
}

/** The workspace's endpoints; with `scope`, only those whose programs are all in it (never `null` ones). */
export async function endpointsOf(
  sql: Sql,
  workspaceId: number,
  scope: number[] | null,
): Promise<EndpointRow[]> {
  return sql<EndpointRow[]>`
    select ${sql.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints where workspace_id = ${workspaceId}
    ${scope === null ? sql`` : sql`and program_ids is not null and program_ids <@ ${scope}::bigint[]`}
    order by id`;
}

export async function findEndpoint(sql: Sql, id: number): Promise<EndpointRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined;
  const [row] = await sql<EndpointRow[]>`
    select ${sql.unsafe(ENDPOINT_COLUMNS)} from webhook_endpoints where id = ${id}`;
  return row;
}

/** Changes the fields given (the caller's transaction: operations.ts resumes deliveries in it on enable). */
export async function updateEndpoint(
  tx: Tx,
  id: number,
  change: Partial<EndpointInput> & { status?: 'enabled' | 'disabled' },
): Promise<EndpointRow | undefined> {
  const [row] = await tx<EndpointRow[]>`
    update webhook_endpoints set
      url = coalesce(${change.url ?? null}, url),
      description = case when ${change.description !== undefined} then ${change.description ?? null} else description end,
      events = coalesce(${change.events ?? null}::text[], events),
      program_ids = case when ${change.program_ids !== undefined} then ${change.program_ids ?? null}::bigint[]
                         else program_ids end,
      status = coalesce(${change.status ?? null}, status),
      disabled_reason = case when ${change.status ?? null}::text = 'disabled' and status = 'enabled' then 'manual'
                             when ${change.status ?? null}::text = 'enabled' then null else disabled_reason end,
      disabled_at = case when ${change.status ?? null}::text = 'disabled' and status = 'enabled' then now()
                         when ${change.status ?? null}::text = 'enabled' then null else disabled_at end,
      failing_since = case when ${change.status ?? null}::text = 'enabled' and status = 'disabled' then null
                           else failing_since end,
      updated_at = now()
    where id = ${id}
    returning ${tx.unsafe(ENDPOINT_COLUMNS)}`;
  return row;
}

/** An enabled endpoint's waiting deliveries are due at once (the workers are woken at commit). */
export async function resumeDeliveries(tx: Tx, endpointId: number): Promise<void> {
  await tx`
    update webhook_deliveries set next_attempt_at = now()
    where endpoint_id = ${endpointId} and status = 'pending' and lease_id is null and next_attempt_at > now()`;
  await wakeWorkers(tx);
}

export async function deleteEndpoint(sql: Sql, id: number): Promise<boolean> {
  const rows = await sql`delete from webhook_endpoints where id = ${id} returning id`;
  return rows.length > 0;
}

/** The new secret signs from now on; the current one keeps signing until `overlapHours` from now. */
export async function rotateSecret(
  sql: Sql,
  id: number,
  secret: string,
  overlapHours: number,
): Promise<EndpointRow | undefined> {
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret = secret,
      previous_secret_expires_at = now() + ${overlapHours} * interval '1 hour',
      secret = ${secret},
      updated_at = now()
    where id = ${id}
    returning ${sql.unsafe(ENDPOINT_COLUMNS)}`;
  return row;
}

const DELIVERY_COLUMNS = `d.id, d.endpoint_id, d.event_id, d.webhook_id, d.type, d.status, d.attempts,
  d.last_status_code, d.last_error, d.last_response, d.next_attempt_at, d.lease_id, d.created_at, d.delivered_at,
  ev.payload`;

export async function deliveriesOf(
  sql: Sql,
  endpointId: number,
  opts: { status?: string; limit: number; offset: number },
): Promise<DeliveryRow[]> {
  return sql<DeliveryRow[]>`
    select ${sql.unsafe(DELIVERY_COLUMNS)}
    from webhook_deliveries d join webhook_events ev on ev.id = d.event_id
    where d.endpoint_id = ${endpointId} ${opts.status ? sql`and d.status = ${opts.status}` : sql``}
    order by d.id desc
    limit ${opts.limit} offset ${opts.offset}`;
}

export async function findDelivery(db: Sql | Tx, id: number): Promise<DeliveryRow | undefined> {
  if (!Number.isSafeInteger(id)) return undefined;
  const [row] = await db<DeliveryRow[]>`
    select ${db.unsafe(DELIVERY_COLUMNS)}
    from webhook_deliveries d join webhook_events ev on ev.id = d.event_id where d.id = ${id}`;
  return row;
}

export async function attemptsOf(sql: Sql, deliveryId: number): Promise<AttemptRow[]> {
  return sql<AttemptRow[]>`
    select attempted_at, duration_ms, status_code, error, response from webhook_attempts
    where delivery_id = ${deliveryId} order by id`;
}

/**
 * A retry the advertiser asked for: a pending delivery is due at once (its schedule goes on after); a
 * delivered or failed one gets one more attempt (`once`), and ends again after it. An attempt in flight
 * (leased) is left alone. The caller's transaction reads the row after it (operations.ts).
 */
export async function markForRetry(tx: Tx, id: number): Promise<void> {
  await tx`
    update webhook_deliveries set
      once = case when status = 'pending' then once else true end,
      status = 'pending',
      next_attempt_at = now()
    where id = ${id} and lease_id is null`;
  await wakeWorkers(tx);
}
