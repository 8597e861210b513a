// Invitations (GET /api/partner/invitations): partner records a workspace made with the partner's email
// and the partner has not joined. Until the partner accepts, that workspace sees nothing of the account (no
// payout method, no name); declining hides it for good. Shown once the mailbox is verified (a sign-in link
// followed); before that, a line offering the link.
import { useState } from 'preact/hooks';
import { api } from '../../api.ts';
import { ErrorBox } from '../../widgets.tsx';
import { useAction, useLoad } from '../../hooks.ts';
import { requestMagicLink, usePartner } from '../session.tsx';
import { commissionText } from '../parts.tsx';

export function Invitations(props: { onAccepted(): void }) {
  const { info } = usePartner();
  if (!info.account.mailbox_verified) return <ConfirmMailbox email={info.account.email} />;
  return <InvitationList onAccepted={props.onAccepted} />;
}

function InvitationList(props: { onAccepted(): void }) {
  const [tick, setTick] = useState(0);
  const list = useLoad(async () => (await api.GET('/api/partner/invitations')).data, [tick]);
  const act = useAction();
  if (list.error) return <ErrorBox error={list.error} />;
  if (!list.data || list.data.length === 0) return null;
  const answer = (id: number, what: 'accept' | 'decline') =>
    void act
      .run(async () => {
        const params = { path: { partnerId: id } };
        if (what === 'accept') await api.POST('/api/partner/invitations/{partnerId}/accept', { params });
        else await api.POST('/api/partner/invitations/{partnerId}/decline', { params });
      })
      .then((ok) => {
        if (!ok) return;
        setTick((n) => n + 1);
        if (what === 'accept') props.onAccepted();
      });
  return (
    <section class="panel invitations" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Invitations</h2>
      <p class="subtle">
        These advertisers added a partner with your email address. They see nothing of your account (not your
        payout method, not your name) unless you accept.
      </p>
      <ErrorBox error={act.error} />
      <ul class="cards">
        {list.data.map((inv) => (
          <li class="card" key={inv.partner_id}>
            <article aria-label={`Invitation from ${inv.workspace_name ?? 'an advertiser'}`}>
              <h3>{inv.workspace_name ?? 'An advertiser'}</h3>
              <ul>
                {inv.programs.map((p) => (
                  <li key={p.id}>
                    <strong>{p.name}</strong>: {commissionText(p.commission, p.currency)}
                  </li>
                ))}
              </ul>
              <p class="actions">
                <button
                  type="button"
                  class="primary"
                  disabled={act.busy}
                  onClick={() => answer(inv.partner_id, 'accept')}
                >
                  Accept<span class="sr-only"> the invitation from {inv.workspace_name}</span>
                </button>
                <button type="button" disabled={act.busy} onClick={() => answer(inv.partner_id, 'decline')}>
                  Decline<span class="sr-only"> the invitation from {inv.workspace_name}</span>
                </button>
              </p>
            </article>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ConfirmMailbox(props: { email: string }) {
  const send = useAction();
  const [sent, setSent] = useState(false);
  return (
    <p class="subtle confirm-mailbox">
      Other advertisers may have invited {props.email}: to see their invitations, confirm the address with a
      sign-in link.{' '}
      {sent ? (
        <span role="status">Sent: check your inbox.</span>
      ) : (
        <button
          type="button"
          class="link"
          disabled={send.busy}
          onClick={() =>
            void send.run(async () => requestMagicLink(props.email)).then((ok) => ok && setSent(true))
          }
        >
          Send me the link
        </button>
      )}
      <ErrorBox error={send.error} />
    </p>
  );
}
