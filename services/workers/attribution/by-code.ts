// Attribution by partner code (CONTRACT part three "Codes as well as links"; docs/codes.md). A sale names a
// code by `coupon_code` (case-insensitive) or by a processor's discount ids (`coupon_refs`, matched against
// the code's `processor_ids`); the code counts when it is active and its partner approved in the program.
// - fallback (the program's default): the code's partner gets a sale whose customer has no partner, and the
//   customer becomes theirs;
// - override: the code's partner gets the sale even when a click or lead named another, and the customer
//   moves to them (its later sales without a code are theirs too);
// - a sale with a code whose customer_key matches no customer creates the customer (status lead, as a lead
//   without a click would), owned by the code's partner. The customer row is unique per (program,
//   customer_key): when two sales race for one new customer the first to commit creates it and every later
//   sale finds it and follows the rule above.
import type { Tx } from '../../../shared/db/sql.ts';
import type { SaleCommand } from '../../../shared/contracts/commands.ts';
import type { CustomerRow, Via } from './attribute.ts';

export type CodeAttributionMode = 'fallback' | 'override';

/** The active code a sale names, with its partner (approved in the program). */
export interface CodeMatch {
  id: string;
  code: string;
  partner_id: string;
  partner_program_id: string;
}

type Found = { row: CustomerRow; via: Via } | null;

/**
 * What the code does to a sale whose customer is `partnerId`'s (null: nobody's): `take` (the customer
 * becomes the code partner's), `same` (it already is), or `none` (the code attributes nothing). Pure.
 */
export function codeDecision(
  partnerId: string | null,
  match: CodeMatch | undefined,
  mode: CodeAttributionMode,
): 'take' | 'same' | 'none' {
  if (!match) return 'none';
  if (partnerId === match.partner_id) return 'same';
  return partnerId === null || mode === 'override' ? 'take' : 'none';
}

/** The active codes the commands name (one per command, by index): a code by name before one by id. */
async function matchCodes(tx: Tx, cmds: SaleCommand[]): Promise<Map<SaleCommand, CodeMatch>> {
  const byName: { i: number; p: number; code: string }[] = [];
  const byRef: { i: number; p: number; proc: string; ref: string }[] = [];
  cmds.forEach((c, i) => {
    if (c.coupon_code) byName.push({ i, p: c.program_id, code: c.coupon_code });
    for (const ref of c.coupon_refs?.ids ?? [])
      byRef.push({ i, p: c.program_id, proc: c.coupon_refs!.processor, ref });
  });
  if (byName.length === 0 && byRef.length === 0) return new Map();
  const rows = await tx<(CodeMatch & { i: number })[]>`
    select distinct on (m.i) m.i, m.id, m.code, m.partner_id, m.partner_program_id
    from (
      select k.i, 0 as rank, pc.id, pc.code, pc.partner_id, pc.partner_program_id
      from unnest(${byName.map((r) => r.i)}::int[], ${byName.map((r) => r.p)}::bigint[],
                  ${byName.map((r) => r.code)}::text[]) as k(i, p, code)
      join partner_codes pc on pc.program_id = k.p and lower(pc.code) = lower(k.code) and pc.status = 'active'
      union all
      select k.i, 1, pc.id, pc.code, pc.partner_id, pc.partner_program_id
      from unnest(${byRef.map((r) => r.i)}::int[], ${byRef.map((r) => r.p)}::bigint[],
                  ${byRef.map((r) => r.proc)}::text[], ${byRef.map((r) => r.ref)}::text[]) as k(i, p, proc, ref)
      join partner_codes pc on pc.program_id = k.p and pc.status = 'active'
        and pc.processor_ids @> jsonb_build_object(k.proc, k.ref)
    ) m
    join partner_programs pp on pp.id = m.partner_program_id and pp.status = 'approved'
    order by m.i, m.rank, m.id`;
  return new Map(rows.map(({ i, ...m }) => [cmds[i]!, m]));
}

/** A sale's attribution by code, for the chunk of commands `applySales` decides (apply-sale.ts). */
export class CodeAttribution {
  private readonly matches: Map<SaleCommand, CodeMatch>;
  /** The code that attributed each sale (its id goes to sales.partner_code_id). */
  private readonly attributed = new Map<SaleCommand, CodeMatch>();
  /** Customers the codes moved to their partner, by id. */
  private readonly moved = new Map<string, CustomerRow>();

  private constructor(matches: Map<SaleCommand, CodeMatch>) {
    this.matches = matches;
  }

