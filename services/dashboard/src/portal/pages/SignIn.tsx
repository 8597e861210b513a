// Signing in: with a password, or with a link mailed to the partner (/partner/magic#<token>), and accepting
// an advertiser's invite (/partner/invite#<token>: a name and a password, then the programs). The token
// reaches these pages from link-token.ts, already out of the address bar.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { Link } from '../../router.tsx';
import { ErrorBox } from '../../widgets.tsx';
import { acceptInvite, requestMagicLink, signIn, verifyMagicLink } from '../session.tsx';
import type { PartnerSessionInfo } from '../session.tsx';
import { Skeleton, Title } from '../parts.tsx';
import { messageOf, useAction } from '../../hooks.ts';

interface SessionProps {
  onSession(s: PartnerSessionInfo): void;
}

const str = (f: FormData, k: string) => String(f.get(k) ?? '').trim();

function Card(props: { title: string; children: ComponentChildren }) {
  return (
    <main class="auth">
      <Title>{props.title}</Title>
      <p class="subtle">svc partner portal</p>
      {props.children}
    </main>
  );
}

export function SignIn(props: SessionProps) {
  const password = useAction();
  const magic = useAction();
  const [sentTo, setSentTo] = useState<string | null>(null);
  return (
    <Card title="Sign in">
      <form
        aria-label="Sign in with a password"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          void password.run(async () => {
            props.onSession(await signIn(str(f, 'email'), String(f.get('password') ?? '')));
          });
        }}
      >
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <ErrorBox error={password.error} />
        <button type="submit" class="primary" disabled={password.busy}>
          {password.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <form
        class="magic"
        aria-label="Email me a sign-in link"
        onSubmit={(e) => {
          e.preventDefault();
          const email = str(new FormData(e.currentTarget), 'email');
          setSentTo(null);
          void magic.run(async () => {
            await requestMagicLink(email);
            setSentTo(email);
          });
        }}
      >
        <h2>No password?</h2>
        <p class="subtle">We email you a link that signs you in. It works once, for 15 minutes.</p>
        <label>
          Email for the link
          <input name="email" type="email" autocomplete="email" required />
        </label>
        <ErrorBox error={magic.error} />
        {sentTo && (
          <p role="status" class="sent">
            If <strong>{sentTo}</strong> belongs to a partner, a sign-in link is on its way. Check your inbox.
          </p>
        )}
        <button type="submit" disabled={magic.busy}>
          {magic.busy ? 'Sending…' : 'Email me a sign-in link'}
        </button>
      </form>
    </Card>
  );
}

/** The message of an invite or sign-in page opened without its token (a reload, a cut link). */
export const NO_TOKEN = 'This link has no token: open it again from your mail.';

/** /partner/magic#<token>: verified once on arrival (a mail scanner's GET does not spend it), then home. */
export function MagicLinkPage(props: SessionProps & { token: string | null }) {
  const [error, setError] = useState<string | null>(props.token === null ? NO_TOKEN : null);
  const started = useRef(false);
  useEffect(() => {
    if (started.current || props.token === null) return;
    started.current = true;
    verifyMagicLink(props.token).then(props.onSession, (e: unknown) => setError(messageOf(e)));
  }, [props.token]);
  return (
    <Card title="Signing you in">
      {error ? (
        <>
          <ErrorBox error={error} />
          <p>
            Sign-in links work once, for 15 minutes. <Link href="/partner/login">Ask for a new one</Link>.
          </p>
        </>
      ) : (
        <Skeleton lines={1} label="Checking your sign-in link" />
      )}
    </Card>
  );
}

/** /partner/invite#<token>: the invited partner names themselves and sets a password. */
export function InvitePage(props: SessionProps & { token: string | null }) {
  const submit = useAction();
  const { token } = props;
  if (token === null) {
    return (
      <Card title="Accept your invite">
        <ErrorBox error={NO_TOKEN} />
        <p>
          Invites work once, for 14 days; the advertiser can send a new one. Already accepted?{' '}
          <Link href="/partner/login">Sign in</Link>.
        </p>
      </Card>
    );
  }
  return (
    <Card title="Accept your invite">
      <p>
        You were invited to promote a program. Choose a password to sign in to the partner portal with your
        email from now on.
      </p>
      <form
        aria-label="Accept the invite"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          const name = str(f, 'name');
          const password = String(f.get('password') ?? '');
          void submit.run(async () => {
            props.onSession(
              await acceptInvite({
                token,
                ...(password ? { password } : {}),
                ...(name ? { name } : {}),
              }),
            );
          });
        }}
      >
        <label>
          Your name <span class="subtle">(optional)</span>
          <input name="name" autocomplete="name" maxLength={200} />
        </label>
        <label>
          Password <span class="subtle">(at least 10 characters)</span>
          <input name="password" type="password" autocomplete="new-password" minLength={10} />
        </label>
        <p class="note">
          Already have a partner account with this email? Leave the password empty to keep yours.
        </p>
        <ErrorBox error={submit.error} />
        <button type="submit" class="primary" disabled={submit.busy}>
          {submit.busy ? 'Accepting…' : 'Accept invite'}
        </button>
      </form>
    </Card>
  );
}
