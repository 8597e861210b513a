// A progress bar towards a threshold (a tier rule's on the portal, a bonus's on both sides): a labelled
// `role="progressbar"` whose value and text a screen reader reads, the figures written beside it.
import { percentOf } from './rewards.ts';
import './progress.css';

export function ProgressBar(props: {
  /** What the bar measures: "Progress towards Gold". */
  label: string;
  value: number;
  max: number;
  /** The figures in words: "$420.00 of $1,000.00 of sales". */
  text: string;
  /** A reached bar is green. */
  done?: boolean;
}) {
  const pct = percentOf(props.value, props.max);
  return (
    <div class="progress-line">
      <div
        class={props.done || pct >= 100 ? 'progress done' : 'progress'}
        role="progressbar"
        aria-label={props.label}
        aria-valuemin={0}
        aria-valuemax={props.max}
        aria-valuenow={Math.min(props.value, props.max)}
        aria-valuetext={`${props.text} (${pct}%)`}
      >
        <span class="progress-fill" style={{ width: `${pct}%` }} />
      </div>
      <span class="progress-text">
        {props.text} <span class="subtle">({pct}%)</span>
      </span>
    </div>
  );
}
