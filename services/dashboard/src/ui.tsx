// Small pieces every page uses: loading data, showing errors, money and times, copy buttons.
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { api } from './api.ts';

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
export interface Rate {
  type: 'percentage' | 'flat';
  percent: number | null;
  amount_cents: number | null;
}
export interface CommissionPolicy extends Rate {
  recurring: { mode: 'one_time' | 'recurring'; months: number | null };
  product_rules: (Rate & { product_id: string })[];
}
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

/** A secret shown once (a tracking token, an API key): copy button and the warning. */
export function SecretOnce(props: { label: string; secret: string; onDone(): void }) {
  return (
    <section class="secret-once" role="status" aria-label={props.label}>
      <p>
        <strong>{props.label}</strong>: copy it now, <strong>you will not see it again</strong>.
      </p>
      <p class="secret-row">
        <code data-testid="secret">{props.secret}</code> <CopyButton text={props.secret} />
      </p>
      <button type="button" onClick={props.onDone}>
        I have saved it
      </button>
    </section>
  );
}

/**
 * A button that asks before acting: the first press shows the question with "Yes, …" and "Cancel";
 * errors of the action are shown beside it.
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
  if (!asking) {
    return (
      <button type="button" class={props.danger ? 'danger' : undefined} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm" role="group" aria-label={props.label}>
      <span>{props.question}</span>{' '}
      <button
        type="button"
        class={props.danger ? 'danger' : 'primary'}
        disabled={busy}
        ref={(el) => el?.focus()}
        onClick={() => {
          setBusy(true);
          setError(null);
          props.onConfirm().then(
            () => {
              setBusy(false);
              setAsking(false);
            },
            (e: unknown) => {
              setBusy(false);
              setError(messageOf(e));
            },
          );
        }}
      >
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
      <ErrorBox error={error} />
    </span>
  );
}

/** Previous / next page links for a paginated list. */
export function Pager(props: { page: number; pageCount: number; onPage(p: number): void }) {
  if (props.pageCount <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous page
      </button>
      <span>
        Page {props.page} of {props.pageCount}
      </span>
      <button
        type="button"
        disabled={props.page >= props.pageCount}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next page
      </button>
    </nav>
  );
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
