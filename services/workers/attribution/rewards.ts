// What a chunk of sales reads and writes of the rewards (CONTRACT part four; docs/rewards.md), beside the
// sale rules of apply-sale.ts: the programs' groups (policies, holds), the partners' groups and overrides,
// the partner–customer pairs (their commissions so far, for stepped rates and recurrence; the group a tier
// rule pinned them to), and the figures tier rules read, so that each sale is priced by the one rule
// (`priceSale`) and a partner crossing a threshold moves, in the sale's transaction.
// Locks, after the chunk's customers (in id order): the metric rows of the partners of programs with a
// ladder, in key order (shared/rewards/metrics.ts), before anything is decided: concurrent chunks of one
// partner decide one after the other, so a threshold is crossed once and later sales see the move. The pairs
// are read under the customers' locks, and only sales holding a customer's lock write its pairs; a move's
// pinning writes a partner's pairs under that partner's metric lock.
import type { Tx } from '../../../shared/db/sql.ts';
import type { SaleCommand } from '../../../shared/contracts/commands.ts';
import { storedPolicy } from '../../../shared/domain/commission-policy.ts';
import type { CommissionPolicy, PairHistory } from '../../../shared/domain/commission-policy.ts';
import { LIFETIME, monthOf, periodOf, tierMoves, zeroMetrics } from '../../../shared/domain/tiers.ts';
import type { Metrics, TierRule, TierWindow } from '../../../shared/domain/tiers.ts';
import { addMetrics, lockMetrics, metricKey, tierRulesOf } from '../../../shared/rewards/metrics.ts';
import type { MetricKey } from '../../../shared/rewards/metrics.ts';
import { movePartners } from '../../../shared/rewards/moves.ts';
import type { Move, MoveContext } from '../../../shared/rewards/moves.ts';
import { bonusCounts, bonusPeriodOf, contribution } from '../../../shared/domain/bonuses.ts';
import type { Bonus } from '../../../shared/domain/bonuses.ts';
import { addProgress, bonusesOf, markAwarded } from '../../../shared/rewards/bonuses.ts';
import type { ProgressKey } from '../../../shared/rewards/bonuses.ts';
import * as lifecycle from '../../../shared/commissions/lifecycle.ts';
import type { BonusAward } from '../../../shared/commissions/lifecycle.ts';
import { nothing } from '../../../shared/commissions/caused.ts';
import type { Caused } from '../../../shared/commissions/caused.ts';
import type { LedgerEffect } from '../../../shared/contracts/commands.ts';
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
  program_id: string;
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

/** A partner's figures in one period: as locked (null: not read, only added to) and what the chunk adds. */
interface MetricRow extends MetricKey {
  locked: Metrics | null;
  delta: Metrics;
}

const WINDOW_EXPIRED = 'Attribution window expired';

/** The bonus commissions a chunk made: what they caused, and each one's credit by the sale that reached it. */
export interface Awarded {
  caused: Caused;
  credits: Map<string, LedgerEffect[]>;
}
export const noAwards = (): Awarded => ({ caused: nothing(), credits: new Map() });

/** A bonus's progress the chunk adds, with the last sale that added to it (whose answer carries the credit). */
interface Progress extends ProgressKey {
  delta: number;
  bonus: Bonus;
  award: Omit<BonusAward, 'bonus_id' | 'bonus_period' | 'amount_cents'>;
  transactionId: string;
}

export class ChunkRewards {
  /** The partner-programs of the chunk's customers (and of its codes), with group, lock and own policy. */
  readonly pps: Map<string, ChunkPartnerProgram>;
  private readonly memo: Map<string, unknown>;
  private readonly pairs: Map<string, Pair>;
  /** The programs' ladders (empty: none). */
  private readonly rules: Map<number, TierRule[]>;
  private readonly metrics = new Map<string, MetricRow>();
  /** The tier moves the chunk decided, in order. */
  private readonly moves: Move[] = [];
  /** The programs' live bonuses (empty: none). */
  private readonly bonuses: Map<number, Bonus[]>;
  private readonly progress = new Map<string, Progress>();
  /** Customers with a pair (any partner): without one, a customer's first commission is from before pairs. */
  private readonly customersWithPairs: Set<string>;

