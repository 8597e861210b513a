// Notification step: stores a chunk of notification effects with the one notification writer
// (shared/db/notifications.ts `notify`: one multi-row statement; notification_key is unique, so a
// redelivered or republished effect is stored once) and, for the new ones marked `mail` (the partner's
// refund notification), queues their mail in the outbox of the same transaction: a stored notification is
// always mailed once, and a rolled-back one never.
import type { Sql } from '../../../shared/db/sql.ts';
import type { Config } from '../../../shared/config.ts';
import type { NotificationEffect } from '../../../shared/contracts/commands.ts';
import { notify } from '../../../shared/db/notifications.ts';
import { isPlainObject } from '../../../shared/json.ts';

export interface InsertNotificationsResult {
  inserted: number;
  /** Effects whose notification_key was already stored or earlier in the chunk. */
  duplicates: number;
  /** Mails queued for the new notifications. */
  mailed: number;
}

export function createInsertNotificationsStep(deps: {
  sql: Sql;
  cfg: Pick<Config, 'kafkaPrefix' | 'publicUrl'>;
}) {
  const { sql, cfg } = deps;

  return async function insertNotifications(
    effects: NotificationEffect[],
  ): Promise<InsertNotificationsResult> {
    if (effects.length === 0) return { inserted: 0, duplicates: 0, mailed: 0 };
    const { inserted, mailed } = await sql.begin((tx) =>
      notify(
        tx,
        { kafkaPrefix: cfg.kafkaPrefix, publicUrl: cfg.publicUrl },
        effects.map((e) => ({
          notification_key: e.notification_key,
          recipient_type: e.recipient_type,
          partner_id: e.partner_id,
          workspace_id: e.workspace_id,
          program_id: e.program_id,
          kind: e.kind,
          title: e.title,
          body: e.body,
          data: isPlainObject(e.data) ? e.data : {},
          mail: e.mail === true,
        })),
      ),
    );
    return { inserted, duplicates: effects.length - inserted, mailed };
  };
}
