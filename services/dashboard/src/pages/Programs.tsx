// Programs of the selected workspace: list, create, edit, go live, delete, regenerate the tracking token.
// The token is shown in full only in the create and regenerate answers, so this page shows it once.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { Link } from '../router.tsx';
import { useSession } from '../session.tsx';
import { ConfirmButton, ErrorBox, Show } from '../widgets.tsx';
import { PageTitle, useWorkspacePrograms } from '../program.tsx';
import { SecretOnce } from '../copy.tsx';
import { dateTime } from '../format.ts';
import { useAction } from '../hooks.ts';
import { policyText, productRulesText } from '../policy.ts';
import type { Program } from '../program.tsx';
import { PartnerSettingsFacts } from './ProgramPartnerFields.tsx';
import { PayoutSettingsFacts } from './ProgramPayoutFields.tsx';
import { ProgramForm } from './ProgramForm.tsx';

export function Programs() {
  const session = useSession();
  const loaded = useWorkspacePrograms(session.workspaceId);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<number | null>(null);
  const [token, setToken] = useState<{ program: string; token: string } | null>(null);

  return (
    <>
      <PageTitle title="Programs" />
      {token && (
        <SecretOnce
          title={`Tracking token of ${token.program}`}
          secret={token.token}
          doneLabel="I have saved it"
          onDone={() => setToken(null)}
        />
      )}
      {session.canWrite && !creating && (
        <p>
          <button type="button" class="primary" onClick={() => setCreating(true)}>
            New program
          </button>
        </p>
      )}
      {creating && (
        <ProgramForm
          title="New program"
          submit="Create program"
          onCancel={() => setCreating(false)}
          onSubmit={async (body) => {
            const created = (
              await api.POST('/api/advertiser/affiliate-programs', {
                body: { ...body, workspace_id: session.workspaceId },
              })
            ).data;
            setCreating(false);
            setToken({ program: created.name, token: created.api_token });
            loaded.reload();
          }}
        />
      )}
      <Show loaded={loaded}>
        {(programs) =>
          programs.length === 0 ? (
            <p>
              No programs in this workspace yet.
              {session.canWrite ? ' Create one to get a tracking token.' : ''}
            </p>
          ) : (
            <ul class="cards">
              {programs.map((p) => (
                <li class="card" key={p.id}>
                  {editing === p.id ? (
                    <ProgramForm
                      title={`Edit ${p.name}`}
                      submit="Save changes"
                      initial={p}
                      onCancel={() => setEditing(null)}
                      onSubmit={async (body) => {
                        await api.PUT('/api/advertiser/affiliate-programs/{id}', {
                          params: { path: { id: p.id } },
                          body,
                        });
                        setEditing(null);
                        loaded.reload();
                      }}
                    />
                  ) : (
                    <ProgramCard
                      program={p}
                      canWrite={session.canWrite}
                      onEdit={() => setEditing(p.id)}
                      onToken={(t) => setToken({ program: p.name, token: t })}
                      onChanged={loaded.reload}
                    />
                  )}
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </>
  );
}

function ProgramCard(props: {
  program: Program;
  canWrite: boolean;
  onEdit(): void;
  onToken(token: string): void;
  onChanged(): void;
}) {
  const p = props.program;
  const act = useAction();
  const path = { params: { path: { id: p.id } } };
  return (
    <article aria-labelledby={`program-${p.id}`}>
      <h2 id={`program-${p.id}`}>
        <Link href={`/programs/${p.id}/overview`}>{p.name}</Link>{' '}
        <span class={`badge ${p.status}`}>{p.status === 'live' ? 'Live' : 'Draft'}</span>
      </h2>
      <dl class="facts">
        <dt>Program id</dt>
        <dd>{p.id}</dd>
        <dt>Slug</dt>
        <dd>{p.slug}</dd>
        <dt>Commission</dt>
        <dd>{policyText(p.commission, p.currency)}</dd>
        {p.commission.product_rules.length > 0 && (
          <>
            <dt>Per product</dt>
            <dd>{productRulesText(p.commission, p.currency)}</dd>
          </>
        )}
        <dt>Attribution window</dt>
        <dd>{p.cookie_window_days} days</dd>
        <dt>Currency</dt>
        <dd>{p.currency}</dd>
        <dt>Allowed origins</dt>
        <dd>{p.allowed_origins.length ? p.allowed_origins.join(', ') : 'none (browser tracking refused)'}</dd>
        <dt>Tracking token</dt>
        <dd>
          <code>{p.api_token_masked ?? '—'}</code>
        </dd>
        <dt>Created</dt>
        <dd>{dateTime(p.created_at)}</dd>
        <PartnerSettingsFacts program={p} />
        <PayoutSettingsFacts program={p} />
      </dl>
      <p class="actions">
        <Link href={`/programs/${p.id}/overview`}>Overview</Link>
        <Link href={`/programs/${p.id}/integration`}>Integration</Link>
        {props.canWrite && (
          <>
            <button type="button" onClick={props.onEdit} disabled={act.busy}>
              Edit
            </button>
            {p.status === 'draft' && (
              <button
                type="button"
                class="primary"
                disabled={act.busy}
                onClick={() =>
                  void act.run(async () => {
                    await api.POST('/api/advertiser/affiliate-programs/{id}/go-live', path);
                    props.onChanged();
                  })
                }
              >
                Go live
              </button>
            )}
            <ConfirmButton
              label="Regenerate token"
              question="The current token stops working at once. Regenerate?"
              onConfirm={async () => {
                const r = await api.POST(
                  '/api/advertiser/affiliate-programs/{id}/regenerate-api-token',
                  path,
                );
                props.onToken(r.data.api_token);
                props.onChanged();
              }}
            />
            <ConfirmButton
              label="Delete"
              danger
              question={`Delete ${p.name}? Its tracking token is refused from then on.`}
              confirmLabel="Yes, delete"
              onConfirm={async () => {
                await api.DELETE('/api/advertiser/affiliate-programs/{id}', path);
                props.onChanged();
              }}
            />
          </>
        )}
      </p>
      <ErrorBox error={act.error} />
    </article>
  );
}
