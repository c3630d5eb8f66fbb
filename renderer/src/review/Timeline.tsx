import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { formatTime } from '../i18n';
import { useNames } from '../names/useNames';
import { timelineQuery } from '../queries/review';
import { useSession, useT } from '../store';
import { lanesOf, markSpan, type Span, windowOf } from './timeline-day';

const SPAN_KEYS = {
  day: 'timeline.spanDay',
  hour: 'timeline.spanHour',
  tenMinutes: 'timeline.spanTenMinutes',
} as const;

interface TimelineProps {
  taskId: string;
  name: string;
  /** The apps of the item it was opened for, to name the classes. */
  apps: readonly string[];
  /** Any moment of the window shown (ms since the epoch), on the browser's local clock. */
  at: number;
  onAt: (at: number) => void;
  openItemId: string | null;
  onOpen: (itemId: string) => void;
}

/**
 * One camera's review items over a day, an hour or ten minutes: each a mark at its time span,
 * coloured by whether it was reviewed, stacked on lanes where they overlap; a mark opens its item.
 */
export function Timeline({ taskId, name, apps, at, onAt, openItemId, onOpen }: TimelineProps) {
  const t = useT();
  const id = useId();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const names = useNames();
  const [span, setSpan] = useState<Span>('day');
  const { since, until } = windowOf(at, span);
  const timeline = useQuery(timelineQuery(transport, taskId, since, until));
  const marks = timeline.data?.items ?? [];
  const spans = marks.map((mark) => markSpan(mark, since, until));
  const lanes = lanesOf(spans);
  const clock = (ms: number) =>
    new Intl.DateTimeFormat(language, { hour: '2-digit', minute: '2-digit' }).format(new Date(ms));
  const date = new Intl.DateTimeFormat(language, { dateStyle: 'full' }).format(new Date(since));
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((share) => ({ share, ms: since + share * (until - since) }));
  return (
    <section className="card review-timeline" aria-labelledby={id}>
      <div className="toolbar">
        <h3 id={id}>
          {t('timeline.title', {
            name,
            date: span === 'day' ? date : `${date} ${clock(since)}–${clock(until)}`,
          })}
        </h3>
        <label htmlFor={`${id}-span`}>{t('timeline.span')}</label>
        <select id={`${id}-span`} value={span} onChange={(event) => setSpan(event.target.value as Span)}>
          {(Object.keys(SPAN_KEYS) as Span[]).map((value) => (
            <option key={value} value={value}>
              {t(SPAN_KEYS[value])}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => onAt(since - 1)}>
          {t('timeline.previous')}
        </button>
        <button type="button" onClick={() => onAt(until)} disabled={until > Date.now()}>
          {t('timeline.next')}
        </button>
        <span className="meta" role="status">
          {timeline.data &&
            t(timeline.data.truncated ? 'timeline.countTruncated' : 'timeline.count', {
              count: marks.length,
            })}
        </span>
      </div>
      {timeline.isError && <ErrorNotice error={timeline.error} />}
      <div className="timeline-track">
        <ul aria-label={t('timeline.marks', { name })}>
          {marks.map((mark, index) => {
            const { left, width } = spans[index] as { left: number; width: number };
            return (
              <li
                key={mark.item_id}
                style={{
                  left: `${left}%`,
                  width: `${width}%`,
                  top: `${0.3 + (lanes[index] ?? 0) * 0.8}rem`,
                }}
              >
                <button
                  type="button"
                  className={`timeline-mark ${mark.reviewed ? 'mark-reviewed' : 'mark-new'}`}
                  aria-current={mark.item_id === openItemId ? 'true' : undefined}
                  aria-label={t(mark.reviewed ? 'timeline.markReviewed' : 'timeline.markNew', {
                    time: formatTime(language, mark.start),
                    classes: mark.classes.map((classId) => names.class(classId, apps)).join(', '),
                  })}
                  title={formatTime(language, mark.start)}
                  onClick={() => onOpen(mark.item_id)}
                />
              </li>
            );
          })}
        </ul>
        <div className="timeline-hours" aria-hidden="true">
          {ticks.map((tick) => (
            <span key={tick.share} style={{ left: `${tick.share * 100}%` }}>
              {span === 'day' ? tick.share * 24 : clock(tick.ms)}
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
