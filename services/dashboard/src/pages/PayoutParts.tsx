// Pieces of the Payouts page: the payout as the API answers it, the partner's payout method in words, the
// export links, and a payout's actions (mark paid with a reference, cancel).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { ConfirmButton, ErrorBox } from '../widgets.tsx';
import { messageOf } from '../hooks.ts';
import { money } from '../format.ts';

/** A payout as the API answers it (services/api/modules/payouts/routes.ts). */
export type Payout = Answer<'get', '/api/advertiser/payouts/{id}'>['data'];
export type PayoutStatus = Payout['status'];
export const PAYOUT_STATUSES: readonly PayoutStatus[] = ['pending', 'paid', 'canceled'];

/** The partner's payout method from the partner portal (null: none set). */
export type PayoutMethod = Payout['payout_method'];

const METHOD_NAMES = { paypal: 'PayPal', wise: 'Wise', bank_transfer: 'Bank transfer' } as const;

/** "PayPal (pat@example.com)", or the flag for a partner who has set none. */
export function MethodText(props: { method: PayoutMethod }) {
  const m = props.method;
  if (!m) return <span class="flag">No payout method</span>;
  return (
    <>
      {METHOD_NAMES[m.type] ?? m.type}
      {m.email && <span class="subtle"> ({m.email})</span>}
    </>
  );
}

/** The amount, and what it is made of when a clawback was recovered from it. */
export function AmountText(props: {
  payout: Pick<Payout, 'amount_cents' | 'commissions_cents' | 'recovered_cents' | 'currency'>;
}) {
  const p = props.payout;
  return (
    <>
      {money(p.amount_cents, p.currency)}
      {p.recovered_cents > 0 && (
        <span class="subtle">
          {' '}
          ({money(p.commissions_cents, p.currency)} less {money(p.recovered_cents, p.currency)} recovered)
        </span>
      )}
    </>
  );
}

const EXPORTS = [
  ['csv', 'CSV'],
  ['paypal', 'PayPal Payouts'],
  ['wise', 'Wise batch'],
] as const;

/**
 * Download links to the export route for the payouts of one status (the files pay every payout of that
 * status at once, as PayPal and Wise take them). The session cookie goes with a plain link.
 */
export function ExportLinks(props: { programId: number; status: PayoutStatus }) {
  const base = `/api/advertiser/affiliate-programs/${props.programId}/payouts/export`;
  return (
    <p class="exports">
      Export {props.status} payouts:{' '}
      {EXPORTS.map(([format, label], i) => (
        <>
          {i > 0 && ' · '}
          <a href={`${base}?format=${format}&status=${props.status}`} download>
            {label}
          </a>
        </>
      ))}
    </p>
  );
}

/** Mark paid (with an optional reference) and Cancel, for a pending payout. */
export function PayoutActions(props: { payout: Payout; onChanged(p: Payout): void }) {
  const p = props.payout;
  const [marking, setMarking] = useState(false);
  const params = { path: { id: p.id } };
  const who = `payout ${p.id} to ${p.partner_name}`;
  if (marking) {
    return (
      <MarkPaidForm
        label={who}
        onCancel={() => setMarking(false)}
        onPaid={async (reference) => {
          const r = await api.POST('/api/advertiser/payouts/{id}/mark-paid', {
            params,
            body: reference ? { reference } : {},
          });
          setMarking(false);
          props.onChanged(r.data);
        }}
      />
    );
  }
  return (
    <div class="review">
      <button type="button" class="primary" onClick={() => setMarking(true)}>
        Mark paid<span class="sr-only"> {who}</span>
      </button>
      <ConfirmButton
        label="Cancel payout"
        question={`Cancel the payout of ${money(p.amount_cents, p.currency)} to ${p.partner_name}? Its commissions become payable again.`}
        confirmLabel="Yes, cancel it"
        danger
        onConfirm={async () => {
          const r = await api.POST('/api/advertiser/payouts/{id}/cancel', { params });
          props.onChanged(r.data);
        }}
      />
    </div>
  );
}

/** The reference of the payment (a PayPal batch id, a bank reference), optional; Escape cancels. */
function MarkPaidForm(props: { label: string; onPaid(reference: string): Promise<void>; onCancel(): void }) {
  const [reference, setReference] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => input.current?.focus(), []);
  return (
    <form
      class="confirm"
      aria-label={`Mark ${props.label} paid`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        props.onPaid(reference.trim()).catch((err: unknown) => {
          setBusy(false);
          setError(messageOf(err));
        });
      }}
    >
      <label class="compact">
        Reference <span class="subtle">(optional: PayPal batch id, bank reference)</span>
        <input
          ref={input}
          value={reference}
          maxLength={200}
          onInput={(e) => setReference((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="primary" disabled={busy}>
        Yes, mark paid
      </button>
      <button type="button" disabled={busy} onClick={props.onCancel}>
        Cancel
      </button>
      <ErrorBox error={error} />
    </form>
  );
}
