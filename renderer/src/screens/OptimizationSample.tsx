import { type PointerEvent, useEffect, useId, useRef, useState } from 'react';
import type { SampleJudgement, SampleView, Verdict } from '../api';
import { Dialog } from '../components/Dialog';
import { verdictOfKey } from '../optimization/grid';
import { boxFromDrag, detectionCounts, sampleTags } from '../optimization/samples';
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
  /** The labels of the sample's model: what a missed object can be marked as (a label's index). */
  labels: readonly string[];
  /** Judges the hard detections at once and moves on to the next sample. */
  onJudge: (verdict: Verdict) => void;
  /** Judges single detections or the missed objects, staying on the sample. */
  onJudgeDetails: (judgement: SampleJudgement) => void;
  onClose: () => void;
}

type Box = [number, number, number, number];

/** A detection of a frame has no id of its own; its class and box tell it from the others. */
const boxKey = (annotation: SampleView['annotations'][number]) =>
  `${annotation.class_id}:${annotation.bbox.join(',')}`;

/** Label height on the frame, in source pixels: readable on a 768 px frame and on a 4K one. */
const labelSize = (width: number) => Math.max(12, Math.round(width / 48));

/**
 * One sample at full size with its detections drawn over the frame (the hard ones, which made it a
 * sample, highlighted), judged with buttons or keys: R right, W wrong, N clear, arrows for the
 * previous and next sample, Esc closes. Each detection can be judged on its own, and objects the
 * model missed are marked by dragging a box over the frame.
 */
