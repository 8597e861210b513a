// Placeholder: filled in by the dashboard work (issue 12).
export function Programs() {
  return <h1>Programs</h1>;
}
