// Small pieces every page uses: loading data, showing errors, money and times, copy buttons, a button
// that asks first, a secret shown once, pages of a list.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { ApiError, api } from './api.ts';
import type { CommissionPolicy, Rate } from '../../../shared/contracts/management.ts';
import './pages/manage.css';

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

/** Copies with the Clipboard API, or (plain HTTP on a non-local host) through a selected textarea. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  const ok = document.execCommand('copy');
  ta.remove();
  if (!ok) throw new Error('copy refused');
}

export function CopyButton(props: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'done' | 'failed'>('idle');
  return (
    <button
      type="button"
      onClick={() =>
        void copyText(props.text).then(
          () => {
            setState('done');
            setTimeout(() => setState('idle'), 1500);
          },
          () => setState('failed'),
        )
      }
    >
      {state === 'done'
        ? 'Copied'
        : state === 'failed'
          ? 'Copy failed: select the text'
          : (props.label ?? 'Copy')}
    </button>
  );
}

// ---- Added with the pages (Programs, Overview, Events, Integration, Docs) ----

/** A whole number in the viewer's locale. */
export function num(n: number): string {
  return new Intl.NumberFormat().format(n);
}

/** A program as the management API returns it (services/api/modules/programs/routes.ts). */
export type { CommissionPolicy, Rate };
export interface Program {
  id: number;
  workspace_id: number;
  name: string;
  slug: string;
  status: 'draft' | 'live';
  cookie_window_days: number;
  currency: string;
  commission: CommissionPolicy;
  allowed_origins: string[];
  api_token_masked: string | null;
  created_at: string;
}

/** The program of a program page (its name and currency), loaded once per id. */
export function useProgram(programId: number): Loaded<Program> {
  return useLoad(
    async () => (await api.get<{ data: Program }>(`/api/advertiser/affiliate-programs/${programId}`)).data,
    [programId],
  );
}

/** What a program page gets from the route table (app.tsx): the program's id from the path. */
export interface ProgramPageProps {
  programId: number;
}

/** A page of one program: its heading, then `Body` once the program is loaded (or the error). */
export function programPage(title: string, Body: (props: { program: Program }) => ComponentChildren) {
  return function ProgramPage({ programId }: ProgramPageProps) {
    const program = useProgram(programId);
    return (
      <>
        <h1>{title}</h1>
        <Show loaded={program}>{(p) => <Body program={p} />}</Show>
      </>
    );
  };
}

/** The page's title line: the page name and, when known, the program's. */
export function PageTitle(props: { title: string; program?: Program | null }) {
  useEffect(() => {
    document.title = props.program ? `${props.title} · ${props.program.name} · svc` : `${props.title} · svc`;
  }, [props.title, props.program?.name]);
  return (
    <h1>
      {props.title}
      {props.program && <span class="subtle"> · {props.program.name}</span>}
    </h1>
  );
}

/** The programs of one workspace (the list route returns those of every workspace the user is in). */
export function useWorkspacePrograms(workspaceId: number): Loaded<Program[]> {
  return useLoad(
    async () =>
      (await api.get<{ data: Program[] }>('/api/advertiser/affiliate-programs')).data.filter(
        (p) => p.workspace_id === workspaceId,
      ),
    [workspaceId],
  );
}

/**
 * A secret the API returns only once (a tracking token, an API key, a signing secret): the value, a copy
 * button and the warning, until dismissed. It takes the focus when it appears.
 */
export function SecretOnce(props: {
  title: string;
  secret: string;
  onDone(): void;
  doneLabel?: string;
  children?: ComponentChildren;
}) {
  const ref = useRef<HTMLElement>(null);
  // Layout effects run as the DOM is committed: whoever sees the section sees it focused.
  useLayoutEffect(() => ref.current?.focus(), [props.secret]);
  return (
    <section class="shown-once" role="status" aria-label={props.title} tabIndex={-1} ref={ref}>
      <strong>{props.title}</strong>
      <p>
        <code class="secret" data-testid="secret">
          {props.secret}
        </code>{' '}
        <CopyButton text={props.secret} />
      </p>
      <p>
        Copy it now and keep it safe: <strong>you will not see it again</strong>.
      </p>
      {props.children}
      <button type="button" onClick={props.onDone}>
        {props.doneLabel ?? 'Done'}
      </button>
    </section>
  );
}

/**
 * A button that asks first: the question replaces it with "Yes, …" and Cancel (focus on the answer,
 * Escape cancels, the focus goes back to the button). An error of `onConfirm` is shown beside the button.
 */
export function ConfirmButton(props: {
  label: string;
  question: string;
  confirmLabel?: string;
  danger?: boolean;
  onConfirm(): Promise<void>;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const openRef = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  // In the commit, not after the next paint: the question never shows without the focus on its answer.
  useLayoutEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (wasAsking.current) openRef.current?.focus();
    wasAsking.current = asking;
  }, [asking]);

  if (!asking) {
    return (
      <>
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
      </>
    );
  }
  const run = async () => {
    setBusy(true);
    try {
      await props.onConfirm();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
      setAsking(false);
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
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>{' '}
      <button type="button" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/**
 * Previous / next buttons for a paged list: `pageCount` when the total is known, else `hasNext`. Pages
 * count from 1; `note` follows the page number ("26 events").
 */
export function Pager(props: {
  page: number;
  pageCount?: number;
  hasNext?: boolean;
  label?: string;
  note?: string;
  onPage(p: number): void;
}) {
  const hasNext = props.pageCount !== undefined ? props.page < props.pageCount : !!props.hasNext;
  if (props.pageCount !== undefined ? props.pageCount <= 1 : props.page <= 1 && !hasNext) return null;
  return (
    <nav class="pager" aria-label={props.label ?? 'Pages'}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous page
      </button>
      <span>
        Page {props.page}
        {props.pageCount !== undefined && ` of ${props.pageCount}`}
        {props.note && ` (${props.note})`}
      </span>
      <button type="button" disabled={!hasNext} onClick={() => props.onPage(props.page + 1)}>
        Next page
      </button>
    </nav>
  );
}

/**
 * A table in a wrapper that scrolls sideways on a narrow screen (the page itself never does): the caption
 * (`hiddenCaption`: for screen readers only), the column headings (false: a column left out) and the rows.
 */
export function Table(props: {
  caption?: ComponentChildren;
  hiddenCaption?: boolean;
  class?: string;
  columns: (string | false)[];
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table class={props.class}>
        {props.caption !== undefined && (
          <caption class={props.hiddenCaption ? 'sr-only' : undefined}>{props.caption}</caption>
        )}
        <thead>
          <tr>{props.columns.map((c) => c !== false && <th scope="col">{c}</th>)}</tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
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

/** The credit DB-IP's licence (CC BY 4.0) asks for wherever its geolocation data is shown. */
export function GeoCredit() {
  return (
    <p class="credit">
      <a href="https://db-ip.com">IP Geolocation by DB-IP</a>
    </p>
  );
}

/** A <pre> block with a copy button. */
export function CodeBlock(props: { code: string; label: string }) {
  return (
    <figure class="code">
      <figcaption>
        {props.label} <CopyButton text={props.code} label={`Copy ${props.label.toLowerCase()}`} />
      </figcaption>
      <pre>
        <code>{props.code}</code>
      </pre>
    </figure>
  );
}
