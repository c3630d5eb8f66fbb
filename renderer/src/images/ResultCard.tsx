import { useNames } from '../names/useNames';
import { useT } from '../store';
import { BeforeAfter } from './BeforeAfter';
import type { ResultEntry } from './results';

/**
 * One analysed image: what fired, with the annotated snapshots; a change-detection pair whose
 * "before" this page sent is compared with a slider, the changed regions outlined.
 */
export function ResultCard({ entry, diff }: { entry: ResultEntry; diff: boolean }) {
  const t = useT();
  const names = useNames();
  const title = entry.names ?? t('images.storedResult', { id: entry.imageId });
  const snapshot = entry.rules.find((rule) => rule.image)?.image;
  const after = entry.after ?? (snapshot ? `data:image/jpeg;base64,${snapshot}` : undefined);
  return (
    <li className="card result">
      <h4>
        {title}{' '}
        <span className="meta">
          {t('images.frame', { id: entry.imageId, width: entry.frame.width, height: entry.frame.height })}
        </span>
      </h4>
      {diff && after && (
        <div className="result-body">
          {entry.before ? (
            <BeforeAfter
              before={entry.before}
              after={after}
              frame={entry.frame}
              regions={entry.rules.flatMap((rule) => rule.objects)}
              name={title}
            />
          ) : (
            <p className="hint">{t('images.noBefore')}</p>
          )}
        </div>
      )}
      {entry.rules.length === 0 ? (
        <div className="result-body">
          {entry.after && !diff && (
            <img src={entry.after} alt={t('images.uploadedAlt', { name: title })} className="result-image" />
          )}
          <p>{t('images.nothing')}</p>
        </div>
      ) : (
        entry.rules.map((rule) => (
          <div key={rule.id} className="result-body">
            {rule.image && (
              <img
                src={`data:image/jpeg;base64,${rule.image}`}
                alt={t('events.snapshotAlt', { rule: names.rule(rule.id) })}
                className="result-image"
              />
            )}
            <div>
              <p>
                <strong>{names.rule(rule.id)}</strong> ·{' '}
                {t('images.objects', { count: rule.count ?? rule.objects.length })}
              </p>
              <ul className="object-list">
                {rule.objects.map((object) => (
                  <li key={`${object.track_id}-${object.x}-${object.y}`}>
                    {object.name} {object.score.toFixed(2)} · {object.x}, {object.y} · {object.w}×{object.h}
                    {object.area !== undefined ? ` · ${t('images.area', { area: object.area })}` : ''}
                  </li>
                ))}
              </ul>
            </div>
          </div>
        ))
      )}
    </li>
  );
}
