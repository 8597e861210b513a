// Moving partners between groups (CONTRACT part four "Groups" and "Tiers"; docs/rewards.md): the one writer
// of partner_programs.group_id, for the advertiser's moves (by hand, a deleted group's partners) and the
// tier rules' (in the transaction of the sale or refund that crossed a threshold). Each move is conditional
// on the group the caller saw, so two transactions that decide the same move make it once; each move made
// writes its history row and, in the same transaction, its `partner.group_changed` event (outbox) and, for
// a tier move, the partner's notification and mail ("You moved up to <group>").
import { boolArray } from '../db/sql.ts';
import type { Sql, Tx } from '../db/sql.ts';
import { queueNotifications } from '../db/notifications.ts';
import type { NotificationInput } from '../db/notifications.ts';
import { recordWebhookEvents } from '../db/webhook-events.ts';
import type { WebhookEventInput } from '../db/webhook-events.ts';
import { groupChangeView } from '../views/group-change.ts';

export type MoveReason = 'tier_rule' | 'manual' | 'group_deleted';

export interface Move {
  ppId: number;
  /** The group the caller saw the partner in: the move happens only if it still is there. */
  fromGroupId: number;
  toGroupId: number;
  reason: MoveReason;
  ruleId: number | null;
  /** With a tier rule whose carry_existing_customers is false: the partner's customers so far stay priced by the group it leaves. */
  pinCustomers?: boolean;
}

export interface MadeMove extends Move {
  id: number;
  partnerId: number;
  programId: number;
  workspaceId: number | null;
  toGroupName: string;
  programName: string;
  at: Date;
}

export interface MoveContext {
  /** KAFKA_PREFIX: the outbox topics. */
  kafkaPrefix: string;
  /** A command chunk's memo (which workspaces listen to webhooks). */
  memo?: Map<string, unknown>;
}

/** The partner's notice of a tier move (mailed). */
export function movedUpNotice(m: MadeMove): NotificationInput {
  return {
    notification_key: `group_changed:${m.id}`,
    recipient_type: 'partner',
    partner_id: m.partnerId,
    workspace_id: null,
    program_id: m.programId,
    kind: 'group_changed',
    title: `You moved up to ${m.toGroupName}`,
    body: `Your sales for ${m.programName} moved you up to ${m.toGroupName}: sales from now on earn its rate.`,
    data: {
      partner_id: m.partnerId,
      program_id: m.programId,
      from_group_id: m.fromGroupId,
      to_group_id: m.toGroupId,
      rule_id: m.ruleId,
    },
    mail: true,
  };
}

/**
 * Makes the moves whose partner is still in `fromGroupId` (and, for a tier rule, not locked), in `tx`;
 * returns those made. At most one move per partner-program per call (a second move of the same partner, up
 * the next rule, is the next call's). Locks the partner-programs it moves, in id order.
 */
export async function movePartners(tx: Tx, ctx: MoveContext, given: readonly Move[]): Promise<MadeMove[]> {
  if (given.length === 0) return [];
  // The groups moved to, share-locked in id order: a group being deleted (which holds its row) is waited
  // for, and then seen deleted; a move to it is not made.
  const live = new Set(
    (
      await tx<{ id: string }[]>`
        select id from program_groups
        where id = any(${[...new Set(given.map((m) => m.toGroupId))]}::bigint[]) and deleted_at is null
        order by id for share`
    ).map((r) => Number(r.id)),
  );
  const moves = given.filter((m) => live.has(m.toGroupId));
  if (moves.length === 0) return [];
  const sorted = [...moves].sort((a, b) => a.ppId - b.ppId);
  const rows = await tx<
    {
      pp: string;
      partner_id: string;
      program_id: string;
      workspace_id: string | null;
      to_name: string;
      program_name: string;
      i: number;
    }[]
  >`
    with v as (
      select * from unnest(${sorted.map((m) => m.ppId)}::bigint[], ${sorted.map((m) => m.fromGroupId)}::bigint[],
                           ${sorted.map((m) => m.toGroupId)}::bigint[],
                           ${boolArray(sorted.map((m) => m.reason === 'tier_rule'))}::text[])
        with ordinality as v(pp, from_group, to_group, by_rule, i)
    ), moved as (
      update partner_programs pp set group_id = v.to_group, updated_at = now()
      from v
      where pp.id = v.pp and pp.group_id = v.from_group and not (v.by_rule::boolean and pp.group_locked)
      returning pp.id as pp, pp.partner_id, pp.program_id, v.to_group, v.i
    )
    select m.pp, m.partner_id, m.program_id, pr.workspace_id, g.name as to_name, pr.name as program_name,
           m.i::int as i
    from moved m join program_groups g on g.id = m.to_group join programs pr on pr.id = m.program_id
    order by m.i`;
  if (rows.length === 0) return [];
  const made = rows.map((r) => ({ ...sorted[r.i - 1]!, r }));
  const inserted = await tx<{ id: string; pp: string; created_at: Date }[]>`
    insert into partner_group_changes (partner_program_id, from_group_id, to_group_id, reason, rule_id)
    select * from unnest(${made.map((m) => m.ppId)}::bigint[], ${made.map((m) => m.fromGroupId)}::bigint[],
                         ${made.map((m) => m.toGroupId)}::bigint[], ${made.map((m) => m.reason)}::text[],
                         ${made.map((m) => m.ruleId)}::bigint[])
    returning id, partner_program_id as pp, created_at`;
  const historyOf = new Map(inserted.map((h) => [Number(h.pp), h]));
  // A rule that does not carry the partner's existing customers: each customer who earned a commission with
  // the partner so far keeps the rate of the group it leaves (one that is pinned already keeps its own).
  const pins = made.filter((m) => m.pinCustomers);
  if (pins.length > 0) {
    await tx`
      update partner_customers pc set pinned_group_id = v.from_group
      from unnest(${pins.map((m) => m.ppId)}::bigint[], ${pins.map((m) => m.fromGroupId)}::bigint[])
        as v(pp, from_group)
      where pc.partner_program_id = v.pp and pc.commissions > 0 and pc.pinned_group_id is null`;
  }
  const out: MadeMove[] = made.map((m) => ({
    ppId: m.ppId,
    fromGroupId: m.fromGroupId,
    toGroupId: m.toGroupId,
    reason: m.reason,
    ruleId: m.ruleId,
    pinCustomers: m.pinCustomers,
    id: Number(historyOf.get(m.ppId)!.id),
    partnerId: Number(m.r.partner_id),
    programId: Number(m.r.program_id),
    workspaceId: m.r.workspace_id === null ? null : Number(m.r.workspace_id),
    toGroupName: m.r.to_name,
    programName: m.r.program_name,
    at: historyOf.get(m.ppId)!.created_at,
  }));
  const events: WebhookEventInput[] = out.flatMap((m) =>
    m.workspaceId === null
      ? []
      : [
          {
            type: 'partner.group_changed' as const,
            workspace_id: m.workspaceId,
            program_id: m.programId,
            data: groupChangeView(m),
          },
        ],
  );
  await recordWebhookEvents(tx, ctx.kafkaPrefix, events, ctx.memo);
  await queueNotifications(
    tx,
    ctx.kafkaPrefix,
    out.filter((m) => m.reason === 'tier_rule').map(movedUpNotice),
  );
  return out;
}

/** The group a partner-program is in, read without a lock (the caller's move is conditional on it). */
export async function groupOf(db: Sql | Tx, ppId: number): Promise<number | undefined> {
  const [row] = await db<{ group_id: string }[]>`select group_id from partner_programs where id = ${ppId}`;
  return row ? Number(row.group_id) : undefined;
}
