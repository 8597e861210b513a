// Settings → Payment processor: the connection, its webhook URLs and signing secret, and the events it
// received.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api.ts';
import { useSession } from '../../session.tsx';
import { ConfirmButton, ErrorBox, Loading, Pager, ReadOnlyNote, Show, Table } from '../../widgets.tsx';
import { CopyButton, SecretOnce } from '../../copy.tsx';
import { dateTime } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';
import type { Program, useWorkspacePrograms } from '../../program.tsx';
import { CONNECTION_STATUSES, PROCESSOR_OUTCOMES } from '../../../../../shared/contracts/management.ts';
import { Check } from './Check.tsx';

type Connection = Answer<'get', '/api/advertiser/processor-connection'>['data'];
type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
type Outcome = (typeof PROCESSOR_OUTCOMES)[number];

export function Processor({ programs }: { programs: ReturnType<typeof useWorkspacePrograms> }) {
  const { workspaceId, canWrite } = useSession();
  const conn = useLoad(
    async () =>
      (
        await api.GET('/api/advertiser/processor-connection', {
          params: { query: { workspace_id: workspaceId } },
        })
      ).data,
    [workspaceId],
  );
  const [secret, setSecret] = useState<{ title: string; value: string; until?: string } | null>(null);

  return (
    <section id="processor" aria-labelledby="processor-h">
      <h2 id="processor-h">Payment processor</h2>
      <p class="note">
        Stripe reports sales and refunds to svc through webhooks, verified with this workspace's{' '}
        <code>whsec_</code> signing secret. Steps: connect here, add one webhook endpoint per program in
        Stripe with the URL below, and pass the attribution as checkout metadata (docs/stripe.md).
      </p>
      {secret && (
        <SecretOnce title={secret.title} secret={secret.value} onDone={() => setSecret(null)}>
          {secret.until && (
            <p>
              The previous secret keeps verifying until {dateTime(secret.until)}: update Stripe before then.
            </p>
          )}
        </SecretOnce>
      )}
      <Show loaded={conn}>
        {(c) => (
          <>
            <dl class="facts">
              <dt>Status</dt>
              <dd>
                <span class={`badge ${c.status}`}>{c.status}</span>
              </dd>
              <dt>Account</dt>
              <dd>{c.account_id ?? '—'}</dd>
              <dt>Charges / payouts / details</dt>
              <dd>
                {yesNo(c.charges_enabled)} / {yesNo(c.payouts_enabled)} / {yesNo(c.details_submitted)}
              </dd>
              <dt>Connected</dt>
              <dd>{dateTime(c.connected_at)}</dd>
              <dt>Signing secret</dt>
              <dd>
                {c.webhook_secret_masked ? (
                  <code>{c.webhook_secret_masked}</code>
                ) : (
                  'none yet (created on connect)'
                )}
              </dd>
            </dl>
            {canWrite ? (
              <ConnectionForm
                current={c}
                onSaved={(s) => {
                  setSecret(
                    s.webhook_secret && !c.webhook_secret_masked
                      ? { title: 'Webhook signing secret created', value: s.webhook_secret }
                      : null,
                  );
                  conn.reload();
                }}
                onRolled={(value, until) => {
                  setSecret({ title: 'New webhook signing secret', value, until });
                  conn.reload();
                }}
              />
            ) : (
              <ReadOnlyNote>Owners and admins connect the processor and roll its secret.</ReadOnlyNote>
            )}
          </>
        )}
      </Show>
      <h3>Webhook URLs</h3>
      <WebhookUrls programs={programs} urlOf={(id) => `${location.origin}/api/v1/webhooks/processor/${id}`} />
      {programs.data && programs.data.length > 0 && <ProcessorEvents programs={programs.data} />}
    </section>
  );
}

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

/** Each program's webhook URL with a Copy button (every processor's page lists them alike). */
export function WebhookUrls(props: {
  programs: ReturnType<typeof useWorkspacePrograms>;
  urlOf: (programId: number) => string;
}) {
  return (
    <Show loaded={props.programs}>
      {(list) =>
        list.length === 0 ? (
          <p>This workspace has no programs yet.</p>
        ) : (
          <ul class="webhooks">
            {list.map((p) => {
              const url = props.urlOf(p.id);
              return (
                <li key={p.id}>
                  {p.name}: <code>{url}</code> <CopyButton text={url} label="Copy URL" />
                </li>
              );
            })}
          </ul>
        )
      }
    </Show>
  );
}

