// SQL of programs. Writing a row is all it takes to reach the ingress: triggers on programs append to
// cache_invalidations, which every ingress polls.
import type { Sql, Tx } from '../../../../shared/db/sql.ts';
import type { CommissionPolicy } from '../../../../shared/domain/commission-policy.ts';
import type { Role } from '../auth/access.ts';
import type { RiskRules } from '../../../../shared/domain/risk-rules.ts';

/** The normalised fields of a create or update body; on update only those present change. */
export interface ProgramFields {
  name?: string;
  slug?: string;
  cookie_window_days?: number;
  currency?: string;
  commission?: CommissionPolicy;
  allowed_origins?: string[];
  hold_days?: number;
  min_payout_cents?: number;
  // Applications (docs/partners.md): description null clears it.
  public_page?: boolean;
  auto_approve?: boolean;
  description?: string | null;
  partner_links?: boolean;
  // Codes (docs/codes.md): website_url null clears it.
  website_url?: string | null;
  code_attribution?: 'fallback' | 'override';
  // Risk rules (issue 31): only the switches given change.
  risk_rules?: Partial<RiskRules>;
}

export interface ProgramRow {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  status: 'draft' | 'live';
  cookie_window_days: number;
  currency: string;
  commission: unknown;
  allowed_origins: string[];
  api_token_masked: string | null;
  created_at: Date;
  hold_days: number;
  min_payout_cents: string;
  public_page: boolean;
  auto_approve: boolean;
  description: string | null;
  partner_links: boolean;
  website_url: string | null;
  code_attribution: 'fallback' | 'override';
  risk_rules: unknown;
}

const COLUMNS = (sql: Sql | Tx) =>
  sql`id, workspace_id, name, slug, status, cookie_window_days, currency, commission, allowed_origins,
      api_token_masked, created_at, public_page, auto_approve, description, partner_links, hold_days,
      min_payout_cents, website_url, code_attribution, risk_rules`;

export async function findProgram(sql: Sql, id: number): Promise<ProgramRow | undefined> {
  const [row] = await sql<ProgramRow[]>`
    select ${COLUMNS(sql)} from programs where id = ${id} and deleted_at is null`;
  return row;
}

/** A key's programs: its workspace's, limited to its program_scope when set. */
export function programsOfWorkspace(sql: Sql, workspaceId: number, programScope: number[] | null) {
  return sql<ProgramRow[]>`
    select ${COLUMNS(sql)} from programs
    where workspace_id = ${workspaceId} and deleted_at is null
      ${programScope === null ? sql`` : sql`and id = any(${programScope}::bigint[])`}
    order by id`;
}

/** A user's programs: those of every workspace where an active membership has one of `roles`. */
export function programsOfUser(sql: Sql, userId: number, roles: Role[]) {
  return sql<ProgramRow[]>`
    select ${COLUMNS(sql)} from programs
    where deleted_at is null and workspace_id in (
      select workspace_id from memberships
      where user_id = ${userId} and status = 'active' and role = any(${roles}::text[]))
    order by id`;
}

/** The new row, or undefined when the slug is taken. */
export async function insertProgram(
  sql: Sql,
  p: {
    workspaceId: number;
    name: string;
    slug: string;
    cookie_window_days: number;
    currency: string;
    commission: CommissionPolicy;
    allowed_origins: string[];
    hold_days: number;
    min_payout_cents: number;
    tokenHash: Buffer;
    tokenMasked: string;
    public_page: boolean;
    auto_approve: boolean;
    description: string | null;
    partner_links: boolean;
    website_url: string | null;
    code_attribution: 'fallback' | 'override';
    risk_rules: RiskRules;
  },
): Promise<ProgramRow | undefined> {
  const [row] = await sql<ProgramRow[]>`
    insert into programs (workspace_id, name, slug, cookie_window_days, currency, commission,
                          allowed_origins, api_token_hash, api_token_masked,
                          public_page, auto_approve, description, partner_links, hold_days, min_payout_cents,
                          website_url, code_attribution, risk_rules)
    values (${p.workspaceId}, ${p.name}, ${p.slug}, ${p.cookie_window_days}, ${p.currency},
            ${sql.json(p.commission as never)}, ${p.allowed_origins}::text[],
            ${p.tokenHash}, ${p.tokenMasked},
            ${p.public_page}, ${p.auto_approve}, ${p.description}, ${p.partner_links},
            ${p.hold_days}, ${p.min_payout_cents}, ${p.website_url}, ${p.code_attribution},
            ${sql.json(p.risk_rules)})
    on conflict (slug) do nothing
    returning ${COLUMNS(sql)}`;
  return row;
}

