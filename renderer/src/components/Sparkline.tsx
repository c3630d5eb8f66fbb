interface SparklineProps {
  /** Oldest first; null where a reading lacked the figure (the line breaks there). */
  values: ReadonlyArray<number | null>;
  /** What the line shows, for assistive technology (the current value is beside it as text). */
  label: string;
  /** The top of the scale; default the largest value (at least 1). */
  max?: number;
}

const WIDTH = 120;
const HEIGHT = 28;

/** A short history as a line: drawn to the box's width (no text inside, so stretching is harmless). */
export function Sparkline({ values, label, max }: SparklineProps) {
  const top = max ?? Math.max(1, ...values.map((value) => value ?? 0));
  const step = values.length > 1 ? WIDTH / (values.length - 1) : 0;
  const runs: string[][] = [[]];
  values.forEach((value, i) => {
    if (value === null) runs.push([]);
    else runs.at(-1)?.push(`${i * step},${HEIGHT - 1 - (Math.min(value, top) / top) * (HEIGHT - 2)}`);
  });
  return (
    <svg
      className="sparkline"
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={label}
    >
      {runs
        .filter((run) => run.length > 0)
        .map((run) => (
          <polyline key={run[0]} points={run.join(' ')} vectorEffect="non-scaling-stroke" />
        ))}
    </svg>
  );
}
