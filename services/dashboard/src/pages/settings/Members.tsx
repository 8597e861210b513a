// Settings → Members: the workspace's members and their roles (owners and admins only, as the API decides).
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import type { Answer } from '../../api.ts';
import { useSession } from '../../session.tsx';
import type { Role } from '../../session.tsx';
import { ConfirmButton, ErrorBox, Show, Table } from '../../widgets.tsx';
import { dateTime } from '../../format.ts';
import { useAction, useLoad } from '../../hooks.ts';
import { ROLES } from '../../../../../shared/contracts/management.ts';

type Member = Answer<'get', '/api/advertiser/members'>['data'][number];

export function Members() {
  const { workspaceId, role: myRole, info } = useSession();
  const members = useLoad(
    async () =>
      (await api.GET('/api/advertiser/members', { params: { query: { workspace_id: workspaceId } } })).data,
    [workspaceId],
  );
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const add = useAction();
  const change = useAction();
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
        await api.PUT('/api/advertiser/members/{userId}', {
          params: { path: { userId: m.user_id }, query: { workspace_id: workspaceId } },
          body: { role: r },
        });
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
              await api.POST('/api/advertiser/members', { body: { workspace_id: workspaceId, email, role } });
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
                        await api.DELETE('/api/advertiser/members/{userId}', {
                          params: { path: { userId: m.user_id }, query: { workspace_id: workspaceId } },
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
