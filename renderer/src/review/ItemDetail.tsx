import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'wouter';
import type { Clip, ReviewItem } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { formatTime } from '../i18n';
import { useNames } from '../names/useNames';
import { engineLink } from '../optimization/links';
import { reviewItemQuery, reviewItemsMutation } from '../queries/review';
import { paths } from '../routes';
import { useSession, useT } from '../store';
import { apiPath } from '../transport';
import { ClipPlayer } from './ClipPlayer';
import { clipReason } from './clip-reason';
import { IgnoreDialog } from './IgnoreDialog';

/**
 * One review item: its clip (or what became of it, in words), its alarms, and what the operator can
 * do from here: mark it reviewed, open the camera's live view, ignore the object on this camera.
 */
export function ItemDetail({ itemId, initial }: { itemId: string; initial: ReviewItem | undefined }) {
  const t = useT();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const queryClient = useQueryClient();
  const access = useLinkAccess();
  const names = useNames();
  const detail = useQuery(reviewItemQuery(transport, itemId));
  const review = useMutation(reviewItemsMutation(transport, queryClient));
  const [ignoring, setIgnoring] = useState(false);
  const [seek, setSeek] = useState<{ time: number; n: number } | null>(null);
  // The detail is read again while its clip is cut; the list's item is what shows until it came.
  const shown = detail.data ?? initial;
  if (!shown)
    return (
      <section className="alarm-detail card" aria-label={t('items.detail')}>
        {detail.isError ? <ErrorNotice error={detail.error} /> : <p role="status">{t('common.loading')}</p>}
      </section>
    );
  const name = shown.task_name ?? shown.task_id;
  const clip: Clip | null = shown.clip;
  const poster = access ? engineLink(apiPath`/api/alarms/${shown.best_event_id}/snapshot`, access) : null;
  const time = (ms: number) => formatTime(language, ms);

  return (
    <section className="alarm-detail card" aria-label={t('items.detail')}>
      <h3>
        {name} · {time(shown.start)}–{time(shown.end)}
      </h3>
      <p className="meta">
        {t('items.facts', {
          classes: shown.classes.map((id) => names.class(id, shown.apps)).join(', ') || '–',
          apps: shown.apps.map(names.app).join(', '),
          count: shown.alarm_count,
          score: shown.peak_score.toFixed(2),
        })}
      </p>
      {clip === null && <p>{t('clip.off')}</p>}
      {clip?.state === 'pending' && <p role="status">{t('clip.pending')}</p>}
      {clip?.state === 'none' && <p>{t('clip.none', { reason: clipReason(t, clip.reason) })}</p>}
      {clip?.state === 'ready' && (
        <ClipPlayer clip={clip} poster={poster} alarms={detail.data?.alarms ?? []} name={name} seek={seek} />
      )}
      {clip?.state !== 'ready' &&
        (shown.thumbnail_url ? (
          poster && <img className="alarm-picture" src={poster} alt={t('alarms.snapshotAlt', { name })} />
        ) : (
          <p>{t('alarms.imageDropped')}</p>
        ))}
      <div className="button-row">
        <button
          type="button"
          onClick={() =>
            review.mutate({ target: { itemIds: [shown.item_id] }, reviewed: shown.reviewed_at === null })
          }
          disabled={review.isPending}
        >
          {shown.reviewed_at === null ? t('alarms.markReviewed') : t('alarms.markUnreviewed')}
        </button>
        <Link className="button" href={paths.live(shown.task_id)}>
          {t('items.openCamera')}
        </Link>
        <button type="button" onClick={() => setIgnoring(true)}>
          {t('items.ignore')}
        </button>
        <a
          className="button"
          href={
            access
              ? (engineLink(apiPath`/api/alarms/${shown.best_event_id}/export`, access) ?? undefined)
              : undefined
          }
          download
        >
          {t('alarms.export')}
        </a>
      </div>
      {review.isError && <ErrorNotice error={review.error} />}
      {detail.isError && <ErrorNotice error={detail.error} />}
      {detail.data && (
        <div className="table-scroll">
          <table className="item-alarms">
            <caption>{t('items.alarms', { count: detail.data.alarms.length })}</caption>
            <thead>
              <tr>
                <th scope="col">{t('items.col.time')}</th>
                <th scope="col">{t('alarms.app')}</th>
                <th scope="col">{t('alarms.rule')}</th>
                <th scope="col" className="num">
                  {t('items.col.score')}
                </th>
                <th scope="col">
                  <span className="visually-hidden">{t('items.col.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {detail.data.alarms.map((alarm) => {
                const at =
                  clip?.state === 'ready' && clip.start !== null
                    ? (alarm.timestamp - clip.start) / 1000
                    : null;
                return (
                  <tr key={alarm.event_id}>
                    <td>{time(alarm.timestamp)}</td>
                    <td>{names.app(alarm.app_id)}</td>
                    <td>{alarm.rules.map(names.rule).join(', ')}</td>
                    <td className="num">{alarm.max_score > 0 ? alarm.max_score.toFixed(2) : ''}</td>
                    <td>
                      {at !== null && at >= 0 && (
                        <button
                          type="button"
                          onClick={() => setSeek((previous) => ({ time: at, n: (previous?.n ?? 0) + 1 }))}
                        >
                          {t('items.showInClip')}
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {detail.data.more && <p className="sub">{t('items.moreAlarms')}</p>}
        </div>
      )}
      {ignoring && (
        <IgnoreDialog item={shown} poster={poster} name={name} onClose={() => setIgnoring(false)} />
      )}
    </section>
  );
}
