// A uPlot line chart of daily series, sized to its container, with the UTC day on x. Used by the
// dashboard's Overview and the partner portal's program page (the same performance shape).
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: number[];
}

export function DailyChart(props: {
  title: string;
  /** The UTC days, `YYYY-MM-DD`, one per value of each series. */
  days: { date: string }[];
  series: ChartSeries[];
  format(v: number): string;
  /** Where the same figures are as text (the chart's accessible name says so). */
  tableNote?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { days, series, format } = props;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [{}, { values: (_u, splits) => splits.map((v) => format(v)), size: 80 }],
        series: [
          {
            label: 'Day (UTC)',
            value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)),
          },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            points: { show: days.length <= 31 },
            value: (_u: uPlot, v: number | null) => (v == null ? '—' : format(v)),
          })),
        ],
      },
      [xs, ...series.map((s) => s.values)],
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize({ width: width(), height: 240 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [days, series.map((s) => s.values.join(',')).join('|')]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div
        ref={box}
        role="img"
        aria-label={`${props.title}; ${props.tableNote ?? 'the same figures are in the table below'}`}
      />
    </figure>
  );
}
