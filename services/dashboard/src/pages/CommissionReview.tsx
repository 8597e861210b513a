// The review queue's part of the Commissions page (CONTRACT part two "Review holds"): why a commission is
// held, in words, and Approve / Reject (with an optional reason, recorded as `rejected: <reason>`).
import { useState } from 'preact/hooks';
import { RejectForm } from './RejectForm.tsx';
import { api } from '../api.ts';
import { ErrorBox, messageOf } from '../ui.tsx';
import './payouts.css';

export type ReviewReason = 'self_referral' | 'partner_ip';

/** The hold reasons as an advertiser reads them. */
export const REVIEW_REASON_TEXT: Record<ReviewReason, string> = {
  self_referral: "Self-referral: the customer's email is the partner's own",
  partner_ip: 'Partner IP: the click came from an address the partner signed in from',
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
export function ReviewActions<C>(props: { commissionId: number; label: string; onChanged(c: C): void }) {
  const path = `/api/advertiser/commissions/${props.commissionId}`;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [rejecting, setRejecting] = useState(false);
  const act = async (action: 'approve' | 'reject', body: Record<string, unknown> = {}) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api.post<{ data: C }>(`${path}/${action}`, body);
      setRejecting(false);
      props.onChanged(r.data);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  const who = <span class="sr-only"> {props.label}</span>;
  return (
    <div class="review">
      <button type="button" class="primary" disabled={busy} onClick={() => void act('approve')}>
        Approve{who}
      </button>
      {rejecting ? (
        <RejectForm
          label={props.label}
          hint="(optional)"
          confirm="Yes, reject"
          busy={busy}
          onCancel={() => setRejecting(false)}
          onReject={(reason) => void act('reject', reason ? { reason } : {})}
        />
      ) : (
        <button type="button" class="danger" disabled={busy} onClick={() => setRejecting(true)}>
          Reject{who}
        </button>
      )}
      <ErrorBox error={error} />
    </div>
  );
}
