// Log in and Sign up: the session endpoints set the HttpOnly cookie; the app gets the public description.
import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { Link } from '../router.tsx';
import { logIn, signUp } from '../session.tsx';
import type { SessionInfo } from '../session.tsx';
import { ErrorBox } from '../widgets.tsx';
import { messageOf } from '../hooks.ts';

interface AuthProps {
  onSession(s: SessionInfo): void;
}

function AuthForm(props: {
  title: string;
  submit: string;
  busyText: string;
  onSubmit(form: FormData): Promise<void>;
  children: ComponentChildren;
  footer: ComponentChildren;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    document.title = `${props.title} · svc`;
  }, [props.title]);
  return (
    <main class="auth">
      <h1>{props.title}</h1>
      <p class="subtle">svc affiliate tracking</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          props.onSubmit(new FormData(e.currentTarget)).catch((err: unknown) => {
            setError(messageOf(err));
            setBusy(false);
          });
        }}
      >
        {props.children}
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? props.busyText : props.submit}
        </button>
      </form>
      <p>{props.footer}</p>
    </main>
  );
}

const str = (f: FormData, k: string) => String(f.get(k) ?? '').trim();

export function Login(props: AuthProps) {
  return (
    <AuthForm
      title="Log in"
      submit="Log in"
      busyText="Logging in…"
      onSubmit={async (f) => props.onSession(await logIn(str(f, 'email'), String(f.get('password') ?? '')))}
      footer={
        <>
          No account yet? <Link href="/signup">Sign up</Link>
        </>
      }
    >
      <label>
        Email
        <input name="email" type="email" autocomplete="username" required />
      </label>
      <label>
        Password
        <input name="password" type="password" autocomplete="current-password" required />
      </label>
    </AuthForm>
  );
}

export function Signup(props: AuthProps) {
  return (
    <AuthForm
      title="Sign up"
      submit="Create account"
      busyText="Creating account…"
      onSubmit={async (f) => {
        const name = str(f, 'name');
        const workspace = str(f, 'workspace_name');
        props.onSession(
          await signUp({
            email: str(f, 'email'),
            password: String(f.get('password') ?? ''),
            ...(name ? { name } : {}),
            ...(workspace ? { workspace_name: workspace } : {}),
          }),
        );
      }}
      footer={
        <>
          Already have an account? <Link href="/login">Log in</Link>
        </>
      }
    >
      <label>
        Email
        <input name="email" type="email" autocomplete="username" required />
      </label>
      <label>
        Password <span class="subtle">(at least 10 characters)</span>
        <input name="password" type="password" autocomplete="new-password" required minLength={10} />
      </label>
      <label>
        Your name <span class="subtle">(optional)</span>
        <input name="name" autocomplete="name" />
      </label>
      <label>
        Workspace name <span class="subtle">(optional)</span>
        <input name="workspace_name" autocomplete="organization" />
      </label>
    </AuthForm>
  );
}
