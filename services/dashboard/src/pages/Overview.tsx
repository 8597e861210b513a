import type { ProgramPageProps } from '../app.tsx';
// Placeholder: filled in by the dashboard work (issue 12).
export function Overview(_props: ProgramPageProps) {
  return <h1>Overview</h1>;
}
