// The UI's one pair of hooks around the API: useLoad reads (a page's data, with reload), useAction writes
// (a form's submit, a button's action, with busy and the error to show). Both turn a failure into the
// message the page shows (messageOf), never a blank page.
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

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

export interface Action {
  busy: boolean;
  /** The last run's error (messageOf), or one set by the caller (a check before the call). */
  error: string | null;
  setError(e: string | null): void;
  /** Runs `action`: busy meanwhile, the error cleared first and kept on failure; true on success. */
  run(action: () => Promise<unknown>): Promise<boolean>;
}

/** A form's submit or a button's action. */
export function useAction(): Action {
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

/** An error's text; a rate limit (429) with Retry-After also says when to try again. */
export function messageOf(e: unknown): string {
  if (e instanceof ApiError && e.status === 429) {
    const s = e.retryAfter;
    const wait = s
      ? ` Try again in ${s < 120 ? `${s} second${s === 1 ? '' : 's'}` : `${Math.ceil(s / 60)} minutes`}.`
      : '';
    return `${e.message.replace(/\.$/, '')}.${wait}`;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}