function ConnectionForm(props: {
  current: Connection;
  onSaved: (r: { webhook_secret: string }) => void;
  onRolled: (secret: string, until: string) => void;
}) {
  const { workspaceId } = useSession();
  const [status, setStatus] = useState<ConnectionStatus>(
    props.current.status === 'pending' && !props.current.webhook_secret_masked
      ? 'connected'
      : (props.current.status as ConnectionStatus),
  );
  const [account, setAccount] = useState(props.current.account_id ?? '');
  const [charges, setCharges] = useState(props.current.charges_enabled);
  const [payouts, setPayouts] = useState(props.current.payouts_enabled);
  const [details, setDetails] = useState(props.current.details_submitted);
  const submit = useAction();
  const connected = props.current.webhook_secret_masked !== null;
  return (
    <>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit.run(async () => {
            const r = await api.PUT('/api/advertiser/processor-connection', {
              params: { query: { workspace_id: workspaceId } },
              body: {
                workspace_id: workspaceId,
                status,
                account_id: account.trim() || null,
                charges_enabled: charges,
                payouts_enabled: payouts,
                details_submitted: details,
              },
            });
            props.onSaved(r.data);
          });
        }}
      >
        <fieldset>
          <legend>{connected ? 'Update the connection' : 'Connect the processor'}</legend>
          <label>
            Status{' '}
            <select
              value={status}
              onChange={(e) => setStatus((e.target as HTMLSelectElement).value as ConnectionStatus)}
            >
              {CONNECTION_STATUSES.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          </label>
          <label>
            Account id (optional){' '}
            <input
              value={account}
              maxLength={255}
              placeholder="acct_…"
              onInput={(e) => setAccount((e.target as HTMLInputElement).value)}
            />
          </label>
          <Check label="Charges enabled" checked={charges} onChange={setCharges} />
          <Check label="Payouts enabled" checked={payouts} onChange={setPayouts} />
          <Check label="Details submitted" checked={details} onChange={setDetails} />
          <button type="submit" class="primary" disabled={submit.busy}>
            {connected ? 'Save connection' : 'Connect'}
          </button>
        </fieldset>
        <ErrorBox error={submit.error} />
      </form>
      {connected && (
        <p>
          <ConfirmButton
            label="Roll signing secret"
            question="Create a new signing secret? The current one keeps working for 24 hours."
            confirmLabel="Yes, roll it"
            onConfirm={async () => {
              const r = await api.POST('/api/advertiser/processor-connection/roll-secret', {
                params: { query: { workspace_id: workspaceId } },
              });
              props.onRolled(r.data.webhook_secret, r.data.previous_valid_until);
            }}
          />
        </p>
      )}
    </>
  );
}

function ProcessorEvents({ programs }: { programs: Program[] }) {
  const [programId, setProgramId] = useState(programs[0]!.id);
  const [outcome, setOutcome] = useState<Outcome | ''>('');
  const [page, setPage] = useState(1);
  const events = useLoad(
    () =>
      api.GET('/api/advertiser/processor-events', {
        params: { query: { program_id: programId, outcome: outcome || undefined, page, pageSize: 20 } },
      }),
    [programId, outcome, page],
  );
  return (
    <>
      <h3>Processor events</h3>
      <div class="toolbar">
        <label>
          Program{' '}
          <select
            value={String(programId)}
            onChange={(e) => {
              setProgramId(Number((e.target as HTMLSelectElement).value));
              setPage(1);
            }}
          >
            {programs.map((p) => (
              <option value={String(p.id)}>{p.name}</option>
            ))}
          </select>
        </label>
        <label>
          Outcome{' '}
          <select
            value={outcome}
            onChange={(e) => {
              setOutcome((e.target as HTMLSelectElement).value as Outcome | '');
              setPage(1);
            }}
          >
            <option value="">All outcomes</option>
            {PROCESSOR_OUTCOMES.map((o) => (
              <option value={o}>{o}</option>
            ))}
          </select>
        </label>
      </div>
      {events.error ? (
        <ErrorBox error={events.error} />
      ) : !events.data ? (
        <Loading />
      ) : events.data.data.length === 0 ? (
        <p>No processor events{outcome ? ` with outcome ${outcome}` : ''} for this program yet.</p>
      ) : (
        <>
          <Table
            caption="Processor events"
            hiddenCaption
            columns={['Received', 'Event', 'Outcome', 'Reason', 'Transaction', 'Sale / commission']}
          >
            {events.data.data.map((ev) => (
              <tr key={ev.id}>
                <td>{dateTime(ev.received_at)}</td>
                <td>
                  {ev.type}
                  {!ev.livemode && <span class="muted"> (test)</span>}
                  <br />
                  <code class="muted">{ev.event_id}</code>
                </td>
                <td>
                  <span class={`badge ${ev.outcome}`}>{ev.outcome}</span>
                </td>
                <td>{ev.reason ?? '—'}</td>
                <td>{ev.transaction_id ?? '—'}</td>
                <td>
                  {ev.sale_id !== null ? `#${ev.sale_id}` : '—'}
                  {ev.commission_id !== null && ` / #${ev.commission_id}`}
                </td>
              </tr>
            ))}
          </Table>
          <Pager
            label="Processor event pages"
            page={page}
            pageCount={events.data.meta.pagination.pageCount}
            note={`${events.data.meta.pagination.total} events`}
            onPage={setPage}
          />
        </>
      )}
    </>
  );
}
