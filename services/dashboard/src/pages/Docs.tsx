// Placeholder: filled in by the dashboard work (issue 12).
export function Docs() {
  return <h1>Docs</h1>;
}
