import type { ProgramPageProps } from '../app.tsx';
// Placeholder: filled in by the dashboard work (issue 12).
export function Partners(_props: ProgramPageProps) {
  return <h1>Partners</h1>;
}
