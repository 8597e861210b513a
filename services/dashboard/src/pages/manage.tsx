// Pieces the Partners, Commissions and Settings pages share: the program they belong to, a button that
// asks before it acts, and a secret that is shown once.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api } from '../api.ts';
import { CopyButton, ErrorBox, messageOf, useLoad } from '../ui.tsx';
import type { Loaded } from '../ui.tsx';
import './manage.css';

/** A program as GET /api/advertiser/affiliate-programs(/:id) returns it (the fields these pages read). */
export interface ProgramInfo {
  id: number;
  workspace_id: number;
  name: string;
  slug: string;
  status: 'draft' | 'live';
  currency: string;
  allowed_origins: string[];
}

export function useProgram(programId: number): Loaded<ProgramInfo> {
  return useLoad(
    async () =>
      (await api.get<{ data: ProgramInfo }>(`/api/advertiser/affiliate-programs/${programId}`)).data,
    [programId],
  );
}

/** The programs of one workspace (the list route returns those of every workspace the user is in). */
export function useWorkspacePrograms(workspaceId: number): Loaded<ProgramInfo[]> {
  return useLoad(
    async () =>
      (await api.get<{ data: ProgramInfo[] }>('/api/advertiser/affiliate-programs')).data.filter(
        (p) => p.workspace_id === workspaceId,
      ),
    [workspaceId],
  );
}

/**
 * A button that asks first: the question replaces it with Confirm and Cancel (focus on Confirm, Escape
 * cancels). `action` errors are shown beside it.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  danger?: boolean;
  action: () => Promise<void>;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) openRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <span class="confirm">
        <button
          ref={openRef}
          type="button"
          class={props.danger ? 'danger' : undefined}
          onClick={() => {
            setError(null);
            setAsking(true);
          }}
        >
          {props.label}
        </button>
        <ErrorBox error={error} />
      </span>
    );
  }
  const run = async () => {
    setBusy(true);
    try {
      await props.action();
      setAsking(false);
    } catch (e) {
      setError(messageOf(e));
      setAsking(false);
    } finally {
      setBusy(false);
    }
  };
  return (
    <span
      class="confirm"
      role="group"
      aria-label={props.question}
      onKeyDown={(e) => {
        if (e.key === 'Escape') setAsking(false);
      }}
    >
      <span>{props.question}</span>{' '}
      <button
        ref={confirmRef}
        type="button"
        class={props.danger ? 'danger' : 'primary'}
        disabled={busy}
        onClick={() => void run()}
      >
        {props.confirmLabel ?? 'Confirm'}
      </button>{' '}
      <button type="button" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A secret the API returns only once: the value, a copy button and the warning, until dismissed. */
export function ShownOnce(props: {
  title: string;
  value: string;
  onDone: () => void;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), [props.value]);
  return (
    <div class="shown-once" role="status" tabIndex={-1} ref={ref}>
      <strong>{props.title}</strong>
      <p>
        <code class="secret">{props.value}</code> <CopyButton text={props.value} />
      </p>
      <p>Copy it now and keep it safe: you will not see it again.</p>
      {props.children}
      <button type="button" onClick={props.onDone}>
        Done
      </button>
    </div>
  );
}

/** A form's submit: runs `action`, shows its error under the form; true on success. */
export function useSubmit(): {
  busy: boolean;
  error: string | null;
  setError(e: string | null): void;
  run(action: () => Promise<void>): Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return {
    busy,
    error,
    setError,
    async run(action) {
      setBusy(true);
      setError(null);
      try {
        await action();
        return true;
      } catch (e) {
        setError(messageOf(e));
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

/** A read-only note for roles that may not change something. */
export function ReadOnlyNote(props: { children: ComponentChildren }) {
  return <p class="note">{props.children}</p>;
}
