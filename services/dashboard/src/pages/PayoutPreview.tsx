// "New payout" on the Payouts page: what creating payouts now would pay, per partner (GET …/payouts/preview,
// nothing written), with the partners under the program's minimum and those without a payout method
// flagged; only "Create" writes (POST …/payouts), limited to the partners shown, so that a partner who
// became payable while the preview was open is not paid unseen.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorBox, Show, Table } from '../widgets.tsx';
import { money } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import type { Program } from '../program.tsx';
import { AmountText, MethodText } from './PayoutParts.tsx';
import type { Payout } from './PayoutParts.tsx';

export function PayoutPreview(props: { program: Program; onCreated(p: Payout[]): void; onCancel(): void }) {
  const params = { path: { id: props.program.id } };
  const preview = useLoad(
    () => api.GET('/api/advertiser/affiliate-programs/{id}/payouts/preview', { params }),
    [props.program.id],
  );
  const submit = useAction();
  const [busy, setBusy] = useState(false);
  return (
    <section class="panel" aria-label="New payout">
      <h2>New payout</h2>
      <Show loaded={preview}>
        {({ data, meta }) => {
          const paid = data.filter((r) => !r.below_minimum);
          const missingMethod = paid.filter((r) => !r.has_payout_method).length;
          return (
            <>
              {data.length === 0 ? (
                <p>
                  Nothing is payable now: commissions become payable once their hold period has passed and
                  they are not held for review.
                </p>
              ) : (
                <>
                  <p data-testid="preview-summary">
                    {paid.length === 0
                      ? 'No partner reaches the minimum payout yet.'
                      : `${paid.length} ${paid.length === 1 ? 'payout' : 'payouts'}, ${money(meta.total_cents, meta.currency)} in all.`}{' '}
                    {meta.min_payout_cents > 0 &&
                      `Minimum payout: ${money(meta.min_payout_cents, meta.currency)}; smaller amounts carry over.`}
                  </p>
                  {missingMethod > 0 && (
                    <p class="note">
                      {missingMethod === 1 ? 'One partner has' : `${missingMethod} partners have`} no payout
                      method: the payout is created and listed in the CSV export, but left out of the PayPal
                      and Wise files until the partner sets one in the partner portal.
                    </p>
                  )}
                  <Table
                    caption="What creating payouts now would pay"
                    hiddenCaption
                    columns={['Partner', 'Payout method', 'Commissions', 'Amount', 'Note']}
                  >
                    {data.map((r) => (
                      <tr key={r.partner_id} class={r.below_minimum ? 'muted' : undefined}>
                        <td>
                          {r.partner_name} <span class="subtle">{r.partner_email}</span>
                        </td>
                        <td>
                          <MethodText method={r.payout_method} />
                        </td>
                        <td>{r.commission_ids.length}</td>
                        <td>
                          <AmountText payout={r} />
                        </td>
                        <td>
                          {r.below_minimum ? (
                            <span class="flag">Below the minimum: not paid now, carries over</span>
                          ) : (
                            'Paid by this run'
                          )}
                        </td>
                      </tr>
                    ))}
                  </Table>
                </>
              )}
              <ErrorBox error={submit.error} />
              <p class="actions">
                {paid.length > 0 && (
                  <button
                    type="button"
                    class="primary"
                    disabled={busy}
                    onClick={() => {
                      setBusy(true);
                      void submit
                        .run(async () => {
                          const r = await api.POST('/api/advertiser/affiliate-programs/{id}/payouts', {
                            params,
                            body: { partner_ids: paid.map((p) => p.partner_id) },
                          });
                          props.onCreated(r.data);
                        })
                        .finally(() => setBusy(false));
                    }}
                  >
                    Create {paid.length === 1 ? 'payout' : `${paid.length} payouts`} (
                    {money(meta.total_cents, meta.currency)})
                  </button>
                )}
                <button type="button" disabled={busy} onClick={props.onCancel}>
                  {paid.length > 0 ? 'Cancel' : 'Close'}
                </button>
              </p>
            </>
          );
        }}
      </Show>
    </section>
  );
}
