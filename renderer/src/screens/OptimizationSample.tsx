import { useEffect, useRef } from 'react';
import type { SampleView, Verdict } from '../api';
import { Dialog } from '../components/Dialog';
import { verdictOfKey } from '../optimization/grid';
import { detectionCounts } from '../optimization/samples';
import { useSession, useT } from '../store';
import { timeOf } from './Optimization';

interface SampleDialogProps {
  sample: SampleView;
  /** 1-based place of the sample in the grid as filtered. */
  position: number;
  total: number;
  /** Link of the full frame; null while the engine's address is not known. */
  image: string | null;
  onMove: (delta: number) => void;
  onJudge: (verdict: Verdict) => void;
  onClose: () => void;
}

/** A detection of a frame has no id of its own; its class and box tell it from the others. */
const boxKey = (annotation: SampleView['annotations'][number]) =>
  `${annotation.class_id}:${annotation.bbox.join(',')}`;

/** Label height on the frame, in source pixels: readable on a 768 px frame and on a 4K one. */
const labelSize = (width: number) => Math.max(12, Math.round(width / 48));

/**
 * One sample at full size with its detections drawn over the frame (the hard ones, which made it a
 * sample, highlighted), judged with buttons or keys: R right, W wrong, N clear, arrows for the
 * previous and next sample, Esc closes.
 */
export function OptimizationSample({
  sample,
  position,
  total,
  image,
  onMove,
  onJudge,
  onClose,
}: SampleDialogProps) {
  const t = useT();
  const language = useSession((state) => state.language);
  const latest = useRef({ onMove, onJudge });
  latest.current = { onMove, onJudge };

  // The modal holds the focus, wherever in it: its keys are listened to on the window.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.target instanceof Element && event.target.closest('input, select, textarea')) return;
      if (event.key === 'ArrowLeft' || event.key === 'ArrowRight') {
        event.preventDefault();
        latest.current.onMove(event.key === 'ArrowLeft' ? -1 : 1);
        return;
      }
      const to = verdictOfKey(event.key);
      if (to) {
        event.preventDefault();
        latest.current.onJudge(to);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const counts = detectionCounts(sample);
  const size = labelSize(sample.width);
  const verdictButton = (to: Verdict, key: string) => (
    <button
      type="button"
      className={`verdict-button verdict-${to}`}
      aria-pressed={sample.verdict === to}
      aria-keyshortcuts={key}
      onClick={() => onJudge(to)}
    >
      {t(to === 'none' ? 'optimization.clear' : `optimization.verdict.${to}`)} <kbd>{key}</kbd>
    </button>
  );

  return (
    <Dialog
      title={t('optimization.sampleTitle', {
        id: sample.sample_id,
        app: sample.app_id,
        time: timeOf(language, sample.timestamp),
      })}
      onClose={onClose}
      wide
    >
      <div className="sample-view">
        <figure className="sample-figure">
          <div
            className="sample-frame"
            // As large as fits, in the frame's proportions (the boxes are drawn in its pixels).
            style={{
              aspectRatio: `${sample.width} / ${sample.height}`,
              width: `min(100%, calc(70vh * ${sample.width} / ${sample.height}))`,
            }}
          >
            {image && (
              <img
                src={image}
                alt={t('optimization.frameAlt', { id: sample.sample_id, count: counts.all })}
              />
            )}
            <svg
              className="sample-boxes"
              viewBox={`0 0 ${sample.width} ${sample.height}`}
              preserveAspectRatio="none"
              aria-hidden="true"
            >
              {sample.annotations.map((annotation) => {
                const [x = 0, y = 0, width = 0, height = 0] = annotation.bbox;
                const label = `${annotation.label} ${annotation.score.toFixed(2)}${
                  annotation.track_id === null ? '' : ` #${annotation.track_id}`
                }`;
                // Above the box, or inside it at the top edge; kept inside the frame at the right edge.
                const labelY = y >= size + 2 ? y - 4 : y + size;
                const labelX = Math.max(2, Math.min(x + 2, sample.width - label.length * size * 0.66 - 2));
                return (
                  <g key={boxKey(annotation)} className={annotation.hard ? 'box box-hard' : 'box'}>
                    <rect x={x} y={y} width={width} height={height} vectorEffect="non-scaling-stroke" />
                    <text x={labelX} y={labelY} fontSize={size}>
                      {label}
                    </text>
                  </g>
                );
              })}
            </svg>
          </div>
          <figcaption className="sample-legend">
            <span>
              <span className="legend-box legend-hard" /> {t('optimization.legendHard')}
            </span>
            <span>
              <span className="legend-box" /> {t('optimization.legendOther')}
            </span>
          </figcaption>
        </figure>
        <div className="sample-side">
          <p className="meta">
            <span>{t('optimization.position', { position, total })}</span>
            <span className={`badge verdict-${sample.verdict}`}>
              {t(`optimization.verdict.${sample.verdict}`)}
            </span>
          </p>
          <p className="sample-reasons">
            {sample.reasons.map((reason) => (
              <span key={reason} className={`chip reason-${reason}`}>
                {t(`optimization.reason.${reason}`)}
              </span>
            ))}
          </p>
          <div className="button-row">
            <button
              type="button"
              onClick={() => onMove(-1)}
              disabled={position <= 1}
              aria-keyshortcuts="ArrowLeft"
            >
              {t('optimization.previous')} <kbd>←</kbd>
            </button>
            <button
              type="button"
              onClick={() => onMove(1)}
              disabled={position >= total}
              aria-keyshortcuts="ArrowRight"
            >
              {t('optimization.next')} <kbd>→</kbd>
            </button>
          </div>
          <div className="button-row verdict-row">
            {verdictButton('right', 'R')}
            {verdictButton('wrong', 'W')}
            {verdictButton('none', 'N')}
          </div>
          <p className="hint">{t('optimization.judgeHint')}</p>
          <table className="annotations-table">
            <caption>{t('optimization.detections', { count: counts.all, hard: counts.hard })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('optimization.col.class')}</th>
                <th scope="col" className="num">
                  {t('optimization.col.score')}
                </th>
                <th scope="col">{t('optimization.col.track')}</th>
                <th scope="col">{t('optimization.col.hard')}</th>
              </tr>
            </thead>
            <tbody>
              {sample.annotations.map((annotation) => (
                <tr key={boxKey(annotation)} className={annotation.hard ? 'hard-row' : ''}>
                  <td>{annotation.label}</td>
                  <td className="num">{annotation.score.toFixed(2)}</td>
                  <td>{annotation.track_id ?? '—'}</td>
                  <td>{annotation.hard ? t('optimization.yes') : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </Dialog>
  );
}
