// Commissions: the program's commissions newest first, filtered by status, a page at a time; mark one
// paid (after a confirmation); the refund reason; when each is payable; the review queue (the `review`
// filter: held commissions with their reason, approved or rejected here); a CSV export of the rows listed.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { useSession } from '../session.tsx';
import { ConfirmButton, ErrorBox, Loading, Pager, ReadOnlyNote, Table } from '../widgets.tsx';
import { programPage } from '../program.tsx';
import { dateTime, money } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { Program } from '../program.tsx';
import { toCsv } from '../csv.ts';
import { ReviewActions, isHeld, reviewReasonText } from './CommissionReview.tsx';
import '../parts.css';

type Commission = Answer<'get', '/api/advertiser/affiliate-programs/{id}/commissions'>['data'][number];
type Status = Commission['status'];
const STATUSES: readonly Status[] = ['pending', 'approved', 'paid', 'reversed', 'refunded'];
/** The listing's filters: a status, or `review` (held for review and not yet decided). */
type Filter = Status | 'review';
const PAYABLE: readonly Status[] = ['pending', 'approved'];
const PAGE_SIZE = 50;

export const Commissions = programPage('Commissions', CommissionsOf);

function CommissionsOf({ program }: { program: Program }) {
  const { canWrite } = useSession();
  const [status, setStatus] = useState<Filter | ''>('');
  const [page, setPage] = useState(0);
  // The API pages with limit/offset and no total: one row more than a page says whether a next one exists.
  const list = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/commissions', {
          params: {
            path: { id: program.id },
            query: { status: status || undefined, limit: PAGE_SIZE + 1, offset: page * PAGE_SIZE },
          },
        })
      ).data,
    [program.id, status, page],
  );
  const partners = useLoad(
    async () =>
      new Map(
        (
          await api.GET('/api/advertiser/affiliate-programs/{id}/partners', {
            params: { path: { id: program.id } },
          })
        ).data.map((p) => [p.id, p]),
      ),
    [program.id],
  );
  // Commissions changed here (paid, approved, rejected) as the API answered, until the list is read again.
  const [changed, setChanged] = useState<Map<number, Commission>>(new Map());
  const update = (c: Commission) => setChanged((m) => new Map(m).set(c.id, c));
  const rows = (list.data ?? []).slice(0, PAGE_SIZE).map((c) => changed.get(c.id) ?? c);
  const hasNext = (list.data?.length ?? 0) > PAGE_SIZE;
  const partnerName = (id: number) => partners.data?.get(id)?.name ?? `Partner #${id}`;

  const markPaid = async (c: Commission) => {
    const r = await api.POST('/api/advertiser/commissions/{id}/mark-paid', {
      params: { path: { id: c.id } },
    });
    update(r.data);
  };

  const exportCsv = () => {
    const csv = toCsv(
      [
        'commission_id',
        'created_at',
        'partner_id',
        'partner',
        'sale_id',
        'amount',
        'currency',
        'status',
        'paid_at',
        'refund_reason',
        // Added with payouts (issue 18): after the older columns, so their positions stay.
        'payable_at',
        'review_reason',
      ],
      rows.map((c) => [
        c.id,
        c.created_at,
        c.partner_id,
        partners.data?.get(c.partner_id)?.name ?? '',
        c.sale_id,
        (c.amount_cents / 100).toFixed(2),
        c.currency,
        c.status,
        c.paid_at ?? '',
        c.refund_reason ?? '',
        c.payable_at ?? '',
        c.review_reason ?? '',
      ]),
    );
    const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `commissions-${program.slug}${status ? `-${status}` : ''}-page${page + 1}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };

  return (
    <>
      <p class="lede">
        {program.name} · amounts in {program.currency} · times in your timezone
      </p>
      {!canWrite && (
        <ReadOnlyNote>Your role can view commissions; owners and admins mark them paid.</ReadOnlyNote>
      )}
      <div class="toolbar">
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value as Filter | '');
              setPage(0);
              setChanged(new Map());
            }}
          >
            <option value="">All statuses</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
            <option value="review">held for review</option>
          </select>
        </label>
        <button type="button" disabled={rows.length === 0} onClick={exportCsv}>
          Export CSV<span class="sr-only"> of the commissions listed</span>
        </button>
      </div>
      <ErrorBox error={partners.error} />
      {list.error ? (
        <ErrorBox error={list.error} />
      ) : list.data === null || (partners.data === null && !partners.error) ? (
        // The rows wait for the partners' names: a row would otherwise say `Partner #<id>` for a moment.
        <Loading />
      ) : rows.length === 0 ? (
        <p>
          {status === 'review'
            ? 'No commissions wait for review.'
            : status
              ? `No ${status} commissions.`
              : 'No commissions yet.'}
        </p>
      ) : (
        <Table
          caption={`Commissions of ${program.name}`}
          hiddenCaption
          columns={[
            'Created',
            'Partner',
            'Sale',
            'Amount',
            'Status',
            'Payable on',
            'Paid',
            'Refund reason',
            canWrite && 'Action',
          ]}
        >
          {rows.map((c) => (
            <tr key={c.id} data-commission={c.id}>
              <td>{dateTime(c.created_at)}</td>
              <td>{partnerName(c.partner_id)}</td>
              <td>{c.sale_id === null ? `bonus #${c.bonus_id}` : `#${c.sale_id}`}</td>
              <td>{money(c.amount_cents, c.currency)}</td>
              <td>
                <span class={`badge ${c.status}`}>{c.status}</span>
                {isHeld(c) && (
                  <span class="held" data-testid="review-reason">
                    {' '}
                    Held: {reviewReasonText(c.review_reason!)}
                  </span>
                )}
              </td>
              <td>{dateTime(c.payable_at)}</td>
              <td>{dateTime(c.paid_at)}</td>
              <td>{c.refund_reason ?? '—'}</td>
              {canWrite && (
                <td>
                  {isHeld(c) ? (
                    <ReviewActions
                      commissionId={c.id}
                      label={`commission ${c.id} of ${partnerName(c.partner_id)}`}
                      onChanged={update}
                    />
                  ) : (
                    PAYABLE.includes(c.status) &&
                    c.payout_id === null && (
                      <ConfirmButton
                        label="Mark paid"
                        question={`Mark ${money(c.amount_cents, c.currency)} to ${partnerName(c.partner_id)} paid?`}
                        confirmLabel="Yes, mark paid"
                        onConfirm={() => markPaid(c)}
                      />
                    )
                  )}
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      <Pager label="Commission pages" page={page + 1} hasNext={hasNext} onPage={(p) => setPage(p - 1)} />
    </>
  );
}
