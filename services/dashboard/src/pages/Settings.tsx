// Placeholder: filled in by the dashboard work (issue 12).
export function Settings() {
  return <h1>Settings</h1>;
}
