// Copying: a copy button, a code block with one, and a secret the API returns only once.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

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
