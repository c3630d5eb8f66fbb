import { useId, useState } from 'react';
import { useT } from '../store';

export interface Region {
  /** Centre and size in the frame's pixels, as the engine reports objects. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * A change-detection pair compared with a slider: the "before" image under the "after" one, which
 * is shown right of the slider's position, and the changed regions outlined on both.
 */
export function BeforeAfter({
  before,
  after,
  frame,
  regions,
  name,
}: {
  before: string;
  after: string;
  frame: { width: number; height: number };
  regions: readonly Region[];
  name: string;
}) {
  const t = useT();
  const sliderId = useId();
  const [split, setSplit] = useState(50);
  return (
    <figure className="before-after">
      <div className="before-after-stage" style={{ aspectRatio: `${frame.width} / ${frame.height}` }}>
        <img src={before} alt={t('images.beforeAlt', { name })} />
        <img
          src={after}
          alt={t('images.afterAlt', { name })}
          style={{ clipPath: `inset(0 0 0 ${split}%)` }}
        />
        <svg
          viewBox={`0 0 ${frame.width} ${frame.height}`}
          preserveAspectRatio="none"
          role="img"
          aria-label={t('images.regions', { count: regions.length })}
        >
          {regions.map((region) => (
            <rect
              key={`${region.x}-${region.y}-${region.w}-${region.h}`}
              className="changed-region"
              x={region.x - region.w / 2}
              y={region.y - region.h / 2}
              width={region.w}
              height={region.h}
            />
          ))}
          <line
            className="before-after-split"
            x1={(split / 100) * frame.width}
            x2={(split / 100) * frame.width}
            y1={0}
            y2={frame.height}
          />
        </svg>
        <span className="before-after-tag before-tag">{t('images.beforeTag')}</span>
        <span className="before-after-tag after-tag">{t('images.afterTag')}</span>
      </div>
      <label htmlFor={sliderId} className="before-after-control">
        {t('images.compare')}
        <input
          id={sliderId}
          type="range"
          min={0}
          max={100}
          value={split}
          onChange={(event) => setSplit(Number(event.target.value))}
        />
      </label>
    </figure>
  );
}
