// The advertiser's side of partner applications, on the Partners page: each partner's status (pending,
// approved, rejected), approve, reject with a reason the partner is told, a new invite link, and the invite
// link shown once after adding a partner (it is also mailed when mail is configured).
import { useState } from 'preact/hooks';
import { RejectForm } from './RejectForm.tsx';
import { api } from '../api.ts';
import type { Answer } from '../api.ts';
import { ErrorBox } from '../widgets.tsx';
import { SecretOnce } from '../copy.tsx';
import { useAction } from '../hooks.ts';
import '../parts.css';

export type PartnerStatus = Answer<
  'get',
  '/api/advertiser/affiliate-programs/{id}/partners'
>['data'][number]['status'];

export interface Invite {
  name: string;
  email: string;
  url: string;
}

export function StatusBadge(props: { status: PartnerStatus }) {
  return <span class={`badge ${props.status}`}>{props.status}</span>;
}

/** The invite link of a partner just added or re-invited: shown once, with where else it went. */
export function InviteOnce(props: { invite: Invite; onDone(): void }) {
  return (
    <SecretOnce
      title={`Invite link for ${props.invite.name}`}
      secret={props.invite.url}
      doneLabel="Done"
      onDone={props.onDone}
    >
      <p class="note">
        It was also mailed to {props.invite.email} (when mail is configured). It works for 14 days; a new
        invite replaces it. The partner follows it to set a password and see their links.
      </p>
    </SecretOnce>
  );
}

/** Approve / Reject (with a reason) / Invite again, as the partner's status allows. */
export function ReviewActions(props: {
  programId: number;
  partner: { id: number; name: string; email: string; status: PartnerStatus };
  onChanged(): void;
  onInvite(invite: Invite): void;
}) {
  const { partner } = props;
  const params = { path: { id: props.programId, partnerId: partner.id } };
  const act = useAction();
  const busy = act.busy;
  const [rejecting, setRejecting] = useState(false);
  const who = <span class="sr-only"> {partner.name}</span>;
  return (
    <div class="review">
      {partner.status !== 'approved' && (
        <button
          type="button"
          class="primary"
          disabled={busy}
          onClick={() =>
            void act.run(async () => {
              await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/approve', {
                params,
              });
              props.onChanged();
            })
          }
        >
          Approve{who}
        </button>
      )}
      {partner.status !== 'rejected' &&
        (rejecting ? (
          <RejectForm
            label={partner.name}
            hint="(optional, told to the partner)"
            confirm={`Yes, reject ${partner.name}`}
            busy={busy}
            onCancel={() => setRejecting(false)}
            onReject={(reason) =>
              void act.run(async () => {
                await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/reject', {
                  params,
                  body: reason ? { reason } : {},
                });
                setRejecting(false);
                props.onChanged();
              })
            }
          />
        ) : (
          <button type="button" class="danger" disabled={busy} onClick={() => setRejecting(true)}>
            Reject{who}
          </button>
        ))}
      <button
        type="button"
        disabled={busy}
        onClick={() =>
          void act.run(async () => {
            const r = await api.POST('/api/advertiser/affiliate-programs/{id}/partners/{partnerId}/invite', {
              params,
            });
            props.onInvite({ name: partner.name, email: partner.email, url: r.data.invite_url });
          })
        }
      >
        {partner.status === 'approved' ? 'Re-send invite' : 'Send invite'}
        {who}
      </button>
      <ErrorBox error={act.error} />
    </div>
  );
}
