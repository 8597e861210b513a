// Pieces the portal's pages share: skeletons while loading, the program's terms in a partner's words,
// status badges, the unread badge. Money, dates, errors, copy buttons and the load/action hooks are the
// dashboard's (../format.ts, ../widgets.tsx, ../copy.tsx, ../hooks.ts).
import { useEffect } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { money } from '../format.ts';
import type { PartnerStatus, ProgramTerms } from './programs.ts';
import type { CommissionPolicy } from '../api.ts';

export { Skeleton, View } from '../skeleton.tsx';
export { UnreadBadge } from '../notifications.tsx';

/** "30% of each sale" or "€5.00 per sale". */
export function rateWords(
  r: { type: 'percentage' | 'flat'; percent: number | null; amount_cents: number | null },
  currency: string,
) {
  return r.type === 'percentage'
    ? `${r.percent ?? 0}% of each sale`
    : `${money(r.amount_cents ?? 0, currency)} per sale`;
}

/**
 * "30% of each sale, on every payment for 12 months"; with a stepped rate "40% of each sale on a customer's
 * first 3 payments, then 20% of each sale, …".
 */
export function commissionText(c: CommissionPolicy, currency: string): string {
  const when =
    c.recurring.mode === 'one_time'
      ? "on a customer's first purchase only"
      : c.recurring.months === null
        ? 'on every payment, for as long as the customer pays'
        : `on every payment for ${c.recurring.months} month${c.recurring.months === 1 ? '' : 's'}`;
  const first = c.recurring.mode === 'recurring' ? c.recurring.first : null;
  const stepped = first
    ? `${rateWords(first, currency)} on a customer's first ${first.count === 1 ? 'payment' : `${first.count} payments`}, then `
    : '';
  return `${stepped}${rateWords(c, currency)}, ${when}`;
}

/**
 * The terms of a program as a definition list: commission, product rules, window, hold, minimum. `commission`
 * is the partner's own when it differs from the program's (its group's, or one the advertiser set for it).
 */
export function Terms(props: {
  terms: ProgramTerms;
  commission?: CommissionPolicy;
  children?: ComponentChildren;
}) {
  const t = props.terms;
  const c = props.commission ?? t.commission;
  const hold = t.hold_days ?? 0;
  const min = t.min_payout_cents ?? 0;
  return (
    <dl class="facts">
      <dt>{props.commission ? 'Your commission' : 'Commission'}</dt>
      <dd>{commissionText(c, t.currency)}</dd>
      {c.product_rules.map((r) => (
        <>
          <dt>
            Product <code>{r.product_id}</code>
          </dt>
          <dd>{rateWords(r, t.currency)}</dd>
        </>
      ))}
      <dt>Cookie window</dt>
      <dd>
        {t.cookie_window_days} day{t.cookie_window_days === 1 ? '' : 's'} from a visitor's click
      </dd>
      <dt>Hold</dt>
      <dd>
        {hold === 0
          ? 'commissions are payable as soon as the sale is recorded'
          : `commissions become payable ${hold} day${hold === 1 ? '' : 's'} after the sale`}
      </dd>
      <dt>Minimum payout</dt>
      <dd>{min === 0 ? 'none' : money(min, t.currency)}</dd>
      <dt>Currency</dt>
      <dd>{t.currency}</dd>
      {props.children}
    </dl>
  );
}

const STATUS_TEXT: Record<PartnerStatus, string> = {
  pending: 'Pending review',
  approved: 'Approved',
  rejected: 'Not approved',
};

export function StatusBadge(props: { status: PartnerStatus }) {
  return <span class={`badge ${props.status}`}>{STATUS_TEXT[props.status]}</span>;
}

/** A page's title, also in the tab. */
export function Title(props: { children: string; sub?: string }) {
  useEffect(() => {
    document.title = `${props.sub ? `${props.sub} · ` : ''}${props.children} · Partner portal`;
  }, [props.children, props.sub]);
  return (
    <h1>
      {props.children}
      {props.sub && <span class="subtle"> · {props.sub}</span>}
    </h1>
  );
}
