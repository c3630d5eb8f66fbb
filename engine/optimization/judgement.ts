import { DomainError } from '../domain-error';
import type { OptimizationErrorKind } from './optimization-error';
import type { Annotation, MissedObject, SampleJudgement, Verdict } from './schema';

/** What a sample holds of the operator's judgement. */
export interface Judged {
  annotations: Annotation[];
  missed: MissedObject[];
  verdict: Verdict;
}

/**
 * The sample's summary verdict: wrong as soon as one detection is wrong or an object was missed
 * (the frame needs correcting), right when what is judged is right. A frame without detections keeps
 * the verdict given for it as a whole (`fallback`).
 */
export function summaryVerdict(
  annotations: readonly Annotation[],
  missed: readonly MissedObject[],
  fallback: Verdict,
): Verdict {
  if (missed.length > 0 || annotations.some((a) => a.verdict === 'wrong')) return 'wrong';
  if (annotations.some((a) => a.verdict === 'right')) return 'right';
  return annotations.length === 0 ? fallback : 'none';
}

/**
 * The sample after a judgement. `verdict` judges the hard detections (all of them when none is
 * hard), `detections` then judges single ones, `missed` replaces the marked objects. A detection
 * index past the frame's, a class the model does not have or a box outside the frame refuses the
 * whole judgement.
 */
export function judge(
  sample: Judged & { width: number; height: number },
  judgement: SampleJudgement,
  labels: readonly string[],
): Judged {
  const annotations = sample.annotations.map((a) => ({ ...a }));
  if (judgement.verdict !== undefined) {
    const anyHard = annotations.some((a) => a.hard);
    for (const a of annotations) if (a.hard || !anyHard) a.verdict = judgement.verdict;
  }
  for (const [i, { index, verdict }] of (judgement.detections ?? []).entries()) {
    const annotation = annotations[index];
    if (!annotation) {
      refuse(`detections[${i}].index`, `is ${index}; the sample has ${annotations.length} detection(s)`);
    }
    annotation.verdict = verdict;
  }
  const missed = judgement.missed
    ? judgement.missed.map(({ class_id, bbox }, i) => {
        const label = labels[Number(class_id)];
        if (!/^\d+$/.test(class_id) || label === undefined)
          refuse(
            `missed[${i}].class_id`,
            `${class_id} is not a class of the model (0..${labels.length - 1})`,
          );
        const [x = 0, y = 0, w = 0, h = 0] = bbox;
        if (w < 1 || h < 1 || x + w > sample.width || y + h > sample.height)
          refuse(
            `missed[${i}].bbox`,
            `must be at least 1x1 and inside the ${sample.width}x${sample.height} frame`,
          );
        return { class_id, label, bbox: [x, y, w, h] };
      })
    : sample.missed;
  return {
    annotations,
    missed,
    verdict: summaryVerdict(annotations, missed, judgement.verdict ?? sample.verdict),
  };
}

function refuse(field: string, why: string): never {
  throw new DomainError<OptimizationErrorKind>('optimization.invalid_judgement', `body.${field}: ${why}`, {
    field,
  });
}
