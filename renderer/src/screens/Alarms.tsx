import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useMemo, useState } from 'react';
import type { AlarmView } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { VirtualList } from '../components/VirtualList';
import { useTransport } from '../context';
import { useFeed } from '../feed/store';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { useNames } from '../names/useNames';
import { engineLink, type LinkAccess } from '../optimization/links';
import { alarmFacetsQuery, alarmKeys, alarmsQuery, reviewMutation } from '../queries/alarms';
import { AlarmFilters } from '../review/AlarmFilters';
import { toQuery, useAlarmFilter } from '../review/filter';
import { newAlarms } from '../review/new-alarms';
import { useSession, useT } from '../store';
import { useTaskTitle } from '../tasks/title';
import { apiPath } from '../transport';

const ROW_HEIGHT = 76;

const link = (access: LinkAccess | null, path: string) => (access ? engineLink(path, access) : null);

/**
 * Alarm review: the stored alarms the filter selects, newest first, paged in from the engine as
 * the operator scrolls through the whole history. New alarms never move the rows being read: a
 * marker counts them until the operator asks for them. Each alarm can be marked reviewed, opened
 * (its whole snapshot on demand) and exported, all from the keyboard too.
 */
export function Alarms() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const headingId = useId();
  const language = useSession((state) => state.language);
  const access = useLinkAccess();
  const title = useTaskTitle();
  const names = useNames();
  const filter = useAlarmFilter((state) => state.filter);
  const query = useMemo(() => toQuery(filter), [filter]);
  const alarms = useInfiniteQuery(alarmsQuery(transport, query));
  const facets = useQuery(alarmFacetsQuery(transport));
  const review = useMutation(reviewMutation(transport, queryClient));
  const items = useMemo(() => alarms.data?.pages.flatMap((page) => page.items) ?? [], [alarms.data]);
  const total = alarms.data?.pages[0]?.total ?? 0;
  const [selected, setSelected] = useState(0);
  const [full, setFull] = useState(false);
  const feed = useFeed((state) => state.items);
  const arrived = newAlarms(feed, items[0]?.timestamp ?? alarms.dataUpdatedAt, filter);
  const current: AlarmView | undefined = items[selected];

  // A new filter starts at the top.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the query is what resets the selection
  useEffect(() => {
    setSelected(0);
    setFull(false);
  }, [query]);

  const toggle = useCallback(
    (alarm: AlarmView | undefined) => {
      if (alarm) review.mutate({ eventIds: [alarm.event_id], reviewed: alarm.reviewed_at === null });
    },
    [review],
  );

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (
        target.closest('input, select, textarea, [role="dialog"]') ||
        event.ctrlKey ||
        event.metaKey ||
        event.altKey
      )
        return;
      const move = (by: number) => {
        setSelected((index) => Math.min(Math.max(0, index + by), Math.max(0, items.length - 1)));
        setFull(false);
      };
      if (event.key === 'j' || event.key === 'ArrowDown') move(1);
      else if (event.key === 'k' || event.key === 'ArrowUp') move(-1);
      else if (event.key === 'r' || event.key === ' ') toggle(current);
      else if (event.key === 'Enter') setFull((value) => !value);
      else if (event.key === 'e' && current) {
        const href = link(access, apiPath`/api/alarms/${current.event_id}/export`);
        if (href) window.location.assign(href);
      } else return;
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [items.length, current, toggle, access]);

  const showNew = () => {
    void queryClient.resetQueries({ queryKey: alarmKeys.list(query) });
    void queryClient.invalidateQueries({ queryKey: alarmKeys.facets });
    setSelected(0);
  };
  const time = (ms: number) =>
    new Intl.DateTimeFormat(language, { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(ms));

  return (
    <section aria-labelledby={headingId} className="alarms">
      <div className="toolbar">
        <h2 id={headingId}>{t('alarms.title')}</h2>
        <span className="meta" role="status">
          {t('alarms.count', { count: total })}
        </span>
        {arrived > 0 && (
          <button type="button" className="primary" onClick={showNew}>
            {t('alarms.new', { count: arrived })}
          </button>
        )}
      </div>
      <AlarmFilters facets={facets.data} />
      <p className="hint">{t('alarms.keys')}</p>
      {alarms.isError && <ErrorNotice error={alarms.error} />}
      {alarms.isSuccess && items.length === 0 && <p>{t('alarms.empty')}</p>}
      <div className="alarms-body">
        <VirtualList
          items={items}
          rowHeight={ROW_HEIGHT}
          label={t('alarms.list')}
          keyOf={(alarm) => alarm.event_id}
          focusIndex={selected}
          onNearEnd={() => {
            if (alarms.hasNextPage && !alarms.isFetchingNextPage) void alarms.fetchNextPage();
          }}
          renderRow={(alarm, index) => (
            <button
              type="button"
              className={`alarm-row${index === selected ? ' alarm-selected' : ''}${alarm.reviewed_at ? ' alarm-reviewed' : ''}`}
              aria-current={index === selected ? 'true' : undefined}
              onClick={() => {
                setSelected(index);
                setFull(false);
              }}
            >
              {alarm.has_image ? (
                <img
                  className="alarm-thumb"
                  src={link(access, apiPath`/api/alarms/${alarm.event_id}/thumbnail`) ?? undefined}
                  alt=""
                  loading="lazy"
                  width={112}
                  height={63}
                />
              ) : (
                <span className="alarm-thumb alarm-no-image">{t('alarms.noImage')}</span>
              )}
              <span className="alarm-text">
                <strong>{title(alarm.task_id)}</strong>
                <span className="sub">
                  {time(alarm.timestamp)} · {alarm.rules.map(names.rule).join(', ')}
                </span>
              </span>
              <span className="alarm-score">{alarm.max_score > 0 ? alarm.max_score.toFixed(2) : ''}</span>
              <span className={alarm.reviewed_at ? 'badge badge-ok' : 'badge badge-warn'}>
                {alarm.reviewed_at ? t('alarms.reviewed') : t('alarms.unreviewed')}
              </span>
            </button>
          )}
        />
        {current && (
          <section className="alarm-detail card" aria-label={t('alarms.detail')}>
            <h3>
              {title(current.task_id)} · {time(current.timestamp)}
            </h3>
            <p className="meta">
              {t('alarms.detailFacts', {
                app: names.app(current.app_id),
                rules: current.rules.map(names.rule).join(', '),
                seq: current.seq,
                state: t(`delivery.${current.state}`),
              })}
            </p>
            {current.has_image ? (
              <img
                className="alarm-picture"
                src={
                  link(
                    access,
                    full
                      ? apiPath`/api/alarms/${current.event_id}/snapshot`
                      : apiPath`/api/alarms/${current.event_id}/thumbnail`,
                  ) ?? undefined
                }
                alt={t(full ? 'alarms.snapshotAlt' : 'alarms.thumbnailAlt', { name: title(current.task_id) })}
              />
            ) : (
              <p>{t('alarms.imageDropped')}</p>
            )}
            <div className="button-row">
              <button type="button" onClick={() => toggle(current)} disabled={review.isPending}>
                {current.reviewed_at ? t('alarms.markUnreviewed') : t('alarms.markReviewed')}
              </button>
              {current.has_image && !full && (
                <button type="button" onClick={() => setFull(true)}>
                  {t('alarms.showFull')}
                </button>
              )}
              <a
                className="button"
                href={link(access, apiPath`/api/alarms/${current.event_id}/export`) ?? undefined}
                download
              >
                {t('alarms.export')}
              </a>
            </div>
            {review.isError && <ErrorNotice error={review.error} />}
          </section>
        )}
      </div>
    </section>
  );
}
