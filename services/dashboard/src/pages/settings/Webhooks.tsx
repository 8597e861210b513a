// Settings → Webhooks: the workspace's outbound webhook endpoints (docs/webhooks.md). Add one (URL, the
// events it receives, the programs), its signing secret shown once; send a test; rotate the secret;
// disable, enable, delete; and each endpoint's delivery log (WebhookDeliveries.tsx). Owners and admins
// only: member and viewer roles have no webhooks:read.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api.ts';
import { useSession } from '../../session.tsx';
import { ConfirmButton, ErrorBox, Show, Table } from '../../widgets.tsx';
import { SecretOnce } from '../../copy.tsx';
import { dateTime } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';
import type { Program } from '../../program.tsx';
import { WEBHOOK_EVENT_TYPES } from '../../../../../shared/contracts/webhook-events.ts';
import type { WebhookEventType } from '../../../../../shared/contracts/webhook-events.ts';
import { Check } from './Check.tsx';
import { WebhookDeliveries } from './WebhookDeliveries.tsx';

/** Event types an endpoint can pick (`webhook.test` is sent on request whatever it picked). */
const PICKABLE = WEBHOOK_EVENT_TYPES.filter((t) => t !== 'webhook.test');

const REASONS: Record<string, string> = {
  manual: 'disabled by hand',
  failing: 'disabled: every delivery failed for days',
  gone: 'disabled: it answered 410 Gone',
};

