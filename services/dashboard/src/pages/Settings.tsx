// Settings of the selected workspace: members, API keys (both owner/admin only, as the API decides) and
// the payment-processor connection with its webhook URLs, signing secret and the events it received.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { useSession } from '../session.tsx';
import type { Role } from '../session.tsx';
import {
  ConfirmButton,
  CopyButton,
  ErrorBox,
  Loading,
  Pager,
  ReadOnlyNote,
  SecretOnce,
  Show,
  Table,
  dateTime,
  useLoad,
  useSubmit,
  useWorkspacePrograms,
} from '../ui.tsx';
import type { Program } from '../ui.tsx';
import {
  CONNECTION_STATUSES,
  PROCESSOR_OUTCOMES,
  ROLES,
  SCOPES as ALL_SCOPES,
} from '../../../../shared/contracts/management.ts';

export function Settings() {
  const { info, workspaceId, canWrite, role } = useSession();
  const workspace = info.workspaces.find((w) => w.id === workspaceId);
  const programs = useWorkspacePrograms(workspaceId);
  return (
    <>
      <h1>Settings</h1>
      <p class="lede">
        Workspace {workspace?.name ?? `#${workspaceId}`} · your role: {role}
      </p>
      <nav class="toc" aria-label="Settings sections">
        <a href="#members">Members</a> <a href="#api-keys">API keys</a>{' '}
        <a href="#processor">Payment processor</a>
      </nav>
      {canWrite ? (
        <>
          <Members key={`m${workspaceId}`} />
          <ApiKeys key={`k${workspaceId}`} programs={programs.data ?? []} />
        </>
      ) : (
        <>
          <section id="members" aria-labelledby="members-h">
            <h2 id="members-h">Members</h2>
            <ReadOnlyNote>Only owners and admins of this workspace manage its members.</ReadOnlyNote>
          </section>
          <section id="api-keys" aria-labelledby="api-keys-h">
            <h2 id="api-keys-h">API keys</h2>
            <ReadOnlyNote>Only owners and admins of this workspace manage its API keys.</ReadOnlyNote>
          </section>
        </>
      )}
      <Processor key={`p${workspaceId}`} programs={programs} />
    </>
  );
}

// ---- Members ----

interface Member {
  user_id: number;
  email: string;
  name: string | null;
  role: Role;
  status: 'active' | 'inactive';
  created_at: string;
}

