// What an unverified account sees (an account made by a password typed into a public application form):
// only this. Its programs, money, links and payout method wait until a link mailed to its address is
// followed (or an invite to it accepted); the API answers every other partner route 403 until then.
import { useState } from 'preact/hooks';
import { ErrorBox } from '../../widgets.tsx';
import { requestMagicLink } from '../session.tsx';
import { Title } from '../parts.tsx';
import { useAction } from '../../hooks.ts';

export function VerifyEmail(props: { email: string; onSignOut(): Promise<void> }) {
  const send = useAction();
  const [sent, setSent] = useState(false);
  return (
    <main class="auth">
      <Title>Verify your email address</Title>
      <div class="banner" role="alert">
        <p>
          Before you see your programs, confirm that <strong>{props.email}</strong> is yours: follow the link
          we mailed to it. Anyone can type an address into an application form, so nothing is shown to an
          account until its owner has.
        </p>
      </div>
      <ErrorBox error={send.error} />
      {sent ? (
        <p role="status" class="sent">
          A new link is on its way to {props.email}. It works once, for 15 minutes.
        </p>
      ) : (
        <button
          type="button"
          class="primary"
          disabled={send.busy}
          onClick={() =>
            void send.run(async () => requestMagicLink(props.email)).then((ok) => ok && setSent(true))
          }
        >
          Mail me the link again
        </button>
      )}{' '}
      <button type="button" onClick={() => void props.onSignOut()}>
        Sign out
      </button>
    </main>
  );
}
