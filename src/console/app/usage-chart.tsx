import type { UsageDay } from '../../wire/types';

export type { UsageDay };

/** Loads per day as bars (SVG, no inline style: the CSP allows none), with the figures as a table. */
export function UsageChart({ days }: { days: UsageDay[] }) {
  const width = 600;
  const height = 140;
  const max = Math.max(1, ...days.map((d) => d.loads));
  const bar = width / Math.max(days.length, 1);
  const total = days.reduce((n, d) => n + d.loads, 0);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height + 20}`}
        role="img"
        aria-label={`Loads per day from ${days[0]?.date ?? ''} to ${days.at(-1)?.date ?? ''}: ${total} in all, at most ${max} a day`}
      >
        <line x1="0" y1={height} x2={width} y2={height} class="axis" />
        {days.map((day, i) => {
          const h = (day.loads / max) * (height - 10);
          return (
            <rect
              key={day.date}
              x={i * bar + 1}
              y={height - h}
              width={Math.max(bar - 2, 1)}
              height={h}
              class="bar"
            >
              <title>
                {day.date}: {day.loads} loads, {day.files} file reads, {day.downloads} downloads
              </title>
            </rect>
          );
        })}
        <text x="0" y={height + 15} class="label">
          {days[0]?.date}
        </text>
        <text x={width} y={height + 15} class="label end">
          {days.at(-1)?.date}
        </text>
      </svg>
      <figcaption>
        {total} loads, {days.reduce((n, d) => n + d.files, 0)} file reads,{' '}
        {days.reduce((n, d) => n + d.downloads, 0)} downloads over {days.length} days
      </figcaption>
    </figure>
  );
}
