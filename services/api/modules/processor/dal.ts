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
