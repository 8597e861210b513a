// What a chunk of sales reads and writes of the rewards (CONTRACT part four; docs/rewards.md), beside the
// sale rules of apply-sale.ts: the programs' groups (their policies and holds) and the partners' groups and
// overrides, so that each sale is priced by the one rule (`priceSale`) in the sale's transaction.
import type { Tx } from '../../../shared/db/sql.ts';
import { storedPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CustomerRow, PartnerProgramRow, PricingContext } from './attribute.ts';

/** A group as pricing reads it. */
export interface GroupTerms {
  id: number;
  programId: number;
  /** Its own policy; null: the program's (the default group's always is). */
  policy: CommissionPolicy | null;
  /** null: the program's. */
  holdDays: number | null;
}

/** A partner-program as the chunk reads it. */
export interface ChunkPartnerProgram extends PartnerProgramRow {
  partner_id: string | null;
  group_id: string;
  group_locked: boolean;
  commission_override: unknown;
}

/** The groups of the programs, once per chunk (memo), deleted ones too (a move may have raced a deletion). */
export async function loadGroups(tx: Tx, programIds: number[], memo: Map<string, unknown>): Promise<void> {
  const missing = [...new Set(programIds)].filter((id) => !memo.has(`groups:${id}`));
  if (missing.length === 0) return;
  const rows = await tx<{ id: string; program_id: string; commission: unknown; hold_days: number | null }[]>`
    select id, program_id, commission, hold_days from program_groups where program_id = any(${missing}::bigint[])`;
  for (const id of missing) memo.set(`groups:${id}`, true);
  for (const r of rows) {
    const g: GroupTerms = {
      id: Number(r.id),
      programId: Number(r.program_id),
      policy: r.commission === null ? null : storedPolicy(r.commission),
      holdDays: r.hold_days,
    };
    memo.set(`group:${r.id}`, g);
  }
}

/** The partner-programs of the chunk's customers, with their group, lock and own policy. */
export async function loadPartnerPrograms(tx: Tx, ids: string[]): Promise<Map<string, ChunkPartnerProgram>> {
  if (ids.length === 0) return new Map();
  const rows = await tx<(ChunkPartnerProgram & { id: string })[]>`
    select id, partner_id, group_id, group_locked, commission_override
    from partner_programs where id = any(${ids}::bigint[])`;
  return new Map(rows.map(({ id, ...r }) => [id, r]));
}

/** The pricing context of a chunk: each partner's group (from the memo) and the pair's history. */
export function chunkPricing(memo: Map<string, unknown>): PricingContext & {
  groupById(id: number | string): GroupTerms | undefined;
} {
  const groupById = (id: number | string) => memo.get(`group:${id}`) as GroupTerms | undefined;
  const groupOf = (pp: PartnerProgramRow) => (pp.group_id == null ? undefined : groupById(pp.group_id));
  return {
    groupById,
    group: (pp) => {
      const g = groupOf(pp);
      return g ? { id: g.id, policy: g.policy } : null;
    },
    pair: (_pp, c: CustomerRow) => ({
      commissions: c.first_commission_at === null ? 0 : 1,
      firstCommissionAt: c.first_commission_at,
    }),
  };
}