  private constructor(
    memo: Map<string, unknown>,
    pps: Map<string, ChunkPartnerProgram>,
    pairs: Map<string, Pair>,
    rules: Map<number, TierRule[]>,
    locked: Map<string, Metrics>,
    keys: MetricKey[],
    bonuses: Map<number, Bonus[]>,
  ) {
    this.memo = memo;
    this.pps = pps;
    this.pairs = pairs;
    this.rules = rules;
    this.bonuses = bonuses;
    for (const k of keys) {
      const key = metricKey(k);
      this.metrics.set(key, { ...k, locked: locked.get(key) ?? zeroMetrics(), delta: zeroMetrics() });
    }
    this.customersWithPairs = new Set([...pairs.values()].map((p) => p.customerId));
  }

  /**
   * Reads what the chunk's sales are priced by and, for programs with a ladder, locks their partners'
   * figures of the periods the sales fall in; the customers must be locked already.
   */
  static async load(
    tx: Tx,
    memo: Map<string, unknown>,
    c: { sales: Pick<SaleCommand, 'program_id' | 'ts'>[]; ppIds: string[]; customerIds: string[] },
  ): Promise<ChunkRewards> {
    const programIds = c.sales.map((s) => s.program_id);
    await loadGroups(tx, programIds, memo);
    const rules = await tierRulesOf(tx, programIds, memo);
    const since = new Date(Math.min(...c.sales.map((x) => x.ts), Date.now()));
    const bonuses = await bonusesOf(tx, programIds, since, memo);
    const pps =
      c.ppIds.length === 0
        ? []
        : await tx<(ChunkPartnerProgram & { id: string })[]>`
            select id, program_id, partner_id, group_id, group_locked, commission_override
            from partner_programs where id = any(${c.ppIds}::bigint[])`;
    const keys: MetricKey[] = [];
    for (const pp of pps) {
      const programId = Number(pp.program_id);
      if ((rules.get(programId) ?? []).length === 0) continue;
      const months = c.sales.filter((s) => s.program_id === programId).map((s) => monthOf(new Date(s.ts)));
      for (const period of new Set([LIFETIME, ...months])) keys.push({ ppId: pp.id, period });
    }
    const locked = await lockMetrics(tx, keys);
    // A concurrent chunk that held these rows may have moved the partners meanwhile: their groups as they
    // are now that the rows are ours (a new statement sees what committed before the locks were granted).
    const climbers = [...new Set(keys.map((k) => k.ppId))];
    if (climbers.length > 0) {
      const now = await tx<{ id: string; group_id: string; group_locked: boolean }[]>`
        select id, group_id, group_locked from partner_programs where id = any(${climbers}::bigint[])`;
      for (const r of now) {
        const pp = pps.find((p) => p.id === r.id)!;
        pp.group_id = r.group_id;
        pp.group_locked = r.group_locked;
      }
    }
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
      rules,
      locked,
      keys,
      bonuses,
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

  private metricOf(ppId: string, period: string): MetricRow {
    const key = metricKey({ ppId, period });
    let m = this.metrics.get(key);
    if (!m) {
      m = { ppId, period, locked: null, delta: zeroMetrics() };
      this.metrics.set(key, m);
    }
    return m;
  }

  /** A partner's figures in a period now: as locked plus what the chunk added. */
  private valueOf(ppId: string, period: string): Metrics {
    const m = this.metricOf(ppId, period);
    const base = m.locked ?? zeroMetrics();
    return {
      sales_cents: base.sales_cents + m.delta.sales_cents,
      customers: base.customers + m.delta.customers,
      commission_cents: base.commission_cents + m.delta.commission_cents,
    };
  }

  /**
   * A sale decided for its customer's partner, after it was priced: the pair counts its sale (and its
   * commission), the partner's figures grow (a sale past the cookie window counts for nobody's), and a
   * partner of a program with a ladder who reached a threshold moves, for the chunk's later sales at once.
   */
  decided(
    a: Attribution,
    cmd: Pick<SaleCommand, 'program_id' | 'ts' | 'amount_cents' | 'transaction_id'>,
    sale: { firstPurchase: boolean; program: { currency: string; hold_days: number } },
  ): void {
    const saleAt = new Date(cmd.ts);
    const p = this.pairOf(a.customer);
    const before = p.lastSaleAt;
    if (p.lastSaleAt === null || saleAt > p.lastSaleAt) p.lastSaleAt = saleAt;
    if (!a.noCommission) {
      p.commissions += 1;
      p.firstCommissionAt ??= saleAt;
    }
    p.changed = true;
    if (a.noCommission === WINDOW_EXPIRED) return;
    const ppId = a.customer.partner_program_id!;
    for (const period of [LIFETIME, monthOf(saleAt)]) {
      const d = this.metricOf(ppId, period).delta;
      d.sales_cents += cmd.amount_cents;
      d.commission_cents += a.noCommission ? 0 : a.amount;
      // A customer counts once per window: its first sale with the partner in it.
      const start = period === LIFETIME ? null : new Date(`${period}T00:00:00Z`);
      if (before === null || (start !== null && before < start)) d.customers += 1;
    }
    this.towardBonuses(a, cmd, sale, before);
    this.climb(ppId, cmd.program_id, saleAt);
  }

  /** The sale's part in the program's bonuses (those of the group that priced it, in their window). */
  private towardBonuses(
    a: Attribution,
    cmd: Pick<SaleCommand, 'program_id' | 'ts' | 'amount_cents' | 'transaction_id'>,
    sale: { firstPurchase: boolean; program: { currency: string; hold_days: number } },
    lastSaleBefore: Date | null,
  ): void {
    const at = new Date(cmd.ts);
    const ppId = a.customer.partner_program_id!;
    for (const b of this.bonuses.get(cmd.program_id) ?? []) {
      if (!bonusCounts(b, a.groupId, at)) continue;
      const n = contribution(b, {
        amountCents: cmd.amount_cents,
        at,
        firstPurchase: sale.firstPurchase,
        lastSaleBefore,
      });
      if (n === 0) continue;
      const key: ProgressKey = { bonusId: b.id, ppId, period: bonusPeriodOf(b, at) };
      const k = `${key.bonusId}|${key.ppId}|${key.period}`;
      const group = a.groupId === null ? undefined : this.groupById(a.groupId);
      const p = this.progress.get(k) ?? { ...key, delta: 0, bonus: b, transactionId: '', award: undefined! };
      p.delta += n;
      p.transactionId = cmd.transaction_id;
      p.award = {
        program_id: cmd.program_id,
        partner_id: a.partnerId,
        partner_program_id: ppId,
        currency: sale.program.currency,
        group_id: a.groupId,
        at_ts: cmd.ts,
        hold_days: group?.holdDays ?? sale.program.hold_days,
      };
      this.progress.set(k, p);
    }
  }

  /** The partner's moves up the ladder, if its figures now reach a threshold (not for a locked partner). */
  private climb(ppId: string, programId: number, at: Date): void {
    const rules = this.rules.get(programId) ?? [];
    const pp = this.pps.get(ppId);
    if (rules.length === 0 || !pp || pp.group_locked) return;
    const now = (w: TierWindow) => this.valueOf(ppId, periodOf(w, at));
    for (const r of tierMoves(rules, Number(pp.group_id), now)) {
      this.moves.push({
        ppId: Number(ppId),
        fromGroupId: r.fromGroupId,
        toGroupId: r.toGroupId,
        reason: 'tier_rule',
        ruleId: r.id,
        pinCustomers: !r.carryExistingCustomers,
      });
      // Not carried: its customers so far stay with the group it leaves (moves.ts pins the rest).
      if (!r.carryExistingCustomers) {
        for (const pair of this.pairs.values()) {
          if (pair.ppId === ppId && pair.commissions > 0 && pair.pinnedGroupId === null) {
            pair.pinnedGroupId = String(r.fromGroupId);
            pair.changed = true;
          }
        }
      }
      pp.group_id = String(r.toGroupId);
    }
  }

  /**
   * Writes what the chunk decided, after its commissions: the moves (in rounds: a partner's second move in
   * the chunk after its first), then the pairs, then the figures. The moves' events and notices go to the
   * outbox with them (moves.ts).
   */
  async save(tx: Tx, ctx: MoveContext): Promise<Awarded> {
    for (let round = 0; ; round++) {
      const seen = new Map<number, number>();
      const moves = this.moves.filter((m) => {
        const n = seen.get(m.ppId) ?? 0;
        seen.set(m.ppId, n + 1);
        return n === round;
      });
      if (moves.length === 0) break;
      await movePartners(tx, ctx, moves);
    }
    await this.savePairs(tx);
    await addMetrics(
      tx,
      [...this.metrics.values()].map((m) => ({ ppId: m.ppId, period: m.period, ...m.delta })),
    );
    return this.awardBonuses(tx);
  }

  /**
   * Adds the chunk's progress (each row locked by its own add, so concurrent sales of a partner see each
   * other's) and gives a commission for each period that reached its threshold and has none yet: the unique
   * index makes that one per bonus, partner and period whatever runs at once or is delivered again.
   */
  private async awardBonuses(tx: Tx): Promise<Awarded> {
    const all = [...this.progress.values()];
    if (all.length === 0) return noAwards();
    const after = await addProgress(tx, all);
    const key = (k: ProgressKey) => `${k.bonusId}|${k.ppId}|${k.period}`;
    const mine = new Map(all.map((p) => [key(p), p]));
    const reached = after.filter((r) => !r.awarded && r.value >= mine.get(key(r))!.bonus.threshold);
    if (reached.length === 0) return noAwards();
    const made = await lifecycle.awardBonuses(
      tx,
      reached.map((r) => {
        const p = mine.get(key(r))!;
        return { ...p.award, bonus_id: r.bonusId, bonus_period: r.period, amount_cents: p.bonus.amountCents };
      }),
    );
    await markAwarded(tx, reached);
    const credits = new Map<string, LedgerEffect[]>();
    for (const e of made.caused.ledger) {
      const row = made.rows.find((r) => Number(r.id) === e.commission_id)!;
      const p = mine.get(
        key({ bonusId: Number(row.bonus_id), ppId: row.partner_program_id, period: row.bonus_period! }),
      )!;
      credits.set(p.transactionId, [...(credits.get(p.transactionId) ?? []), e]);
    }
    return { caused: made.caused, credits };
  }

  /**
   * Writes the pairs the chunk changed (one statement, in key order), with the groups its moves pinned them
   * to (moves.ts has pinned the partner's other pairs already).
   */
  private async savePairs(tx: Tx): Promise<void> {
    const rows = [...this.pairs.values()]
      .filter((p) => p.changed)
      .sort((a, b) => Number(a.customerId) - Number(b.customerId) || Number(a.ppId) - Number(b.ppId));
    if (rows.length === 0) return;
    await tx`
      insert into partner_customers (customer_id, partner_program_id, commissions, first_commission_at, last_sale_at,
                                     pinned_group_id)
      select * from unnest(${rows.map((p) => p.customerId)}::bigint[], ${rows.map((p) => p.ppId)}::bigint[],
                           ${rows.map((p) => p.commissions)}::int[],
                           ${rows.map((p) => p.firstCommissionAt?.toISOString() ?? null)}::timestamptz[],
                           ${rows.map((p) => p.lastSaleAt?.toISOString() ?? null)}::timestamptz[],
                           ${rows.map((p) => p.pinnedGroupId)}::bigint[])
      on conflict (customer_id, partner_program_id) do update set
        commissions = excluded.commissions, first_commission_at = excluded.first_commission_at,
        last_sale_at = excluded.last_sale_at, pinned_group_id = excluded.pinned_group_id`;
  }
}

function groupOfPp(r: ChunkRewards, pp: PartnerProgramRow): GroupTerms | undefined {
  return pp.group_id == null ? undefined : r.groupById(pp.group_id);
}
