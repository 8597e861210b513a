// The partner's commissions over all their programs, newest first: what each sale earned, its status,
// when it becomes payable and the payout it went into. Filters by program and status, 25 a page.
import { api } from '../../api.ts';
import { navigate, useLocation } from '../../router.tsx';
import { Pager, Table } from '../../widgets.tsx';
import { dateTime, money } from '../../format.ts';
import { useLoad } from '../../hooks.ts';
import type { Answer, RequestQuery } from '../../api.ts';
import { Skeleton, Title, View } from '../parts.tsx';
import { usePartnerPrograms } from '../programs.ts';

type CommissionStatus = Answer<'get', '/api/partner/commissions'>['data'][number]['status'];
type Query = NonNullable<RequestQuery<'get', '/api/partner/commissions'>>;

const PAGE_SIZE = 25;
const STATUSES: CommissionStatus[] = ['pending', 'approved', 'paid', 'reversed', 'refunded'];
const STATUS_NOTE: Record<CommissionStatus, string> = {
  pending: 'waiting for its hold to end',
  approved: 'payable in the next payout',
  paid: 'paid to you',
  reversed: 'taken back (the sale was refunded or rejected)',
  refunded: 'taken back after it was paid: deducted from a later payout',
};

export function Commissions() {
  const { query } = useLocation();
  const programId = query.get('program_id') ?? '';
  const status = query.get('status') ?? '';
  const page = Math.max(1, Number(query.get('page')) || 1);
  const programs = usePartnerPrograms();
  const rows = useLoad(
    () =>
      api.GET('/api/partner/commissions', {
        params: {
          query: {
            // As the address has them ('' is left out); the API answers a bad one with its 400.
            program_id: programId as unknown as Query['program_id'],
            status: status as Query['status'],
            page,
            pageSize: PAGE_SIZE,
          },
        },
      }),
    [programId, status, page],
  );
  const set = (changes: Record<string, string | number>) => {
    const q = new URLSearchParams({ program_id: programId, status, page: String(page), ...changes });
    for (const [k, v] of [...q]) if (!v || (k === 'page' && v === '1')) q.delete(k);
    const s = q.toString();
    navigate(`/partner/commissions${s ? `?${s}` : ''}`, true);
  };
  const byId = new Map((programs.data ?? []).map((p) => [p.program.id, p.program.name]));

  return (
    <>
      <Title>Commissions</Title>
      <form class="toolbar" aria-label="Filter commissions" onSubmit={(e) => e.preventDefault()}>
        <label>
          Program
          <select
            value={programId}
            onChange={(e) => set({ program_id: (e.target as HTMLSelectElement).value, page: 1 })}
          >
            <option value="">All programs</option>
            {(programs.data ?? []).map((p) => (
              <option value={String(p.program.id)}>{p.program.name}</option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select
            value={status}
            onChange={(e) => set({ status: (e.target as HTMLSelectElement).value, page: 1 })}
          >
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </form>
      <View loaded={rows} lines={6} label="Loading your commissions">
        {(r) =>
          // The rows name their program: they wait for the names (the programs answer) too, rather than
          // flash "Program 7" first.
          programs.data === null && !programs.error ? (
            <Skeleton lines={6} label="Loading your commissions" />
          ) : r.data.length === 0 ? (
            <p class="empty">
              {page > 1
                ? 'No more commissions.'
                : 'No commissions yet. Each sale you refer earns one, listed here as soon as it is recorded.'}
            </p>
          ) : (
            <>
              <Table
                caption="Your commissions"
                hiddenCaption
                class="commissions"
                columns={['Created', 'Program', 'Sale', 'Commission', 'Status', 'Payable on', 'Payout']}
              >
                {r.data.map((c) => (
                  <tr key={c.id} data-commission={c.id}>
                    <td>{dateTime(c.created_at)}</td>
                    <td>{byId.get(c.program_id) ?? `Program ${c.program_id}`}</td>
                    <td>{c.sale_amount_cents === null ? 'bonus' : money(c.sale_amount_cents, c.currency)}</td>
                    <td>
                      <strong>{money(c.amount_cents, c.currency)}</strong>
                      {!!c.deducted_cents && (
                        <span class="negative"> −{money(c.deducted_cents, c.currency)} refunded</span>
                      )}
                    </td>
                    <td>
                      <span class={`badge ${c.status}`} title={STATUS_NOTE[c.status]}>
                        {c.status}
                      </span>
                      {c.under_review && (
                        <span
                          class="badge review"
                          title="Held for the advertiser's review: not payable until approved"
                        >
                          under review
                        </span>
                      )}
                    </td>
                    <td>{c.payable_at ? dateTime(c.payable_at) : '—'}</td>
                    <td>{c.payout_id ? `#${c.payout_id}` : '—'}</td>
                  </tr>
                ))}
              </Table>
              <Pager
                page={page}
                pageCount={r.meta.pagination.pageCount}
                note={`${r.meta.pagination.total} commissions`}
                label="Commission pages"
                onPage={(p) => set({ page: p })}
              />
            </>
          )
        }
      </View>
      <details class="note">
        <summary>What the statuses mean</summary>
        <dl class="facts">
          {STATUSES.map((s) => (
            <>
              <dt>{s}</dt>
              <dd>{STATUS_NOTE[s]}</dd>
            </>
          ))}
        </dl>
      </details>
    </>
  );
}
