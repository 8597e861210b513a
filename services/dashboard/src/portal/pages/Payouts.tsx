// The partner's payouts: what the advertisers paid them, newest first. Empty until a payout exists. Above
// them, per program, what is owed and not paid yet (pending, held for review, approved: ../money.tsx).
import { api } from '../../api.ts';
import { Link } from '../../router.tsx';
import { Table } from '../../widgets.tsx';
import { dateTime, money } from '../../format.ts';
import { useLoad } from '../../hooks.ts';
import { Owed, owedParts } from '../money.tsx';
import { Title, View } from '../parts.tsx';
import { usePartnerPrograms } from '../programs.ts';

export function Payouts() {
  const payouts = useLoad(async () => (await api.GET('/api/partner/payouts')).data, []);
  const programs = usePartnerPrograms();
  const owing = (programs.data ?? []).filter((p) => owedParts(p).length > 0);
  const byId = new Map((programs.data ?? []).map((p) => [p.program.id, p.program.name]));
  return (
    <>
      <Title>Payouts</Title>
      {owing.length > 0 && (
        <ul class="owed-list" aria-label="Owed, not paid yet">
          {owing.map((p) => (
            <li key={p.program.id}>
              <Owed p={p} label={p.program.name} />
            </li>
          ))}
        </ul>
      )}
      <View loaded={payouts} lines={4} label="Loading your payouts">
        {(list) =>
          list.length === 0 ? (
            <p class="empty">
              No payouts yet. When an advertiser pays your approved commissions, the payout shows here with
              its amount and reference. Make sure your{' '}
              <Link href="/partner/payout-method">payout method</Link> is set.
            </p>
          ) : (
            <Table
              caption="Your payouts"
              hiddenCaption
              columns={['Created', 'Program', 'Amount', 'Status', 'Paid', 'Reference']}
            >
              {list.map((p) => (
                <tr key={p.id}>
                  <td>{dateTime(p.created_at)}</td>
                  <td>{byId.get(p.program_id) ?? `Program ${p.program_id}`}</td>
                  <td>
                    <strong>{money(p.amount_cents, p.currency)}</strong>
                  </td>
                  <td>
                    <span class={`badge ${p.status}`}>{p.status}</span>
                  </td>
                  <td>{dateTime(p.paid_at)}</td>
                  <td>{p.reference ?? '—'}</td>
                </tr>
              ))}
            </Table>
          )
        }
      </View>
    </>
  );
}
