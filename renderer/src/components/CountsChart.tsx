import { useRef } from 'react';
import type { CountSeries } from '../feed/model';
import { useElementSize } from '../hooks/useElementSize';

interface CountsChartProps {
  series: CountSeries;
  colorOf: (appId: string) => string;
  label: string;
  formatTime: (ms: number) => string;
}

const HEIGHT = 140;
const PAD = { left: 32, right: 10, top: 10, bottom: 22 };

/** Fired rules per app over time: one line per app; the legend gives each app's total as text. */
export function CountsChart({ series, colorOf, label, formatTime }: CountsChartProps) {
  const ref = useRef<HTMLDivElement>(null);
  // Drawn at the box's own width, so that text is never stretched.
  const width = Math.max(200, useElementSize(ref).width);
  const apps = Object.keys(series.perApp).sort();
  const max = Math.max(1, ...apps.flatMap((app) => series.perApp[app] ?? []));
  const n = series.starts.length;
  const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i / (n - 1)) * (width - PAD.left - PAD.right));
  const y = (v: number) => HEIGHT - PAD.bottom - (v / max) * (HEIGHT - PAD.top - PAD.bottom);
  const firstStart = series.starts[0];
  const lastStart = series.starts[n - 1];
  return (
    <figure className="chart">
      <div ref={ref}>
        <svg width={width} height={HEIGHT} viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={label}>
          <line x1={PAD.left} x2={width - PAD.right} y1={y(0)} y2={y(0)} className="chart-axis" />
          <line x1={PAD.left} x2={PAD.left} y1={PAD.top} y2={y(0)} className="chart-axis" />
          <line x1={PAD.left} x2={width - PAD.right} y1={y(max)} y2={y(max)} className="chart-grid" />
          <text x={PAD.left - 6} y={y(max) + 4} className="chart-label" textAnchor="end">
            {max}
          </text>
          <text x={PAD.left - 6} y={y(0) + 4} className="chart-label" textAnchor="end">
            0
          </text>
          {firstStart !== undefined && (
            <text x={PAD.left} y={HEIGHT - 4} className="chart-label">
              {formatTime(firstStart)}
            </text>
          )}
          {lastStart !== undefined && (
            <text x={width - PAD.right} y={HEIGHT - 4} className="chart-label" textAnchor="end">
              {formatTime(lastStart)}
            </text>
          )}
          {apps.map((app) => (
            <polyline
              key={app}
              fill="none"
              stroke={colorOf(app)}
              strokeWidth={2}
              strokeLinejoin="round"
              points={(series.perApp[app] ?? []).map((v, i) => `${x(i)},${y(v)}`).join(' ')}
            />
          ))}
        </svg>
      </div>
      <figcaption className="chart-legend">
        {apps.map((app) => (
          <span key={app} className="legend-item">
            <span className="swatch" style={{ background: colorOf(app) }} aria-hidden="true" />
            {app}: {(series.perApp[app] ?? []).reduce((a, b) => a + b, 0)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