  /**
   * The codes of `cmds` (the chunk's live, non-test sales), and the customers they create: a command with a
   * code, a customer_key, and no customer (`resolve`) gets one, owned by the code's partner, in `byKey`
   * (the first such command of a key in the chunk decides; a customer another transaction committed first
   * is read and locked instead, and then follows the rule of its own partner).
   */
  static async load(
    tx: Tx,
    cmds: SaleCommand[],
    resolve: (cmd: SaleCommand) => Found,
    byKey: Map<string, CustomerRow>,
    customerColumns: string,
  ): Promise<CodeAttribution> {
    const codes = new CodeAttribution(await matchCodes(tx, cmds));
    const fresh = new Map<string, { cmd: SaleCommand; m: CodeMatch }>();
    for (const [cmd, m] of codes.matches) {
      const key = `${cmd.program_id}|${cmd.customer_key}`;
      if (cmd.customer_key !== null && !resolve(cmd) && !fresh.has(key)) fresh.set(key, { cmd, m });
    }
    if (fresh.size === 0) return codes;
    const news = [...fresh.values()];
    const col = <T>(f: (n: { cmd: SaleCommand; m: CodeMatch }) => T) => news.map(f);
    const rows = await tx<(CustomerRow & { customer_key: string; click_id: string | null })[]>`
      insert into customers (program_id, partner_id, partner_program_id, customer_status, customer_key, signup_date)
      select p, pa, pp, 'lead', k, sd
      from unnest(${col((n) => n.cmd.program_id)}::bigint[], ${col((n) => n.m.partner_id)}::bigint[],
                  ${col((n) => n.m.partner_program_id)}::bigint[], ${col((n) => n.cmd.customer_key)}::text[],
                  ${col((n) => new Date(n.cmd.ts).toISOString())}::timestamptz[]) as v(p, pa, pp, k, sd)
      order by p, k
      on conflict (program_id, customer_key) do nothing
      returning ${tx.unsafe(customerColumns)}`;
    const created = new Set(rows.map((r) => `${r.program_id}|${r.customer_key}`));
    const raced = news.filter((n) => !created.has(`${n.cmd.program_id}|${n.cmd.customer_key}`));
    // Taken by a transaction that committed after our lookup: a new statement sees it; lock it as the others.
    const theirs =
      raced.length === 0
        ? []
        : await tx<(CustomerRow & { customer_key: string; click_id: string | null })[]>`
            select ${tx.unsafe(customerColumns)} from customers c
            join unnest(${raced.map((n) => n.cmd.program_id)}::bigint[], ${raced.map((n) => n.cmd.customer_key)}::text[])
              as k(p, ck) on c.program_id = k.p and c.customer_key = k.ck
            order by c.id
            for no key update of c`;
    for (const { customer_key, click_id: _click, ...row } of [...rows, ...theirs])
      byKey.set(`${row.program_id}|${customer_key}`, row);
    return codes;
  }

  /**
   * The sale's customer after its code (found: as the click_id / customer_key lookup found it): moved to
   * the code's partner when the rule says so. A customer the code owns is not bound by the cookie window
   * (via 'code'). `pps` learns the code's partner-program.
   */
  claim(
    cmd: SaleCommand,
    found: Found,
    mode: CodeAttributionMode,
    pps: Map<string, { partner_id: string | null }>,
  ): Found {
    const m = this.matches.get(cmd);
    if (!found || !m || Number(found.row.program_id) !== cmd.program_id) return found;
    const decision = codeDecision(found.row.partner_id, m, mode);
    if (decision === 'none') return found;
    this.attributed.set(cmd, m);
    if (decision === 'take') {
      const row = found.row;
      row.partner_id = m.partner_id;
      row.partner_program_id = m.partner_program_id;
      row.link_id = null;
      this.moved.set(row.id, row);
    }
    if (!pps.has(m.partner_program_id)) pps.set(m.partner_program_id, { partner_id: m.partner_id });
    return { row: found.row, via: 'code' };
  }

  /** The partner-programs of the codes the chunk names (the chunk reads their groups with the others'). */
  partnerProgramIds(): string[] {
    return [...this.matches.values()].map((m) => m.partner_program_id);
  }

  /** What the sale's row records: the code as the matched one spells it (else as sent), and the code that attributed it. */
  saleColumns(cmd: SaleCommand): { coupon_code: string | null; partner_code_id: string | null } {
    const m = this.matches.get(cmd);
    return {
      coupon_code: m?.code ?? cmd.coupon_code ?? null,
      partner_code_id: this.attributed.get(cmd)?.id ?? null,
    };
  }

  /** Writes the customers the codes moved (their partner, partner-program; the other partner's link cleared). */
  async save(tx: Tx): Promise<void> {
    const rows = [...this.moved.values()];
    if (rows.length === 0) return;
    await tx`
      update customers c set partner_id = v.pa, partner_program_id = v.pp, link_id = null, updated_at = now()
      from unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.partner_id)}::bigint[],
                  ${rows.map((r) => r.partner_program_id)}::bigint[]) as v(id, pa, pp)
      where c.id = v.id`;
  }
}
