// Why a new commission waits for the advertiser's review (CONTRACT part two, "Holding, reviewing and paying
// out", and part three, "Traffic quality and fraud"; docs/payouts.md "Review holds"). One rule per reason, in
// precedence order (the first that holds wins), each a SQL condition over the new commission `c`, its
// customer `cu`, its partner `pa`, its sale `s`, its program `pr` and the attributing click `ac` (the
// customer's last click up to the sale; its latest when none is that early), some with a check in
// TypeScript of the customer's email, some switched by the program's risk_rules. Adding a reason is adding
// its rule here (and widening the column's check constraint, 0017_payouts.sql then 0023, with a migration):
// the API's enum, the listing filter, the hold statement and the lifecycle read this list. Decided once, in
// the transaction that creates the commission (lifecycle.ts `create`).
import type { PendingQuery, Row } from 'postgres';
import MailChecker from 'mailchecker';
import type { Sql, Tx } from '../db/sql.ts';
import { riskRulesOf } from '../domain/risk-rules.ts';
import type { RiskRule } from '../domain/risk-rules.ts';
import { REVIEW_REASONS } from '../domain/statuses.ts';
import type { ReviewReason } from '../domain/statuses.ts';

type Fragment = PendingQuery<Row[]>;

interface ReviewRule {
  reason: ReviewReason;
  /** True when the commission may need review for this reason. */
  when: (sql: Sql | Tx) => Fragment;
  /** And this holds of the customer's email (only called when `when` held and there is one). */
  email?: (email: string) => boolean;
  /** Applied only while the program's risk rule of this name is on (absent: always). */
  switch?: RiskRule;
}

/** The key two payout methods are equal by (the expression of 0023's partner_accounts_payout_key). */
const payoutKey = (sql: Sql | Tx, alias: string) =>
  sql.unsafe(
    `lower(${alias}.payout_method->>'type') || ':' || lower(btrim(coalesce(${alias}.payout_method->>'email', ${alias}.payout_method->>'details', '')))`,
  );

const DOMAIN_RE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;
/**
 * The email's domain (or a parent of it) is on the `mailchecker` package's list of disposable-mailbox
 * domains (maintained upstream, shipped with each release; no copy here). An address that does not look
 * like one is not called disposable.
 */
export function isDisposableEmail(email: string): boolean {
  const at = email.lastIndexOf('@');
  if (at < 1) return false;
  const domain = email
    .slice(at + 1)
    .trim()
    .toLowerCase();
  if (!DOMAIN_RE.test(domain)) return false;
  return !MailChecker.isValid(`user@${domain}`);
}

const GCLID_RE = '[?&#](gclid|gbraid|wbraid|msclkid)=';

export const REVIEW_RULES = [
  {
    // The customer's email (from the lead) is the email of the commission's partner record or of a partner
    // account that claimed it, compared case-insensitively.
    reason: 'self_referral',
    when: (sql) => sql`
      cu.email is not null
      and (lower(btrim(cu.email)) = lower(btrim(pa.email))
           or exists (select 1 from partner_claims pc join partner_accounts a on a.id = pc.account_id
                      where pc.partner_id = c.partner_id and lower(a.email) = lower(btrim(cu.email))))`,
  },
  {
    // The attributing click (the customer's last click up to the sale) came from the IP address of a sign-in
    // of an account that claimed the partner record: both stored as keyed hashes, never as addresses. The
    // claims are read only for partners that have any.
    reason: 'partner_ip',
    when: (sql) => sql`
      exists (select 1 from partner_claims pc where pc.partner_id = c.partner_id)
      and (select ce.ip_hash from click_events ce
           where ce.click_id = cu.click_id and ce.click_timestamp <= s.sale_date
           order by ce.click_timestamp desc limit 1)
          in (select si.ip_hash from partner_sign_ins si
              join partner_claims pc on pc.account_id = si.account_id
              where pc.partner_id = c.partner_id and si.ip_hash is not null)`,
  },
  {
    // The attributing click was a bot's or a prefetch (click_events.quality): it attributes nothing
    // silently. Always on.
    reason: 'bot_traffic',
    when: (sql) => sql`coalesce(ac.quality <> 'human', false)`,
  },
  {
    // The lead's email is at a disposable-mailbox domain (isDisposableEmail).
    reason: 'disposable_email',
    when: (sql) => sql`cu.email is not null`,
    email: isDisposableEmail,
    switch: 'disposable_email',
  },
  {
    // A partner account that claimed the commission's partner record has the payout method of another
    // partner account that claimed another partner record of the program's workspace.
    reason: 'shared_payout_method',
    when: (sql) => sql`
      exists (select 1 from partner_claims pc
              join partner_accounts a on a.id = pc.account_id and a.payout_method is not null
              join partner_accounts o on o.payout_method is not null and o.id <> a.id
                                     and ${payoutKey(sql, 'o')} = ${payoutKey(sql, 'a')}
              join partner_claims oc on oc.account_id = o.id and oc.partner_id <> c.partner_id
              join partners op on op.id = oc.partner_id and op.workspace_id = pr.workspace_id
              where pc.partner_id = c.partner_id)`,
    switch: 'shared_payout_method',
  },
  {
    // The attributing click's landing page carried a paid-search click id (Google Ads gclid, gbraid,
    // wbraid; Microsoft Ads msclkid): the partner bought the click on the advertiser's own search terms.
    reason: 'paid_search',
    when: (sql) => sql`coalesce(ac.page_url ~* ${GCLID_RE}, false)`,
    switch: 'paid_search',
  },
] as const satisfies readonly ReviewRule[];

export { REVIEW_REASONS };
export type { ReviewReason };
// One rule per reason, in the names' order (the API's enum and the precedence are the same list).
if (REVIEW_RULES.map((r) => r.reason).join() !== REVIEW_REASONS.join()) {
  throw new Error('review-reasons.ts: REVIEW_RULES must have one rule per REVIEW_REASONS name, in its order');
}

/** The reason each of these commissions must be held for (absent: none), with one statement. */
export async function reviewReasons(tx: Tx, commissionIds: number[]): Promise<Map<number, ReviewReason>> {
  if (commissionIds.length === 0) return new Map();
  const rules: readonly ReviewRule[] = REVIEW_RULES;
  const columns = rules.reduce((acc, rule, i) => tx`${acc}, (${rule.when(tx)}) as ${tx(`r${i}`)}`, tx``);
  const rows = await tx<
    ({ id: string; email: string | null; risk_rules: unknown } & Record<string, boolean>)[]
  >`
    select c.id, cu.email, pr.risk_rules ${columns}
    from commissions c
    join customers cu on cu.id = c.customer_id
    join partners pa on pa.id = c.partner_id
    join sales s on s.id = c.sale_id
    join programs pr on pr.id = c.program_id
    left join lateral (
      select ce.quality, ce.page_url from click_events ce
      where ce.click_id = cu.click_id and ce.program_id = c.program_id and not ce.is_test
      order by (ce.click_timestamp <= s.sale_date) desc, ce.click_timestamp desc, ce.event_id desc
      limit 1
    ) ac on true
    where c.id = any(${commissionIds}::bigint[])`;
  const out = new Map<number, ReviewReason>();
  for (const r of rows) {
    const on = riskRulesOf(r.risk_rules);
    const i = rules.findIndex(
      (rule, i) =>
        r[`r${i}`] === true &&
        (rule.switch === undefined || on[rule.switch]) &&
        (rule.email === undefined || (r.email !== null && rule.email(r.email))),
    );
    if (i >= 0) out.set(Number(r.id), rules[i]!.reason as ReviewReason);
  }
  return out;
}
