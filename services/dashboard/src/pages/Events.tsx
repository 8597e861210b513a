import type { ProgramPageProps } from '../app.tsx';
// Placeholder: filled in by the dashboard work (issue 12).
export function Events(_props: ProgramPageProps) {
  return <h1>Events</h1>;
}
