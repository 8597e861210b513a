// The review queue's part of the Commissions page (CONTRACT part two "Review holds"): why a commission is
// held, in words, and Approve / Reject (with an optional reason, recorded as `rejected: <reason>`).
import { useState } from 'preact/hooks';
import { RejectForm } from './RejectForm.tsx';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { ErrorBox } from '../widgets.tsx';
import { useAction } from '../hooks.ts';
import './payouts.css';

type Reviewed = Answer<'post', '/api/advertiser/commissions/{id}/approve'>['data'];
export type ReviewReason = NonNullable<Reviewed['review_reason']>;

/** The hold reasons as an advertiser reads them. */
export const REVIEW_REASON_TEXT: Record<ReviewReason, string> = {
  self_referral: "Self-referral: the customer's email is the partner's own",
  partner_ip: 'Partner IP: the click came from an address the partner signed in from',
  bot_traffic: "Bot traffic: the sale's click was a bot's or a browser's prefetch",
  disposable_email: "Disposable email: the customer's email is at a throwaway-mailbox domain",
  shared_payout_method: 'Shared payout method: another partner account is paid the same way',
  paid_search: 'Paid search: the click came from a search ad (gclid, gbraid, wbraid or msclkid)',
};

export function reviewReasonText(reason: string): string {
  return REVIEW_REASON_TEXT[reason as ReviewReason] ?? reason;
}

/** Held and still undecided (the API's `?status=review`): pending or partly refunded, unpaid, reason set. */
export function isHeld(c: { review_reason: string | null; status: string; paid_at: string | null }): boolean {
  return (
    c.review_reason !== null && (c.status === 'pending' || c.status === 'refunded') && c.paid_at === null
  );
}

/** Approve / Reject of one held commission; `onChanged` gets the commission as the API answers it. */
export function ReviewActions(props: { commissionId: number; label: string; onChanged(c: Reviewed): void }) {
  const params = { path: { id: props.commissionId } };
  const action = useAction();
  const busy = action.busy;
  const [rejecting, setRejecting] = useState(false);
  const act = (decision: 'approve' | 'reject', reason = '') =>
    void action.run(async () => {
      const r =
        decision === 'approve'
          ? await api.POST('/api/advertiser/commissions/{id}/approve', { params })
          : await api.POST('/api/advertiser/commissions/{id}/reject', {
              params,
              body: reason ? { reason } : {},
            });
      setRejecting(false);
      props.onChanged(r.data);
    });
  const who = <span class="sr-only"> {props.label}</span>;
  return (
    <div class="review">
      <button type="button" class="primary" disabled={busy} onClick={() => act('approve')}>
        Approve{who}
      </button>
      {rejecting ? (
        <RejectForm
          label={props.label}
          hint="(optional)"
          confirm="Yes, reject"
          busy={busy}
          onCancel={() => setRejecting(false)}
          onReject={(reason) => act('reject', reason)}
        />
      ) : (
        <button type="button" class="danger" disabled={busy} onClick={() => setRejecting(true)}>
          Reject{who}
        </button>
      )}
      <ErrorBox error={action.error} />
    </div>
  );
}
