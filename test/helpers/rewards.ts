// Rewards in API tests (docs/rewards.md): groups made through the real API, a partner's customers written as
// the click or lead pipeline leaves them (a customer_key owned by the partner), sales through /track/sale,
// and the commissions they made as the API lists them.
import { randomBytes } from 'node:crypto';
import type { Sql } from '../../shared/db/sql.ts';
import { postJson } from './stack.ts';
import { bearer, getJson, send } from './accounts.ts';
import type { User } from './accounts.ts';
import type { AddedPartner } from './partners.ts';
import type { Services } from './stack.ts';

const uniq = () => randomBytes(5).toString('hex');

export interface Group {
  id: number;
  slug: string;
  name: string;
  is_default: boolean;
  commission: Record<string, unknown>;
  hold_days: number | null;
  auto_approve: boolean | null;
  partners: number;
}

/** POST …/groups; throws unless 201. */
export async function createGroup(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
  body: Record<string, unknown>,
): Promise<Group> {
  const r = await send(
    'POST',
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${programId}/groups`,
    { name: `Group ${uniq()}`, ...body },
    bearer(owner.session),
  );
  if (r.status !== 201) throw new Error(`create group: ${r.status} ${r.text}`);
  return r.body.data as Group;
}

/** The program's groups (GET …/groups). */
export async function groupsOf(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
): Promise<Group[]> {
  const r = await getJson(
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${programId}/groups`,
    bearer(owner.session),
  );
  if (r.status !== 200) throw new Error(`groups: ${r.status} ${r.text}`);
  return r.body.data as Group[];
}

/** A customer of the partner in the program, as a lead with `key` (the pipeline's row, written directly). */
export async function customerOf(
  sql: Sql,
  programId: number,
  partner: Pick<AddedPartner, 'partnerId' | 'ppId'>,
  key = `cust-${uniq()}`,
): Promise<string> {
  await sql`
    insert into customers (program_id, partner_id, partner_program_id, customer_status, customer_key, signup_date)
    values (${programId}, ${partner.partnerId}, ${partner.ppId}, 'lead', ${key}, now())`;
  return key;
}

export interface SaleAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** POST /api/v1/track/sale with the program's token. */
export function trackSale(
  svc: Pick<Services, 'baseUrl'>,
  token: string,
  body: Record<string, unknown>,
): Promise<SaleAnswer> {
  return postJson(
    `${svc.baseUrl}/api/v1/track/sale`,
    { transaction_id: `txn-${uniq()}`, amount_cents: 10_000, ...body },
    bearer(token),
  );
}

export interface ListedCommission {
  id: number;
  status: string;
  amount_cents: number;
  sale_id: number | null;
  partner_id: number;
  group_id: number | null;
  rule: { source: string; type: string | null; percent: number | null; amount_cents: number | null } | null;
  bonus_id: number | null;
  payable_at: string | null;
  created_at: string;
}

/** The program's commissions as the API lists them, by id. */
export async function commissionsOf(
  svc: Pick<Services, 'baseUrl'>,
  owner: User,
  programId: number,
): Promise<Map<number, ListedCommission>> {
  const r = await getJson(
    `${svc.baseUrl}/api/advertiser/affiliate-programs/${programId}/commissions?limit=1000`,
    bearer(owner.session),
  );
  if (r.status !== 200) throw new Error(`commissions: ${r.status} ${r.text}`);
  return new Map((r.body.data as ListedCommission[]).map((c) => [c.id, c]));
}
