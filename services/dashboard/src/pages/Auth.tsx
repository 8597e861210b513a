// Placeholder: filled in by the dashboard work (issue 12).
import type { SessionInfo } from '../session.tsx';
export function Login(_props: { onSession(s: SessionInfo): void }) {
  return <h1>Log in</h1>;
}
export function Signup(_props: { onSession(s: SessionInfo): void }) {
  return <h1>Sign up</h1>;
}
