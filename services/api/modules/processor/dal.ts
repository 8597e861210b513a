// SQL of the processor connection (one row per workspace).
import type { Sql } from '../../../../shared/db/sql.ts';

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
      select id, event_id, type, livemode, received_at, outcome, reason, transaction_id, sale_id, commission_id
      from processor_events where ${where}
      order by received_at desc, id desc limit ${limit} offset ${offset}`,
    sql<{ n: number }[]>`select count(*)::int as n from processor_events where ${where}`,
  ]);
  return { rows, total: count!.n };
}
