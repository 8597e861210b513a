// The notification worker's step: the one writer of notification rows (docs/architecture.md "One
// notification path"). A chunk of the `notifications` topic (outbox rows, shared/db/notifications.ts) in one
// transaction: the in-app rows with one statement (`notification_key` is unique, so a republished or
// re-queued notification is stored once) and, for the new ones marked `mail`, their mail in the outbox of
// the same transaction: a stored notification is mailed once, and a rolled-back one never. Partner
// notifications are mailed to the partner's email; advertiser ones to the workspace's active owners and
// admins.
import type { Sql, Tx } from '../../../shared/db/sql.ts';
import type { Config } from '../../../shared/config.ts';
import type { NotificationEffect } from '../../../shared/contracts/commands.ts';
import type { NotificationInput } from '../../../shared/db/notifications.ts';
import { queueMail } from '../../../shared/db/mail.ts';
import type { MailInput } from '../../../shared/db/mail.ts';
import { isPlainObject } from '../../../shared/json.ts';

export interface InsertNotificationsResult {
  inserted: number;
  /** Effects whose notification_key was already stored or earlier in the chunk. */
  duplicates: number;
  /** Mails queued for the new notifications. */
  mailed: number;
}

export interface StoreContext {
  /** KAFKA_PREFIX: the outbox topic of the mail. */
  kafkaPrefix: string;
  /** PUBLIC_URL: the mail links to where the notification can be read. */
  publicUrl: string;
}

const idOrNull = (v: number | null | undefined): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;

/**
 * Inserts the notifications (one statement), and queues a mail for each newly inserted one marked `mail`.
 * Returns how many were new and how many mails were queued.
 */
export async function storeNotifications(
  tx: Tx,
  ctx: StoreContext,
  items: readonly NotificationInput[],
): Promise<{ inserted: number; mailed: number }> {
  if (items.length === 0) return { inserted: 0, mailed: 0 };
  // The same key twice in one chunk is one notification: the first one wins.
  const byKey = new Map<string, NotificationInput>();
  for (const n of items) if (!byKey.has(n.notification_key)) byKey.set(n.notification_key, n);
  const unique = [...byKey.values()];
  // data travels as JSON text and is cast per row: a jsonb[] parameter would have postgres.js encode
  // each element as JSON a second time.
  const inserted = await tx<{ id: string; notification_key: string }[]>`
    insert into notifications
      (notification_key, recipient_type, partner_id, workspace_id, program_id, kind, title, body, data)
    select key, recipient, partner, workspace, program, kind, title, body, data::jsonb
    from unnest(
      ${unique.map((n) => n.notification_key)}::text[],
      ${unique.map((n) => n.recipient_type)}::text[],
      ${unique.map((n) => idOrNull(n.partner_id))}::bigint[],
      ${unique.map((n) => idOrNull(n.workspace_id))}::bigint[],
      ${unique.map((n) => idOrNull(n.program_id))}::bigint[],
      ${unique.map((n) => n.kind)}::text[],
      ${unique.map((n) => n.title)}::text[],
      ${unique.map((n) => n.body)}::text[],
      ${unique.map((n) => JSON.stringify(n.data ?? {}))}::text[]
    ) as v(key, recipient, partner, workspace, program, kind, title, body, data)
    on conflict (notification_key) do nothing
    returning id, notification_key`;
  const toMail = inserted
    .map((r) => ({ id: r.id, n: byKey.get(r.notification_key)! }))
    .filter((x) => x.n.mail === true);
  if (toMail.length === 0) return { inserted: inserted.length, mailed: 0 };

  const partnerIds = [...new Set(toMail.map((x) => idOrNull(x.n.partner_id)).filter((v) => v !== null))];
  const workspaceIds = [
    ...new Set(
      toMail
        .filter((x) => x.n.recipient_type === 'advertiser')
        .map((x) => idOrNull(x.n.workspace_id))
        .filter((v) => v !== null),
    ),
  ];
  const partners = partnerIds.length
    ? await tx<{ id: string; email: string; workspace_id: string | null }[]>`
        select id, email, workspace_id from partners where id = any(${partnerIds}::bigint[])`
    : [];
  const managers = workspaceIds.length
    ? await tx<{ workspace_id: string; email: string }[]>`
        select m.workspace_id, u.email from memberships m join users u on u.id = m.user_id
        where m.workspace_id = any(${workspaceIds}::bigint[]) and m.status = 'active'
          and m.role in ('owner', 'admin')
        order by m.workspace_id, u.id`
    : [];
  const partnerById = new Map(partners.map((p) => [Number(p.id), p]));
  const mails: MailInput[] = [];
  for (const { id, n } of toMail) {
    const data = { title: n.title, body: n.body };
    if (n.recipient_type === 'partner') {
      const p = partnerById.get(idOrNull(n.partner_id) ?? 0);
      if (!p) continue;
      mails.push({
        id: `notification:${id}`,
        to: p.email,
        template: 'notification',
        data: { ...data, url: `${ctx.publicUrl}/partner/notifications` },
        workspace_id: p.workspace_id === null ? null : Number(p.workspace_id),
      });
    } else {
      const ws = idOrNull(n.workspace_id);
      for (const m of managers.filter((x) => Number(x.workspace_id) === ws)) {
        mails.push({
          id: `notification:${id}:${m.email.toLowerCase()}`,
          to: m.email,
          template: 'notification',
          data: { ...data, url: `${ctx.publicUrl}/notifications` },
          workspace_id: ws,
        });
      }
    }
  }
  await queueMail(tx, ctx.kafkaPrefix, mails);
  return { inserted: inserted.length, mailed: mails.length };
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
      storeNotifications(
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
