// Payouts (CONTRACT part two "Holding, reviewing and paying out"): the program's payouts newest first,
// filtered by status, a page at a time; "New payout" shows what would be paid before anything is created
// (PayoutPreview.tsx); the export files of pending (or the filtered status's) payouts; per pending payout,
// mark paid with a reference or cancel.
import { useState } from 'preact/hooks';
import { useSession } from '../session.tsx';
import { api } from '../api.ts';
import { ErrorBox, Loading, Pager, ReadOnlyNote, Table } from '../widgets.tsx';
import { dateTime, money } from '../format.ts';
import { programPage } from '../program.tsx';
import { useLoad } from '../hooks.ts';
import type { Program } from '../program.tsx';
import { AmountText, ExportLinks, MethodText, PAYOUT_STATUSES, PayoutActions } from './PayoutParts.tsx';
import type { Payout, PayoutStatus } from './PayoutParts.tsx';
import { PayoutPreview } from './PayoutPreview.tsx';
import '../parts.css';
import './payouts.css';

const PAGE_SIZE = 50;

export const Payouts = programPage('Payouts', PayoutsOf);

function PayoutsOf({ program }: { program: Program }) {
  const { canWrite } = useSession();
  const [status, setStatus] = useState<PayoutStatus | ''>('');
  const [page, setPage] = useState(0);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Payout[] | null>(null);
  // Payouts changed here (paid, canceled) as the API answered, until the list is read again.
  const [changed, setChanged] = useState<Map<number, Payout>>(new Map());
  const list = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/affiliate-programs/{id}/payouts', {
          params: {
            path: { id: program.id },
            query: { status: status || undefined, limit: PAGE_SIZE + 1, offset: page * PAGE_SIZE },
          },
        })
      ).data,
    [program.id, status, page],
  );
  const rows = (list.data ?? []).slice(0, PAGE_SIZE).map((p) => changed.get(p.id) ?? p);
  const hasNext = (list.data?.length ?? 0) > PAGE_SIZE;
  const reload = () => {
    setChanged(new Map());
    list.reload();
  };

  return (
    <>
      <p class="lede">
        {program.name} · amounts in {program.currency} · times in your timezone
      </p>
      {!canWrite && (
        <ReadOnlyNote>Your role can view payouts; owners and admins create and pay them.</ReadOnlyNote>
      )}
      {created && (
        <p class="note" role="status">
          {created.length === 0
            ? 'Nothing was payable any more: no payout was created.'
            : `Created ${created.length} ${created.length === 1 ? 'payout' : 'payouts'}, ${money(
                created.reduce((s, p) => s + p.amount_cents, 0),
                program.currency,
              )} in all. Export the file, send the money, then mark each payout paid.`}{' '}
          <button type="button" onClick={() => setCreated(null)}>
            Dismiss
          </button>
        </p>
      )}
      {creating ? (
        <PayoutPreview
          program={program}
          onCancel={() => setCreating(false)}
          onCreated={(payouts) => {
            setCreating(false);
            setCreated(payouts);
            reload();
          }}
        />
      ) : (
        canWrite && (
          <p>
            <button
              type="button"
              class="primary"
              onClick={() => {
                setCreated(null);
                setCreating(true);
              }}
            >
              New payout
            </button>
          </p>
        )
      )}
      <div class="toolbar">
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value as PayoutStatus | '');
              setPage(0);
              setChanged(new Map());
            }}
          >
            <option value="">All statuses</option>
            {PAYOUT_STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <ExportLinks programId={program.id} status={status || 'pending'} />
      </div>
      {list.error ? (
        <ErrorBox error={list.error} />
      ) : list.data === null ? (
        <Loading />
      ) : rows.length === 0 ? (
        <p>{status ? `No ${status} payouts.` : 'No payouts yet.'}</p>
      ) : (
        <Table
          caption={`Payouts of ${program.name}`}
          hiddenCaption
          columns={[
            'Created',
            'Partner',
            'Payout method',
            'Amount',
            'Commissions',
            'Status',
            'Paid',
            'Reference',
            canWrite && 'Action',
          ]}
        >
          {rows.map((p) => (
            <tr key={p.id} data-payout={p.id}>
              <td>{dateTime(p.created_at)}</td>
              <td>
                {p.partner_name} <span class="subtle">{p.partner_email}</span>
              </td>
              <td>
                <MethodText method={p.payout_method} />
              </td>
              <td>
                <AmountText payout={p} />
              </td>
              <td>{p.commission_ids.length}</td>
              <td>
                <span class={`badge ${p.status}`}>{p.status}</span>
              </td>
              <td>{dateTime(p.paid_at)}</td>
              <td>{p.reference ?? '—'}</td>
              {canWrite && (
                <td>
                  {p.status === 'pending' && (
                    <PayoutActions
                      payout={p}
                      onChanged={(np) => setChanged((m) => new Map(m).set(np.id, np))}
                    />
                  )}
                </td>
              )}
            </tr>
          ))}
        </Table>
      )}
      <Pager label="Payout pages" page={page + 1} hasNext={hasNext} onPage={(p) => setPage(p - 1)} />
    </>
  );
}