/**
 * The live program's currency under its row lock (a partner joining reads it `for share`: partners/dal.ts),
 * or undefined when the program is gone.
 */
export async function lockCurrency(tx: Tx, id: number): Promise<string | undefined> {
  const [current] = await tx<{ currency: string }[]>`
    select currency from programs where id = ${id} and deleted_at is null for no key update`;
  return current?.currency;
}

/** Whether the program has partners or sales (amounts in its currency exist). */
export async function hasPartnersOrSales(tx: Tx, id: number): Promise<boolean> {
  const [used] = await tx<{ used: boolean }[]>`
    select exists (select 1 from partner_programs where program_id = ${id})
        or exists (select 1 from sales where program_id = ${id}) as used`;
  return used!.used;
}

/** Changes the fields given; undefined when the program is gone. Throws the unique violation on slug. */
export async function updateProgramRow(
  sql: Tx,
  id: number,
  f: ProgramFields,
): Promise<ProgramRow | undefined> {
  const [row] = await sql<ProgramRow[]>`
    update programs set
      name = coalesce(${f.name ?? null}::text, name),
      slug = coalesce(${f.slug ?? null}::text, slug),
      cookie_window_days = coalesce(${f.cookie_window_days ?? null}::integer, cookie_window_days),
      currency = coalesce(${f.currency ?? null}::char(3), currency),
      commission = coalesce(${f.commission === undefined ? null : sql.json(f.commission as never)}::jsonb, commission),
      allowed_origins = coalesce(${f.allowed_origins ?? null}::text[], allowed_origins),
      hold_days = coalesce(${f.hold_days ?? null}::integer, hold_days),
      min_payout_cents = coalesce(${f.min_payout_cents ?? null}::bigint, min_payout_cents),
      public_page = coalesce(${f.public_page ?? null}::boolean, public_page),
      auto_approve = coalesce(${f.auto_approve ?? null}::boolean, auto_approve),
      description = case when ${f.description !== undefined} then ${f.description ?? null}::text else description end,
      partner_links = coalesce(${f.partner_links ?? null}::boolean, partner_links),
      website_url = case when ${f.website_url !== undefined} then ${f.website_url ?? null}::text else website_url end,
      code_attribution = coalesce(${f.code_attribution ?? null}::text, code_attribution),
      risk_rules = risk_rules || ${sql.json(f.risk_rules ?? {})}::jsonb,
      updated_at = now()
    where id = ${id} and deleted_at is null
    returning ${COLUMNS(sql)}`;
  return row;
}

/** Soft delete; false when the program was already gone. */
export async function deleteProgram(sql: Sql, id: number): Promise<boolean> {
  const rows = await sql`
    update programs set deleted_at = now(), updated_at = now()
    where id = ${id} and deleted_at is null returning id`;
  return rows.length > 0;
}

export async function goLive(sql: Sql, id: number): Promise<void> {
  await sql`
    update programs set status = 'live', updated_at = now()
    where id = ${id} and status = 'draft' and deleted_at is null`;
}

/** Replaces the tracking token; false when the program is gone. */
export async function replaceToken(sql: Sql, id: number, hash: Buffer, masked: string): Promise<boolean> {
  const rows = await sql`
    update programs set api_token_hash = ${hash}, api_token_masked = ${masked}, updated_at = now()
    where id = ${id} and deleted_at is null returning id`;
  return rows.length > 0;
}
