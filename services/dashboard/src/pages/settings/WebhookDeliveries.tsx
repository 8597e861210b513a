// An endpoint's delivery log (Settings → Webhooks): each event sent to it with its status, attempts, the
// last answer's status code and error, when the next attempt is due, the payload, and a retry button.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer, RequestQuery } from '../../api.ts';
import { ErrorBox, Loading, Pager, Table } from '../../widgets.tsx';
import { dateTime } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';

type Endpoint = Answer<'get', '/api/advertiser/webhooks'>['data'][number];
type Status = NonNullable<
  NonNullable<RequestQuery<'get', '/api/advertiser/webhooks/{id}/deliveries'>>['status']
>;

const STATUSES: readonly Status[] = ['pending', 'delivered', 'failed'];

export function WebhookDeliveries({ endpoint }: { endpoint: Pick<Endpoint, 'id' | 'url' | 'status'> }) {
  const [status, setStatus] = useState<Status | ''>('');
  const [page, setPage] = useState(1);
  const [tick, setTick] = useState(0);
  const log = useLoad(
    () =>
      api.GET('/api/advertiser/webhooks/{id}/deliveries', {
        params: { path: { id: endpoint.id }, query: { status: status || undefined, page, pageSize: 20 } },
      }),
    [endpoint.id, status, page, tick],
  );
  const retry = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <div class="deliveries" aria-label={`Deliveries of ${endpoint.url}`} role="region">
      <div class="toolbar">
        <label>
          Status{' '}
          <select
            value={status}
            onChange={(e) => {
              setStatus((e.target as HTMLSelectElement).value as Status | '');
              setPage(1);
            }}
          >
            <option value="">All</option>
            {STATUSES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => setTick(tick + 1)}>
          Refresh
        </button>
      </div>
      <ErrorBox error={retry.error} />
      {notice && <p role="status">{notice}</p>}
      {log.error ? (
        <ErrorBox error={log.error} />
      ) : !log.data ? (
        <Loading />
      ) : log.data.data.length === 0 ? (
        <p>No deliveries{status ? ` with status ${status}` : ''} yet.</p>
      ) : (
        <>
          <Table
            caption={`Deliveries of ${endpoint.url}`}
            hiddenCaption
            columns={[
              'Created',
              'Event',
              'Status',
              'Attempts',
              'Response',
              'Next attempt',
              'Payload',
              'Action',
            ]}
          >
            {log.data.data.map((d) => (
              <tr key={d.id} data-delivery={d.id}>
                <td>{dateTime(d.created_at)}</td>
                <td>
                  {d.type}
                  <br />
                  <code class="muted">{d.webhook_id}</code>
                </td>
                <td>
                  <span class={`badge ${d.status === 'delivered' ? 'active' : d.status}`}>{d.status}</span>
                  {d.delivered_at && <span class="muted"> {dateTime(d.delivered_at)}</span>}
                </td>
                <td>{d.attempts}</td>
                <td>
                  {d.last_status_code ?? '—'}
                  {d.last_error && (
                    <>
                      <br />
                      <span class="muted">{d.last_error}</span>
                    </>
                  )}
                </td>
                <td>{d.status === 'pending' ? dateTime(d.next_attempt_at) : '—'}</td>
                <td>
                  <details>
                    <summary>
                      Show<span class="sr-only"> the payload of {d.webhook_id}</span>
                    </summary>
                    <pre class="payload">{JSON.stringify(d.payload, null, 2)}</pre>
                    {d.last_response && (
                      <>
                        <p class="muted">Last answer's body (first 4 KB):</p>
                        <pre class="payload">{d.last_response}</pre>
                      </>
                    )}
                  </details>
                </td>
                <td>
                  <button
                    type="button"
                    disabled={retry.busy || endpoint.status !== 'enabled'}
                    onClick={() =>
                      void retry
                        .run(async () => {
                          setNotice(null);
                          await api.POST('/api/advertiser/webhook-deliveries/{id}/retry', {
                            params: { path: { id: d.id } },
                          });
                          setNotice(`Delivery ${d.webhook_id} is attempted again now.`);
                        })
                        .then(() => setTick((n) => n + 1))
                    }
                  >
                    Retry<span class="sr-only"> {d.webhook_id}</span>
                  </button>
                </td>
              </tr>
            ))}
          </Table>
          <Pager label="Delivery pages" page={page} hasNext={log.data.meta.has_more} onPage={setPage} />
        </>
      )}
    </div>
  );
}
