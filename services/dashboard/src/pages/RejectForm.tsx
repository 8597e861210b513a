// The reject confirmation of a review (a partner's application, a held commission): an optional reason,
// focused when it opens; Escape cancels.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

export function RejectForm(props: {
  /** What is rejected, for the form's accessible name. */
  label: string;
  /** Beside "Reason": who sees it, e.g. "(optional, told to the partner)". */
  hint: string;
  /** The submit button's text. */
  confirm: string;
  busy: boolean;
  onReject(reason: string): void;
  onCancel(): void;
}) {
  const [reason, setReason] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => input.current?.focus(), []);
  return (
    <form
      class="confirm"
      aria-label={`Reject ${props.label}`}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onCancel();
      }}
      onSubmit={(e) => {
        e.preventDefault();
        props.onReject(reason.trim());
      }}
    >
      <label class="compact">
        Reason <span class="subtle">{props.hint}</span>
        <input
          ref={input}
          value={reason}
          maxLength={500}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="danger" disabled={props.busy}>
        {props.confirm}
      </button>
      <button type="button" disabled={props.busy} onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}
