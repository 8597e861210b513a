// What a chunk of sales reads and writes of the rewards (CONTRACT part four; docs/rewards.md), beside the
// sale rules of apply-sale.ts: the programs' groups (policies, holds), the partners' groups and overrides,
// and the partner–customer pairs (their commissions so far, for stepped rates and recurrence; the group a
// tier rule pinned them to), so that each sale is priced by the one rule (`priceSale`) in its transaction.
// The pairs are read after the chunk's customers are locked, and only sales holding a customer's lock
// write its pairs: what the chunk reads stays true until it writes.
import type { Tx } from '../../../shared/db/sql.ts';
import { storedPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy, PairHistory } from '../../../shared/domain/commission-policy.ts';
import type { Attribution, CustomerRow, PartnerProgramRow, PricingContext } from './attribute.ts';

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

/** A partner–customer pair as the chunk reads and changes it. */
interface Pair {
  customerId: string;
  ppId: string;
  commissions: number;
  firstCommissionAt: Date | null;
  lastSaleAt: Date | null;
  pinnedGroupId: string | null;
  changed: boolean;
}

/** The groups of the programs, once per chunk (memo), deleted ones too (a move may have raced a deletion). */
async function loadGroups(tx: Tx, programIds: number[], memo: Map<string, unknown>): Promise<void> {
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

const pairKey = (customerId: string, ppId: string) => `${customerId}|${ppId}`;

export class ChunkRewards {
  /** The partner-programs of the chunk's customers (and of its codes), with group, lock and own policy. */
  readonly pps: Map<string, ChunkPartnerProgram>;
  private readonly memo: Map<string, unknown>;
  private readonly pairs: Map<string, Pair>;
  /** Customers with a pair (any partner): without one, a customer's first commission is from before pairs. */
  private readonly customersWithPairs: Set<string>;

  private constructor(
    memo: Map<string, unknown>,
    pps: Map<string, ChunkPartnerProgram>,
    pairs: Map<string, Pair>,
  ) {
    this.memo = memo;
    this.pps = pps;
    this.pairs = pairs;
    this.customersWithPairs = new Set([...pairs.values()].map((p) => p.customerId));
  }

  /** Reads what the chunk's sales are priced by; the customers must be locked already. */
  static async load(
    tx: Tx,
    memo: Map<string, unknown>,
    c: { programIds: number[]; ppIds: string[]; customerIds: string[] },
  ): Promise<ChunkRewards> {
    await loadGroups(tx, c.programIds, memo);
    const pps =
      c.ppIds.length === 0
        ? []
        : await tx<(ChunkPartnerProgram & { id: string })[]>`
            select id, partner_id, group_id, group_locked, commission_override
            from partner_programs where id = any(${c.ppIds}::bigint[])`;
    const pairs =
      c.customerIds.length === 0
        ? []
        : await tx<
            {
              customer_id: string;
              partner_program_id: string;
              commissions: number;
              first_commission_at: Date | null;
              last_sale_at: Date | null;
              pinned_group_id: string | null;
            }[]
          >`
            select customer_id, partner_program_id, commissions, first_commission_at, last_sale_at, pinned_group_id
            from partner_customers where customer_id = any(${c.customerIds}::bigint[])`;
    return new ChunkRewards(
      memo,
      new Map(pps.map(({ id, ...r }) => [id, r])),
      new Map(
        pairs.map((p) => [
          pairKey(p.customer_id, p.partner_program_id),
          {
            customerId: p.customer_id,
            ppId: p.partner_program_id,
            commissions: p.commissions,
            firstCommissionAt: p.first_commission_at,
            lastSaleAt: p.last_sale_at,
            pinnedGroupId: p.pinned_group_id,
            changed: false,
          },
        ]),
      ),
    );
  }

  groupById(id: number | string): GroupTerms | undefined {
    return this.memo.get(`group:${id}`) as GroupTerms | undefined;
  }

  /**
   * The pair of the customer and its partner now. A new one has no commissions yet, unless the customer has
   * no pair at all but a first commission: a row written before pairs existed (or by a seeder), whose
   * first commission then counts as the pair's, as it did before.
   */
  private pairOf(customer: CustomerRow): Pair {
    const ppId = customer.partner_program_id!;
    const key = pairKey(customer.id, ppId);
    let p = this.pairs.get(key);
    if (!p) {
      const legacy = customer.first_commission_at !== null && !this.customersWithPairs.has(customer.id);
      p = {
        customerId: customer.id,
        ppId,
        commissions: legacy ? 1 : 0,
        firstCommissionAt: legacy ? customer.first_commission_at : null,
        lastSaleAt: null,
        pinnedGroupId: null,
        changed: false,
      };
      this.pairs.set(key, p);
      this.customersWithPairs.add(customer.id);
    }
    return p;
  }

  /** What attribute() reads: the group whose terms apply (a pinned one first) and the pair's history. */
  readonly pricing: PricingContext = {
    group: (pp, customer) => {
      const pinned = this.pairOf(customer).pinnedGroupId;
      const g = (pinned !== null ? this.groupById(pinned) : undefined) ?? groupOfPp(this, pp);
      return g ? { id: g.id, policy: g.policy } : null;
    },
    pair: (_pp, customer): PairHistory => {
      const p = this.pairOf(customer);
      return { commissions: p.commissions, firstCommissionAt: p.firstCommissionAt };
    },
  };

  /** A sale decided for its customer's partner: the pair counts its sale (and its commission). */
  decided(a: Attribution, saleAt: Date): void {
    const p = this.pairOf(a.customer);
    if (p.lastSaleAt === null || saleAt > p.lastSaleAt) p.lastSaleAt = saleAt;
    if (!a.noCommission) {
      p.commissions += 1;
      p.firstCommissionAt ??= saleAt;
    }
    p.changed = true;
  }

  /**
   * Writes the pairs the chunk changed (one statement, in key order). A pinned group is never written here:
   * only a tier move pins (shared/rewards/moves.ts).
   */
  async savePairs(tx: Tx): Promise<void> {
    const rows = [...this.pairs.values()]
      .filter((p) => p.changed)
      .sort((a, b) => Number(a.customerId) - Number(b.customerId) || Number(a.ppId) - Number(b.ppId));
    if (rows.length === 0) return;
    await tx`
      insert into partner_customers (customer_id, partner_program_id, commissions, first_commission_at, last_sale_at)
      select * from unnest(${rows.map((p) => p.customerId)}::bigint[], ${rows.map((p) => p.ppId)}::bigint[],
                           ${rows.map((p) => p.commissions)}::int[],
                           ${rows.map((p) => p.firstCommissionAt?.toISOString() ?? null)}::timestamptz[],
                           ${rows.map((p) => p.lastSaleAt?.toISOString() ?? null)}::timestamptz[])
      on conflict (customer_id, partner_program_id) do update set
        commissions = excluded.commissions, first_commission_at = excluded.first_commission_at,
        last_sale_at = excluded.last_sale_at`;
  }
}

function groupOfPp(r: ChunkRewards, pp: PartnerProgramRow): GroupTerms | undefined {
  return pp.group_id == null ? undefined : r.groupById(pp.group_id);
}
