import { useQuery } from '@tanstack/react-query';
import { useId } from 'react';
import { useTransport } from '../context';
import { formatTime } from '../i18n';
import { useNames } from '../names/useNames';
import { timelineQuery } from '../queries/review';
import { useSession, useT } from '../store';
import { dayOf, markSpan } from './timeline-day';

const HOUR_TICKS = [0, 6, 12, 18, 24];

interface TimelineProps {
  taskId: string;
  name: string;
  /** Any moment of the day shown (ms since the epoch); the day is the browser's local one. */
  day: number;
  onDay: (day: number) => void;
  openItemId: string | null;
  onOpen: (itemId: string) => void;
}

/**
 * One camera's day of review items: each a mark at its time span, coloured by whether it was
 * reviewed; a mark opens its item.
 */
export function Timeline({ taskId, name, day, onDay, openItemId, onOpen }: TimelineProps) {
  const t = useT();
  const id = useId();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const names = useNames();
  const { since, until } = dayOf(day);
  const timeline = useQuery(timelineQuery(transport, taskId, since, until));
  const date = new Intl.DateTimeFormat(language, { dateStyle: 'full' }).format(new Date(since));
  const marks = timeline.data?.items ?? [];
  return (
    <section className="card review-timeline" aria-labelledby={id}>
      <div className="toolbar">
        <h3 id={id}>{t('timeline.title', { name, date })}</h3>
        <button type="button" onClick={() => onDay(since - 1)}>
          {t('timeline.previousDay')}
        </button>
        <button type="button" onClick={() => onDay(until)} disabled={until > Date.now()}>
          {t('timeline.nextDay')}
        </button>
        <span className="meta" role="status">
          {timeline.data &&
            t(timeline.data.truncated ? 'timeline.countTruncated' : 'timeline.count', {
              count: marks.length,
            })}
        </span>
      </div>
      <div className="timeline-track">
        <ul aria-label={t('timeline.marks', { name })}>
          {marks.map((mark) => {
            const { left, width } = markSpan(mark, since, until);
            return (
              <li key={mark.item_id} style={{ left: `${left}%`, width: `${width}%` }}>
                <button
                  type="button"
                  className={`timeline-mark ${mark.reviewed ? 'mark-reviewed' : 'mark-new'}`}
                  aria-current={mark.item_id === openItemId ? 'true' : undefined}
                  aria-label={t(mark.reviewed ? 'timeline.markReviewed' : 'timeline.markNew', {
                    time: formatTime(language, mark.start),
                    classes: mark.classes.map((id) => names.class(id)).join(', '),
                  })}
                  title={formatTime(language, mark.start)}
                  onClick={() => onOpen(mark.item_id)}
                />
              </li>
            );
          })}
        </ul>
        <div className="timeline-hours" aria-hidden="true">
          {HOUR_TICKS.map((hour) => (
            <span key={hour} style={{ left: `${(hour / 24) * 100}%` }}>
              {hour}
            </span>
          ))}
        </div>
      </div>
      <p className="sub">
        <span className="timeline-key mark-new" /> {t('timeline.keyNew')}{' '}
        <span className="timeline-key mark-reviewed" /> {t('timeline.keyReviewed')}
      </p>
    </section>
  );
}
