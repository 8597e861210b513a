// Notifications, written in the caller's transaction: the in-app row (the partner portal's list, the
// dashboard's bell) and, for those that are also mailed, the mail in the outbox of the same transaction.
// `notification_key` is unique: a notification written twice (a redelivered effect, a retried request) is
// stored and mailed once. Partner notifications are mailed to the partner's email; advertiser ones to the
// workspace's active owners and admins.
import type { Sql, Tx } from './sql.ts';
import { queueMail } from './mail.ts';
import type { MailInput } from './mail.ts';

export interface NotificationInput {
  notification_key: string;
  recipient_type: 'partner' | 'advertiser';
  /** The partner it is about (a partner notification's recipient). */
  partner_id: number | null;
  /** The workspace it is addressed to (an advertiser notification's recipient). */
  workspace_id: number | null;
  program_id: number | null;
  kind: string;
  title: string;
  body: string;
  data?: Record<string, unknown>;
  /** Also mail it (CONTRACT "Mail": invites, applications, payouts, refunds, a disabled webhook). */
  mail?: boolean;
}

export interface NotifyContext {
  /** KAFKA_PREFIX: the outbox topic of the mail. */
  kafkaPrefix: string;
  /** PUBLIC_URL: the mail links to where the notification can be read. */
  publicUrl: string;
}

const idOrNull = (v: number | null | undefined): number | null =>
  typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;

/**
 * Inserts the notifications (one statement), and queues a mail for each newly inserted one marked `mail`.
 * Returns how many were new.
 */
export async function notify(
  tx: Tx | Sql,
  ctx: NotifyContext,
  items: readonly NotificationInput[],
): Promise<{ inserted: number; mailed: number }> {
  if (items.length === 0) return { inserted: 0, mailed: 0 };
  // The same key twice in one call is one notification: the first one wins.
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
