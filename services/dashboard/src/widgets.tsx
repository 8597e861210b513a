// The pieces every page shows: an error, loading, a loaded value, a button that asks first, pages of a
// list, a table, a read-only note, the geolocation credit.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import { useAction } from './hooks.ts';
import type { Loaded } from './hooks.ts';
import './pages/manage.css';

export function ErrorBox(props: { error: string | null }) {
  if (!props.error) return null;
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

/** A form's closing row: its submit button (`Saving…` while busy) and Cancel. */
export function SubmitCancel(props: { busy: boolean; label: string; onCancel: () => void }) {
  return (
    <p class="actions">
      <button type="submit" class="primary" disabled={props.busy}>
        {props.busy ? 'Saving…' : props.label}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
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
  const act = useAction();
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
            act.setError(null);
            setAsking(true);
          }}
        >
          {props.label}
        </button>
        <ErrorBox error={act.error} />
      </>
    );
  }
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
        disabled={act.busy}
        onClick={() => void act.run(props.onConfirm).then(() => setAsking(false))}
      >
        {props.confirmLabel ?? `Yes, ${props.label.toLowerCase()}`}
      </button>{' '}
      <button type="button" disabled={act.busy} onClick={() => setAsking(false)}>
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