export function OptimizationSample({
  sample,
  position,
  total,
  image,
  onMove,
  labels,
  onJudge,
  onJudgeDetails,
  onClose,
}: SampleDialogProps) {
  const t = useT();
  const classFieldId = useId();
  const frameRef = useRef<HTMLDivElement>(null);
  const [drawing, setDrawing] = useState(false);
  const [drag, setDrag] = useState<{ from: { x: number; y: number }; to: { x: number; y: number } } | null>(
    null,
  );
  const [pending, setPending] = useState<Box | null>(null);
  const [pendingClass, setPendingClass] = useState('0');
  // Another sample: whatever was being drawn on the last one is dropped.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the sample changes.
  useEffect(() => {
    setDrawing(false);
    setDrag(null);
    setPending(null);
  }, [sample.sample_id]);
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

  const pointOf = (event: PointerEvent) => {
    const rect = (frameRef.current as HTMLDivElement).getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  };
  const shownBox = (from: { x: number; y: number }, to: { x: number; y: number }) => {
    const rect = (frameRef.current as HTMLDivElement).getBoundingClientRect();
    return boxFromDrag(from, to, rect, sample);
  };
  const startMarking = () => {
    setDrawing(true);
    setPending(null);
    setPendingClass(sample.annotations[0]?.class_id ?? '0');
  };
  const storedMissed = () => sample.missed.map(({ class_id, bbox }) => ({ class_id, bbox }));
  const addMissed = () => {
    if (!pending) return;
    onJudgeDetails({ missed: [...storedMissed(), { class_id: pendingClass, bbox: pending }] });
    setPending(null);
    setDrawing(false);
  };
  /** The box being dragged, else the one waiting for its class. */
  const outline = (drag ? shownBox(drag.from, drag.to) : null) ?? pending;

  const counts = detectionCounts(sample);
  const size = labelSize(sample.width);
  const tags = sampleTags(sample, size);
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
            ref={frameRef}
            className={drawing ? 'sample-frame sample-frame-drawing' : 'sample-frame'}
            data-testid="sample-frame"
            // As large as fits, in the frame's proportions (the boxes are drawn in its pixels).
            style={{
              aspectRatio: `${sample.width} / ${sample.height}`,
              width: `min(100%, calc(70vh * ${sample.width} / ${sample.height}))`,
            }}
            onPointerDown={(event) => {
              if (!drawing) return;
              // Else the browser starts dragging the picture and the pointer is never released here.
              event.preventDefault();
              event.currentTarget.setPointerCapture(event.pointerId);
              const at = pointOf(event);
              setDrag({ from: at, to: at });
            }}
            onPointerMove={(event) => {
              if (drag) setDrag({ from: drag.from, to: pointOf(event) });
            }}
            onPointerUp={(event) => {
              if (!drag) return;
              const box = shownBox(drag.from, pointOf(event));
              setDrag(null);
              if (box) setPending(box);
            }}
          >
            {image && (
              <img
                src={image}
                draggable={false}
                alt={t('optimization.frameAlt', { id: sample.sample_id, count: counts.all })}
              />
            )}
            <svg
              className="sample-boxes"
              viewBox={`0 0 ${sample.width} ${sample.height}`}
              preserveAspectRatio="none"
              aria-hidden="true"
            >
              {sample.annotations.map((annotation, index) => {
                const [x = 0, y = 0, width = 0, height = 0] = annotation.bbox;
                const tag = tags[index];
                return (
                  <g
                    key={boxKey(annotation)}
                    className={`box${annotation.hard ? ' box-hard' : ''} box-verdict-${annotation.verdict}`}
                  >
                    <rect x={x} y={y} width={width} height={height} vectorEffect="non-scaling-stroke" />
                    {tag && (
                      <text x={tag.x} y={tag.y} fontSize={size}>
                        {tag.text}
                      </text>
                    )}
                  </g>
                );
              })}
              {sample.missed.map(({ label, bbox: [x = 0, y = 0, width = 0, height = 0] }, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a missed object is known by its place.
                <g key={`missed-${index}`} className="box box-missed">
                  <rect x={x} y={y} width={width} height={height} vectorEffect="non-scaling-stroke" />
                  <text x={x + 2} y={y >= size + 2 ? y - 4 : y + size} fontSize={size}>
                    {label}
                  </text>
                </g>
              ))}
              {outline && (
                <g className="box box-missed box-pending">
                  <rect
                    x={outline[0]}
                    y={outline[1]}
                    width={outline[2]}
                    height={outline[3]}
                    vectorEffect="non-scaling-stroke"
                  />
                </g>
              )}
            </svg>
          </div>
          <figcaption className="sample-legend">
            <span>
              <span className="legend-box legend-hard" /> {t('optimization.legendHard')}
            </span>
            <span>
              <span className="legend-box" /> {t('optimization.legendOther')}
            </span>
            <span>
              <span className="legend-box legend-missed" /> {t('defects.optimization.legendMissed')}
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
          <div className="missed-marker">
            {!drawing ? (
              <button type="button" onClick={startMarking} disabled={labels.length === 0}>
                {t('defects.optimization.markMissed')}
              </button>
            ) : pending ? (
              <div className="button-row">
                <label htmlFor={classFieldId}>{t('defects.optimization.missedClass')}</label>
                <select
                  id={classFieldId}
                  value={pendingClass}
                  onChange={(event) => setPendingClass(event.target.value)}
                >
                  {labels.map((label, index) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: a label is known by its index (its class_id).
                    <option key={index} value={String(index)}>
                      {index} · {label}
                    </option>
                  ))}
                </select>
                <button type="button" className="primary" onClick={addMissed}>
                  {t('defects.optimization.addMissed')}
                </button>
                <button type="button" onClick={() => setDrawing(false)}>
                  {t('common.cancel')}
                </button>
              </div>
            ) : (
              <p className="hint" role="status">
                {t('defects.optimization.drawHint')}{' '}
                <button type="button" onClick={() => setDrawing(false)}>
                  {t('common.cancel')}
                </button>
              </p>
            )}
          </div>
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
                <th scope="col">{t('defects.optimization.col.verdict')}</th>
              </tr>
            </thead>
            <tbody>
              {sample.annotations.map((annotation, index) => (
                <tr key={boxKey(annotation)} className={annotation.hard ? 'hard-row' : ''}>
                  <td>
                    {index + 1} · {annotation.label}
                  </td>
                  <td className="num">{annotation.score.toFixed(2)}</td>
                  <td>{annotation.track_id ?? '—'}</td>
                  <td>{annotation.hard ? t('optimization.yes') : ''}</td>
                  <td className="detection-verdict">
                    {(['right', 'wrong'] as const).map((to) => (
                      <button
                        key={to}
                        type="button"
                        className={`verdict-button verdict-${to}`}
                        aria-pressed={annotation.verdict === to}
                        aria-label={t(
                          to === 'right'
                            ? 'defects.optimization.detectionRight'
                            : 'defects.optimization.detectionWrong',
                          { n: index + 1, label: annotation.label },
                        )}
                        onClick={() =>
                          onJudgeDetails({
                            detections: [{ index, verdict: annotation.verdict === to ? 'none' : to }],
                          })
                        }
                      >
                        {to === 'right' ? '✓' : '✗'}
                      </button>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {sample.missed.length > 0 && (
            <>
              <h3 className="missed-title">
                {t('defects.optimization.missedTitle', { count: sample.missed.length })}
              </h3>
              <ul className="missed-list">
                {sample.missed.map((missed, index) => (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a missed object is known by its place.
                  <li key={index}>
                    {missed.label} <span className="sub-inline">[{missed.bbox.join(', ')}]</span>{' '}
                    <button
                      type="button"
                      aria-label={t('defects.optimization.removeMissed', {
                        label: missed.label,
                        n: index + 1,
                      })}
                      onClick={() =>
                        onJudgeDetails({ missed: storedMissed().filter((_, other) => other !== index) })
                      }
                    >
                      ×
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )}
        </div>
      </div>
    </Dialog>
  );
}
