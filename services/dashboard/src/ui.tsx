// Small pieces every page uses: loading data, showing errors, money and times, copy buttons.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change; errors become a message, never a blank page. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (e: unknown) => live && setState({ data: null, error: messageOf(e), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

export function ErrorBox(props: { error: string | null }) {
  if (!props.error) return null;
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

export function Loading() {
  return <p aria-live="polite">Loading…</p>;
}

/** Renders a Loaded's error or loading state, else the children. */
export function Show<T>(props: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (props.loaded.error) return <ErrorBox error={props.loaded.error} />;
  if (props.loaded.data === null) return <Loading />;
  return <>{props.children(props.loaded.data)}</>;
}

/** Cents in the program's currency, in the viewer's locale. */
export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100);
}

/** An instant in the viewer's timezone. */
export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function CopyButton(props: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={() =>
        void navigator.clipboard?.writeText(props.text).then(
          () => {
            setDone(true);
            setTimeout(() => setDone(false), 1500);
          },
          () => setDone(false),
        )
      }
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}
