// SQL of the processor connections: Stripe's (one row per workspace, processor_connections) and the other
// processors' signing secrets (processor_secrets).
import type { Sql } from '../../../../shared/db/sql.ts';
import type { Processor } from '../../../../shared/processors/index.ts';

/** What a PUT stores. */
export interface ConnectionState {
  status: string;
  account_id: string | null;
  flags: { charges_enabled: boolean; payouts_enabled: boolean; details_submitted: boolean };
}

export interface ConnectionRow {
  status: string;
  account_id: string | null;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  connected_at: Date | null;
  webhook_secret: string;
}

/** Upsert: the secret is created on the first write and kept; connected_at is set the first time. */
export async function saveConnection(
  sql: Sql,
  workspaceId: number,
  c: ConnectionState,
  newSecret: string,
): Promise<ConnectionRow> {
  const [row] = await sql<ConnectionRow[]>`
    insert into processor_connections as pc (workspace_id, status, account_id, charges_enabled,
      payouts_enabled, details_submitted, webhook_secret, connected_at)
    values (${workspaceId}, ${c.status}, ${c.account_id}, ${c.flags.charges_enabled}, ${c.flags.payouts_enabled},
            ${c.flags.details_submitted}, ${newSecret},
            ${c.status === 'connected' ? sql`now()` : null})
    on conflict (workspace_id) do update set
      status = excluded.status,
      account_id = excluded.account_id,
      charges_enabled = excluded.charges_enabled,
      payouts_enabled = excluded.payouts_enabled,
      details_submitted = excluded.details_submitted,
      connected_at = coalesce(pc.connected_at, excluded.connected_at),
      updated_at = now()
    returning status, account_id, charges_enabled, payouts_enabled, details_submitted, connected_at,
              webhook_secret`;
  return row!;
}

export async function findConnection(sql: Sql, workspaceId: number): Promise<ConnectionRow | undefined> {
  const [row] = await sql<ConnectionRow[]>`
    select status, account_id, charges_enabled, payouts_enabled, details_submitted, connected_at,
           webhook_secret
    from processor_connections where workspace_id = ${workspaceId}`;
  return row;
}

/**
 * A new signing secret; the current one keeps verifying until `graceHours` from now (Stripe's rolling).
 * Null when the workspace has no connection yet (nothing to roll).
 */
export async function rollSecret(
  sql: Sql,
  workspaceId: number,
  newSecret: string,
  graceHours: number,
): Promise<string | null> {
  const [row] = await sql<{ webhook_secret: string }[]>`
    update processor_connections set
      previous_webhook_secret = webhook_secret,
      previous_secret_expires_at = now() + make_interval(hours => ${graceHours}),
      webhook_secret = ${newSecret},
      updated_at = now()
    where workspace_id = ${workspaceId}
    returning webhook_secret`;
  return row?.webhook_secret ?? null;
}

export interface ProcessorEventRow {
  id: string;
  /** The processor_events.processor column: the intake's adapter name (shared/processors/index.ts). */
  processor: Processor;
  event_id: string;
  type: string;
  livemode: boolean;
  received_at: Date;
  outcome: string;
  reason: string | null;
  transaction_id: string | null;
  sale_id: string | null;
  commission_id: string | null;
}

/** One page of a program's processor events, newest first, and how many there are in all. */
export async function listProcessorEvents(
  sql: Sql,
  programId: number,
  outcome: string | null,
  limit: number,
  offset: number,
): Promise<{ rows: ProcessorEventRow[]; total: number }> {
  const where = sql`program_id = ${programId} ${outcome === null ? sql`` : sql`and outcome = ${outcome}`}`;
  const [rows, [count]] = await Promise.all([
    sql<ProcessorEventRow[]>`
      select id, processor, event_id, type, livemode, received_at, outcome, reason, transaction_id, sale_id, commission_id
      from processor_events where ${where}
      order by received_at desc, id desc limit ${limit} offset ${offset}`,
    sql<{ n: number }[]>`select count(*)::int as n from processor_events where ${where}`,
  ]);
  return { rows, total: count!.n };
}

/** A workspace's webhook signing secrets, by processor (Stripe's from processor_connections). */
export async function listSecrets(sql: Sql, workspaceId: number): Promise<Map<string, string>> {
  const rows = await sql<{ processor: string; webhook_secret: string }[]>`
    select 'stripe' as processor, webhook_secret from processor_connections where workspace_id = ${workspaceId}
    union all
    select processor, webhook_secret from processor_secrets where workspace_id = ${workspaceId}`;
  return new Map(rows.map((r) => [r.processor, r.webhook_secret]));
}

/**
 * Stores the secret the processor's dashboard shows. Stripe's is the processor_connections row the singular
 * route manages (created `connected`; a pasted secret replaces the current one and ends a roll's grace).
 */
export async function saveSecret(
  sql: Sql,
  workspaceId: number,
  processor: string,
  secret: string,
): Promise<void> {
  if (processor === 'stripe') {
    await sql`
      insert into processor_connections (workspace_id, status, webhook_secret, connected_at)
      values (${workspaceId}, 'connected', ${secret}, now())
      on conflict (workspace_id) do update set
        webhook_secret = excluded.webhook_secret,
        previous_webhook_secret = null,
        previous_secret_expires_at = null,
        updated_at = now()`;
    return;
  }
  await sql`
    insert into processor_secrets (workspace_id, processor, webhook_secret)
    values (${workspaceId}, ${processor}, ${secret})
    on conflict (workspace_id, processor) do update set
      webhook_secret = excluded.webhook_secret, updated_at = now()`;
}

/** Forgets a processor's secret: its events are refused from then on. */
export async function deleteSecret(sql: Sql, workspaceId: number, processor: string): Promise<void> {
  if (processor === 'stripe')
    await sql`delete from processor_connections where workspace_id = ${workspaceId}`;
  else
    await sql`delete from processor_secrets where workspace_id = ${workspaceId} and processor = ${processor}`;
}
