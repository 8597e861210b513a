// Notification step: inserts a chunk of notifications with one multi-row statement (unnest of one array
// per column, so the parameter count does not grow with the chunk); notification_key is
// unique, so a redelivered or republished effect (`on conflict do nothing`) is stored once.
import type { Sql } from '../../../shared/db/sql.ts';
import type { NotificationEffect } from '../../../shared/contracts/commands.ts';
import { isPlainObject } from '../../../shared/json.ts';

export interface InsertNotificationsResult {
  inserted: number;
  /** Effects whose notification_key was already stored or earlier in the chunk. */
  duplicates: number;
}

const idOrNull = (v: unknown): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;

export function createInsertNotificationsStep(deps: { sql: Sql }) {
  const { sql } = deps;

  return async function insertNotifications(
    effects: NotificationEffect[],
  ): Promise<InsertNotificationsResult> {
    if (effects.length === 0) return { inserted: 0, duplicates: 0 };
    // The same key twice in a chunk (a republished effect) is one notification: the first one wins.
    const byKey = new Map<string, NotificationEffect>();
    for (const e of effects) if (!byKey.has(e.notification_key)) byKey.set(e.notification_key, e);
    const unique = [...byKey.values()];

    // data travels as JSON text and is cast per row: a jsonb[] parameter would have postgres.js encode
    // each element as JSON a second time.
    const got = await sql`
      insert into notifications
        (notification_key, recipient_type, partner_id, workspace_id, program_id, kind, title, body, data)
      select key, recipient, partner, workspace, program, kind, title, body, data::jsonb
      from unnest(
        ${unique.map((e) => e.notification_key)}::text[],
        ${unique.map((e) => e.recipient_type)}::text[],
        ${unique.map((e) => idOrNull(e.partner_id))}::bigint[],
        ${unique.map((e) => idOrNull(e.workspace_id))}::bigint[],
        ${unique.map((e) => e.program_id)}::bigint[],
        ${unique.map((e) => e.kind)}::text[],
        ${unique.map((e) => e.title)}::text[],
        ${unique.map((e) => e.body)}::text[],
        ${unique.map((e) => JSON.stringify(isPlainObject(e.data) ? e.data : {}))}::text[]
      ) as v(key, recipient, partner, workspace, program, kind, title, body, data)
      on conflict (notification_key) do nothing
      returning id`;
    const inserted = got.length;
    return { inserted, duplicates: effects.length - inserted };
  };
}
