// Skeletons: grey bars in the shape of what is loading, so a page does not jump when its data arrives
// (the portal's pages and the dashboard's notifications use them; docs/portal.md).
import type { ComponentChildren } from 'preact';
import { ErrorBox } from './widgets.tsx';
import type { Loaded } from './hooks.ts';
import './parts.css';

export function Skeleton(props: { lines?: number; label?: string }) {
  return (
    <div class="skeleton" role="status" aria-busy="true" aria-label={props.label ?? 'Loading'}>
      {Array.from({ length: props.lines ?? 3 }, (_, i) => (
        <span key={i} class="skeleton-line" />
      ))}
    </div>
  );
}

/** A Loaded's error, its skeleton while nothing has arrived yet, else the children. */
export function View<T>(props: {
  loaded: Loaded<T>;
  lines?: number;
  label?: string;
  children: (data: T) => ComponentChildren;
}) {
  if (props.loaded.error) return <ErrorBox error={props.loaded.error} />;
  if (props.loaded.data === null) return <Skeleton lines={props.lines} label={props.label} />;
  return <>{props.children(props.loaded.data)}</>;
}
