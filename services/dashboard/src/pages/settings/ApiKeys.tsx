// Settings → API keys: management keys of the workspace, their scopes and programs (owners and admins).
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api.ts';
import { useSession } from '../../session.tsx';
import { ConfirmButton, ErrorBox, Show, Table } from '../../widgets.tsx';
import { SecretOnce } from '../../copy.tsx';
import { dateTime } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';
import type { Program } from '../../program.tsx';
import { SCOPES as ALL_SCOPES } from '../../../../../shared/contracts/management.ts';
import type { Scope } from '../../../../../shared/contracts/management.ts';
import { Check } from './Check.tsx';

/** The scopes a key can be given here; `*` (every scope) is the default when none is ticked. */
const SCOPES = ALL_SCOPES.filter((s) => s !== '*');

type Created = Answer<'post', '/api/advertiser/api-keys'>['data'];

export function ApiKeys({ programs }: { programs: Program[] }) {
  const { workspaceId } = useSession();
  const keys = useLoad(
    async () =>
      (await api.GET('/api/advertiser/api-keys', { params: { query: { workspace_id: workspaceId } } })).data,
    [workspaceId],
  );
  const [name, setName] = useState('');
  const [all, setAll] = useState(true);
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(['program:list', 'program:read']));
  const [programScope, setProgramScope] = useState<Set<number>>(new Set());
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<Created | null>(null);
  const submit = useAction();
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
              const r = await api.POST('/api/advertiser/api-keys', {
                body: {
                  workspace_id: workspaceId,
                  name,
                  scopes: all ? ['*'] : [...scopes],
                  program_scope: programScope.size ? [...programScope] : null,
                  expires_at: expires ? new Date(expires).toISOString() : null,
                },
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
                          await api.DELETE('/api/advertiser/api-keys/{id}', {
                            params: { path: { id: k.id }, query: { workspace_id: workspaceId } },
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
