// A checkbox with its label after it (the settings forms' scopes, programs, flags and event types).
/** A checkbox with its label after it. */
export function Check(props: { label: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label class="check">
      <input
        type="checkbox"
        checked={props.checked}
        onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)}
      />{' '}
      {props.label}
    </label>
  );
}