function Members() {
  const { workspaceId, role: myRole, info } = useSession();
  const members = useLoad(
    async () =>
      (await api.get<{ data: Member[] }>('/api/advertiser/members', { workspace_id: workspaceId })).data,
    [workspaceId],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const add = useSubmit();
  const change = useSubmit();
  const [notice, setNotice] = useState<string | null>(null);
  // The API's rules, so what it would refuse is not offered: only an owner grants the owner role or
  // changes or removes an owner; the last active owner is neither demoted nor removed.
  const grantable = ROLES.filter((r) => r !== 'owner' || myRole === 'owner');
  const activeOwners = (members.data ?? []).filter((m) => m.role === 'owner' && m.status === 'active').length;
  const mayChange = (m: Member) =>
    m.status === 'active' && (m.role !== 'owner' || (myRole === 'owner' && activeOwners > 1));

  const setMemberRole = (m: Member, r: Role) =>
    void change
      .run(async () => {
        await api.put(`/api/advertiser/members/${m.user_id}`, { role: r }, { workspace_id: workspaceId });
      })
      .then((ok) => {
        if (ok) setNotice(`${m.email} is now ${r}.`);
        members.reload();
      });

  return (
    <section id="members" aria-labelledby="members-h">
      <h2 id="members-h">Members</h2>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          setNotice(null);
          void add
            .run(async () => {
              await api.post('/api/advertiser/members', { workspace_id: workspaceId, email, role });
            })
            .then((ok) => {
              if (!ok) return;
              setNotice(`${email.trim()} was added as ${role}.`);
              setEmail('');
              members.reload();
            });
        }}
      >
        <fieldset>
          <legend>Add a member</legend>
          <p class="note">They must have signed up already; add them by the email they signed up with.</p>
          <label>
            Email{' '}
            <input
              type="email"
              required
              value={email}
              onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            Role{' '}
            <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)}>
              {grantable.map((r) => (
                <option value={r}>{r}</option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary" disabled={add.busy}>
            Add member
          </button>
        </fieldset>
        <ErrorBox error={add.error} />
      </form>
      <ErrorBox error={change.error} />
      {notice && <p role="status">{notice}</p>}
      <Show loaded={members}>
        {(list) => (
          <Table caption="Members" hiddenCaption columns={['Member', 'Role', 'Status', 'Joined', 'Action']}>
            {list.map((m) => (
              <tr key={m.user_id} class={m.status === 'inactive' ? 'inactive' : undefined}>
                <td>
                  {m.name ?? m.email}
                  {m.user_id === info.user.id && ' (you)'}
                  {m.name && (
                    <>
                      <br />
                      <span class="muted">{m.email}</span>
                    </>
                  )}
                </td>
                <td>
                  {mayChange(m) ? (
                    <label class="compact">
                      <span class="sr-only">Role of {m.email}</span>
                      <select
                        value={m.role}
                        disabled={change.busy}
                        onChange={(e) => setMemberRole(m, (e.target as HTMLSelectElement).value as Role)}
                      >
                        {ROLES.filter((r) => grantable.includes(r) || r === m.role).map((r) => (
                          <option value={r}>{r}</option>
                        ))}
                      </select>
                    </label>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{m.status}</td>
                <td>{dateTime(m.created_at)}</td>
                <td>
                  {mayChange(m) && (
                    <ConfirmButton
                      label="Remove"
                      danger
                      question={`Remove ${m.email}? Their API keys here are revoked.`}
                      confirmLabel="Yes, remove"
                      onConfirm={async () => {
                        await api.del(`/api/advertiser/members/${m.user_id}`, {
                          workspace_id: workspaceId,
                        });
                        members.reload();
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Show>
      <p class="note">
        Demoting a member to member or viewer, or removing them, revokes the API keys they created here.
      </p>
    </section>
  );
}

// ---- API keys ----

/** The scopes a key can be given here; `*` (every scope) is the default when none is ticked. */
const SCOPES = ALL_SCOPES.filter((s) => s !== '*');

interface ApiKey {
  id: number;
  name: string;
  prefix: string;
  scopes: string[];
  program_scope: string[] | null;
  status: 'active' | 'revoked';
  expires_at: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  key_masked: string;
}

function ApiKeys({ programs }: { programs: Program[] }) {
  const { workspaceId } = useSession();
  const keys = useLoad(
    async () =>
      (await api.get<{ data: ApiKey[] }>('/api/advertiser/api-keys', { workspace_id: workspaceId })).data,
    [workspaceId],
  );
  const [name, setName] = useState('');
  const [all, setAll] = useState(true);
  const [scopes, setScopes] = useState<Set<string>>(new Set(['program:list', 'program:read']));
  const [programScope, setProgramScope] = useState<Set<number>>(new Set());
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const submit = useSubmit();
  const programName = (id: string) => programs.find((p) => String(p.id) === id)?.name ?? `#${id}`;

  const toggle = <T,>(set: Set<T>, v: T, on: boolean) => {
    const next = new Set(set);
    if (on) next.add(v);
    else next.delete(v);
    return next;
  };

  return (
    <section id="api-keys" aria-labelledby="api-keys-h">
      <h2 id="api-keys-h">API keys</h2>
      <p class="note">
        Management API keys act in this workspace with the scopes you choose (see the{' '}
        <a href="/docs">API reference</a>). They cannot manage members or keys.
      </p>
      {created ? (
        <SecretOnce
          title={`API key "${created.name}" created`}
          secret={created.key}
          onDone={() => setCreated(null)}
        />
      ) : (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (expires && new Date(expires).getTime() <= Date.now()) {
              submit.setError('The expiry must be in the future.');
              return;
            }
            void submit.run(async () => {
              const r = await api.post<{ data: ApiKey & { key: string } }>('/api/advertiser/api-keys', {
                workspace_id: workspaceId,
                name,
                scopes: all ? ['*'] : [...scopes],
                program_scope: programScope.size ? [...programScope] : null,
                expires_at: expires ? new Date(expires).toISOString() : null,
              });
              setCreated(r.data);
              setName('');
              setExpires('');
              keys.reload();
            });
          }}
        >
          <fieldset>
            <legend>Create an API key</legend>
            <label>
              Name{' '}
              <input
                required
                maxLength={200}
                value={name}
                onInput={(e) => setName((e.target as HTMLInputElement).value)}
              />
            </label>
            <fieldset>
              <legend>Scopes</legend>
              <Check label="All scopes (*)" checked={all} onChange={setAll} />
              {!all &&
                SCOPES.map((s) => (
                  <Check
                    label={s}
                    checked={scopes.has(s)}
                    onChange={(on) => setScopes(toggle(scopes, s, on))}
                  />
                ))}
            </fieldset>
            <fieldset>
              <legend>Programs (none checked: every program of the workspace)</legend>
              {programs.length === 0 && <p class="note">This workspace has no programs yet.</p>}
              {programs.map((p) => (
                <Check
                  label={p.name}
                  checked={programScope.has(p.id)}
                  onChange={(on) => setProgramScope(toggle(programScope, p.id, on))}
                />
              ))}
            </fieldset>
            <label>
              Expires (your time; empty: never){' '}
              <input
                type="datetime-local"
                value={expires}
                onInput={(e) => setExpires((e.target as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" class="primary" disabled={submit.busy || (!all && scopes.size === 0)}>
              Create key
            </button>
          </fieldset>
          <ErrorBox error={submit.error} />
        </form>
      )}
      <Show loaded={keys}>
        {(list) =>
          list.length === 0 ? (
            <p>No API keys yet.</p>
          ) : (
            <Table
              caption="API keys"
              hiddenCaption
              columns={['Name', 'Key', 'Scopes', 'Programs', 'Status', 'Expires', 'Last used', 'Action']}
            >
              {list.map((k) => (
                <tr key={k.id} data-key={k.id} class={k.status === 'revoked' ? 'inactive' : undefined}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.key_masked}</code>
                  </td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{k.program_scope ? k.program_scope.map(programName).join(', ') : 'All'}</td>
                  <td>
                    {k.status}
                    {k.revoked_at && <span class="muted"> {dateTime(k.revoked_at)}</span>}
                  </td>
                  <td>{k.expires_at ? dateTime(k.expires_at) : 'Never'}</td>
                  <td>{dateTime(k.last_used_at)}</td>
                  <td>
                    {k.status === 'active' && (
                      <ConfirmButton
                        label="Revoke"
                        danger
                        question={`Revoke "${k.name}"? Calls with it fail from now on.`}
                        confirmLabel="Yes, revoke"
                        onConfirm={async () => {
                          await api.del(`/api/advertiser/api-keys/${k.id}`, {
                            workspace_id: workspaceId,
                          });
                          keys.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
    </section>
  );
}

// ---- Payment processor ----

interface Connection {
  status: (typeof CONNECTION_STATUSES)[number];
  account_id: string | null;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  connected_at: string | null;
  webhook_secret_masked: string | null;
}

function Processor({ programs }: { programs: ReturnType<typeof useWorkspacePrograms> }) {
  const { workspaceId, canWrite } = useSession();
  const conn = useLoad(
    async () =>
      (
        await api.get<{ data: Connection }>('/api/advertiser/processor-connection', {
          workspace_id: workspaceId,
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
      <Show loaded={programs}>
        {(list) =>
          list.length === 0 ? (
            <p>This workspace has no programs yet.</p>
          ) : (
            <ul class="webhooks">
              {list.map((p) => {
                const url = `${location.origin}/api/v1/webhooks/processor/${p.id}`;
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
      {programs.data && programs.data.length > 0 && <ProcessorEvents programs={programs.data} />}
    </section>
  );
}

const yesNo = (b: boolean) => (b ? 'yes' : 'no');

function ConnectionForm(props: {
  current: Connection;
  onSaved: (r: { webhook_secret: string }) => void;
  onRolled: (secret: string, until: string) => void;
}) {
  const { workspaceId } = useSession();
  const [status, setStatus] = useState<Connection['status']>(
    props.current.status === 'pending' && !props.current.webhook_secret_masked
      ? 'connected'
      : props.current.status,
  );
  const [account, setAccount] = useState(props.current.account_id ?? '');
  const [charges, setCharges] = useState(props.current.charges_enabled);
  const [payouts, setPayouts] = useState(props.current.payouts_enabled);
  const [details, setDetails] = useState(props.current.details_submitted);
  const submit = useSubmit();
  const connected = props.current.webhook_secret_masked !== null;
  return (
    <>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit.run(async () => {
            const r = await api.put<{ data: { webhook_secret: string } }>(
              '/api/advertiser/processor-connection',
              {
                workspace_id: workspaceId,
                status,
                account_id: account.trim() || null,
                charges_enabled: charges,
                payouts_enabled: payouts,
                details_submitted: details,
              },
              { workspace_id: workspaceId },
            );
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
              onChange={(e) => setStatus((e.target as HTMLSelectElement).value as Connection['status'])}
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
              const r = await api.post<{ data: { webhook_secret: string; previous_valid_until: string } }>(
                '/api/advertiser/processor-connection/roll-secret',
                {},
                { workspace_id: workspaceId },
              );
              props.onRolled(r.data.webhook_secret, r.data.previous_valid_until);
            }}
          />
        </p>
      )}
    </>
  );
}

interface ProcessorEvent {
  id: number;
  event_id: string;
  type: string;
  livemode: boolean;
  received_at: string;
  outcome: string;
  reason: string | null;
  transaction_id: string | null;
  sale_id: number | null;
  commission_id: number | null;
}
interface EventsPage {
  data: ProcessorEvent[];
  meta: { pagination: { page: number; pageSize: number; pageCount: number; total: number } };
}

function ProcessorEvents({ programs }: { programs: Program[] }) {
  const [programId, setProgramId] = useState(programs[0]!.id);
  const [outcome, setOutcome] = useState('');
  const [page, setPage] = useState(1);
  const events = useLoad(
    () =>
      api.get<EventsPage>('/api/advertiser/processor-events', {
        program_id: programId,
        outcome,
        page,
        pageSize: 20,
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
              setOutcome((e.target as HTMLSelectElement).value);
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

/** A checkbox with its label after it. */
function Check(props: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)}
      />{' '}
      {props.label}
    </label>
  );
}