export function Webhooks({ programs }: { programs: Program[] }) {
  const { workspaceId } = useSession();
  const endpoints = useLoad(
    async () =>
      (await api.GET('/api/advertiser/webhooks', { params: { query: { workspace_id: workspaceId } } })).data,
    [workspaceId],
  );
  const [secret, setSecret] = useState<{ title: string; value: string; until?: string } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);
  const action = useAction();
  const programName = (id: number) => programs.find((p) => p.id === id)?.name ?? `#${id}`;

  const act = (label: string, run: () => Promise<void>) =>
    void action
      .run(async () => {
        setNotice(null);
        await run();
        setNotice(label);
      })
      .then(() => endpoints.reload());

  return (
    <section id="webhooks" aria-labelledby="webhooks-h">
      <h2 id="webhooks-h">Webhooks</h2>
      <p class="note">
        svc sends each lead, sale, refund, commission change, partner and payout event to these HTTPS URLs,
        signed with the endpoint's <code>whsec_</code> secret in the Standard Webhooks format: verify it with
        a <code>standardwebhooks</code> library and dedupe on the <code>webhook-id</code> header (see{' '}
        <a href="/docs">the API reference</a> and docs/webhooks.md). Failed deliveries are retried for about a
        day and a half.
      </p>
      {secret && (
        <SecretOnce title={secret.title} secret={secret.value} onDone={() => setSecret(null)}>
          {secret.until && (
            <p>
              The previous secret also signs every delivery until {dateTime(secret.until)}: switch your
              receiver to the new one before then.
            </p>
          )}
        </SecretOnce>
      )}
      {!secret && (
        <AddEndpoint
          programs={programs}
          onAdded={(ep) => {
            setSecret({ title: `Signing secret of ${ep.url}`, value: ep.secret });
            endpoints.reload();
          }}
        />
      )}
      <ErrorBox error={action.error} />
      {notice && <p role="status">{notice}</p>}
      <Show loaded={endpoints}>
        {(list) =>
          list.length === 0 ? (
            <p>No webhook endpoints yet.</p>
          ) : (
            <Table
              caption="Webhook endpoints"
              hiddenCaption
              columns={['Endpoint', 'Events', 'Programs', 'Status', 'Actions']}
            >
              {list.map((ep) => (
                <Fragment key={ep.id}>
                  <tr data-endpoint={ep.id} class={ep.status === 'disabled' ? 'inactive' : undefined}>
                    <td class="endpoint-url">
                      <code>{ep.url}</code>
                      {ep.description && (
                        <>
                          <br />
                          <span class="muted">{ep.description}</span>
                        </>
                      )}
                    </td>
                    <td>{ep.events.includes('*') ? 'All events' : ep.events.join(', ')}</td>
                    <td>{ep.program_ids ? ep.program_ids.map(programName).join(', ') : 'All'}</td>
                    <td>
                      <span class={`badge ${ep.status === 'enabled' ? 'active' : 'failed'}`}>
                        {ep.status}
                      </span>
                      {ep.disabled_reason && <span class="muted"> {REASONS[ep.disabled_reason]}</span>}
                      {ep.status === 'enabled' && ep.failing_since && (
                        <span class="muted"> failing since {dateTime(ep.failing_since)}</span>
                      )}
                    </td>
                    <td class="actions">
                      <button
                        type="button"
                        aria-expanded={open === ep.id}
                        onClick={() => setOpen(open === ep.id ? null : ep.id)}
                      >
                        {open === ep.id ? 'Hide deliveries' : 'Deliveries'}
                        <span class="sr-only"> of {ep.url}</span>
                      </button>
                      {ep.status === 'enabled' ? (
                        <>
                          <button
                            type="button"
                            disabled={action.busy}
                            onClick={() =>
                              act(`A test event is on its way to ${ep.url}.`, async () => {
                                await api.POST('/api/advertiser/webhooks/{id}/test', {
                                  params: { path: { id: ep.id } },
                                });
                                setOpen(ep.id);
                              })
                            }
                          >
                            Send test<span class="sr-only"> to {ep.url}</span>
                          </button>
                          <button
                            type="button"
                            disabled={action.busy}
                            onClick={() =>
                              act(`${ep.url} is disabled.`, async () => {
                                await api.PUT('/api/advertiser/webhooks/{id}', {
                                  params: { path: { id: ep.id } },
                                  body: { status: 'disabled' },
                                });
                              })
                            }
                          >
                            Disable<span class="sr-only"> {ep.url}</span>
                          </button>
                        </>
                      ) : (
                        <button
                          type="button"
                          class="primary"
                          disabled={action.busy}
                          onClick={() =>
                            act(`${ep.url} is enabled; its waiting deliveries go out now.`, async () => {
                              await api.POST('/api/advertiser/webhooks/{id}/enable', {
                                params: { path: { id: ep.id } },
                              });
                            })
                          }
                        >
                          Enable<span class="sr-only"> {ep.url}</span>
                        </button>
                      )}
                      <ConfirmButton
                        label="Rotate secret"
                        question="Create a new signing secret? The current one keeps signing for 24 hours."
                        confirmLabel="Yes, rotate"
                        onConfirm={async () => {
                          const r = await api.POST('/api/advertiser/webhooks/{id}/rotate-secret', {
                            params: { path: { id: ep.id } },
                          });
                          setSecret({
                            title: `New signing secret of ${ep.url}`,
                            value: r.data.secret,
                            until: r.data.previous_secret_expires_at,
                          });
                          endpoints.reload();
                        }}
                      />
                      <ConfirmButton
                        label="Delete"
                        danger
                        question={`Delete ${ep.url} and its delivery log? Pending deliveries are dropped.`}
                        confirmLabel="Yes, delete"
                        onConfirm={async () => {
                          await api.DELETE('/api/advertiser/webhooks/{id}', {
                            params: { path: { id: ep.id } },
                          });
                          if (open === ep.id) setOpen(null);
                          endpoints.reload();
                        }}
                      />
                    </td>
                  </tr>
                  {open === ep.id && (
                    <tr class="deliveries-row">
                      <td colSpan={5}>
                        <WebhookDeliveries endpoint={ep} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </Table>
          )
        }
      </Show>
    </section>
  );
}

function AddEndpoint(props: {
  programs: Program[];
  onAdded(ep: Answer<'post', '/api/advertiser/webhooks'>['data']): void;
}) {
  const { workspaceId } = useSession();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState<Set<WebhookEventType>>(
    new Set(['sale.created', 'commission.created']),
  );
  const [programIds, setProgramIds] = useState<Set<number>>(new Set());
  const submit = useAction();
  const toggle = <T,>(set: Set<T>, v: T, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(v);
    else next.delete(v);
    return next;
  };
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit.run(async () => {
          const r = await api.POST('/api/advertiser/webhooks', {
            body: {
              workspace_id: workspaceId,
              url: url.trim(),
              events: all ? ['*'] : [...events],
              program_ids: programIds.size ? [...programIds] : null,
              description: description.trim() || null,
            },
          });
          setUrl('');
          setDescription('');
          props.onAdded(r.data);
        });
      }}
    >
      <fieldset>
        <legend>Add an endpoint</legend>
        <label>
          URL{' '}
          <input
            type="url"
            required
            placeholder="https://example.com/webhooks/svc"
            maxLength={2048}
            value={url}
            onInput={(e) => setUrl((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Description (optional){' '}
          <input
            maxLength={500}
            value={description}
            onInput={(e) => setDescription((e.target as HTMLInputElement).value)}
          />
        </label>
        <fieldset>
          <legend>Events</legend>
          <Check label="All events" checked={all} onChange={setAll} />
          {!all &&
            PICKABLE.map((t) => (
              <Check label={t} checked={events.has(t)} onChange={(on) => setEvents(toggle(events, t, on))} />
            ))}
        </fieldset>
        <fieldset>
          <legend>Programs (none checked: every program of the workspace)</legend>
          {props.programs.length === 0 && <p class="note">This workspace has no programs yet.</p>}
          {props.programs.map((p) => (
            <Check
              label={p.name}
              checked={programIds.has(p.id)}
              onChange={(on) => setProgramIds(toggle(programIds, p.id, on))}
            />
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={submit.busy || (!all && events.size === 0)}>
          Add endpoint
        </button>
      </fieldset>
      <ErrorBox error={submit.error} />
    </form>
  );
}
