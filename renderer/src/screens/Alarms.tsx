import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import type { ReviewItem } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { VirtualList } from '../components/VirtualList';
import { useTransport } from '../context';
import { useFeed } from '../feed/store';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { useNames } from '../names/useNames';
import { engineLink, type LinkAccess } from '../optimization/links';
import { alarmFacetsQuery, alarmKeys } from '../queries/alarms';
import { reviewItemsMutation, reviewItemsQuery, reviewKeys } from '../queries/review';
import { AlarmFilters } from '../review/AlarmFilters';
import { toQuery, useAlarmFilter } from '../review/filter';
import { ItemDetail } from '../review/ItemDetail';
import { newAlarms } from '../review/new-alarms';
import { Timeline } from '../review/Timeline';
import { useSession, useT } from '../store';
import { useTaskTitle } from '../tasks/title';
import { apiPath } from '../transport';

const ROW_HEIGHT = 76;

const link = (access: LinkAccess | null, path: string | null) =>
  access && path ? engineLink(path, access) : null;

/**
 * Alarm review on review items (one object's visit: its alarms together), newest first, paged in
 * from the engine as the operator scrolls through the whole history. New alarms never move the rows
 * being read: a marker counts them until the operator asks for them. Items are marked reviewed one
 * at a time from the keyboard, a selection at once, or all the filter shows; the selected item
 * plays its clip beside the list, and a timeline shows its camera's day.
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
  const pages = useInfiniteQuery(reviewItemsQuery(transport, query));
  const facets = useQuery(alarmFacetsQuery(transport));
  const review = useMutation(reviewItemsMutation(transport, queryClient));
  const items = useMemo(() => pages.data?.pages.flatMap((page) => page.items) ?? [], [pages.data]);
  const total = pages.data?.pages[0]?.total ?? 0;
  const [selected, setSelected] = useState(0);
  const [checked, setChecked] = useState<ReadonlySet<string>>(new Set());
  const [opened, setOpened] = useState<{ itemId: string; taskId: string } | null>(null);
  const [at, setAt] = useState<number | null>(null);
  const [askAll, setAskAll] = useState(false);
  const detail = useRef<HTMLDivElement>(null);
  const feed = useFeed((state) => state.items);
  const arrived = newAlarms(feed, items[0]?.end ?? pages.dataUpdatedAt, filter);
  const current: ReviewItem | undefined = items[selected];
  const openId = opened?.itemId ?? current?.item_id ?? null;
  const camera = opened?.taskId ?? current?.task_id ?? (filter.taskId || null);

  // A new filter starts at the top, with nothing chosen.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the query is what resets the selection
  useEffect(() => {
    setSelected(0);
    setChecked(new Set());
    setOpened(null);
  }, [query]);

  const toggle = useCallback(
    (item: ReviewItem | undefined) => {
      if (item) review.mutate({ target: { itemIds: [item.item_id] }, reviewed: item.reviewed_at === null });
    },
    [review],
  );
  const check = useCallback((itemId: string) => {
    setChecked((previous) => {
      const next = new Set(previous);
      if (!next.delete(itemId)) next.add(itemId);
      return next;
    });
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      if (
        target.closest('input, select, textarea, video, [role="dialog"]') ||
        event.ctrlKey ||
        event.metaKey ||
        event.altKey
      )
        return;
      // Enter and space on a button or link are that control's own (a timeline mark, a frame step).
      if ((event.key === 'Enter' || event.key === ' ') && target.closest('button, a')) return;
      const move = (by: number) => {
        setSelected((index) => Math.min(Math.max(0, index + by), Math.max(0, items.length - 1)));
        setOpened(null);
        setAt(null);
      };
      if (event.key === 'j' || event.key === 'ArrowDown') move(1);
      else if (event.key === 'k' || event.key === 'ArrowUp') move(-1);
      else if (event.key === 'r' || event.key === ' ') toggle(current);
      else if (event.key === 'x' && current) check(current.item_id);
      else if (event.key === 'Enter') {
        const video = detail.current?.querySelector('video');
        if (video) void (video.paused ? video.play() : Promise.resolve(video.pause()));
      } else if (event.key === 'e' && current) {
        const href = link(access, apiPath`/api/alarms/${current.best_event_id}/export`);
        if (href) window.location.assign(href);
      } else return;
      event.preventDefault();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [items.length, current, toggle, check, access]);

  const showNew = () => {
    void queryClient.resetQueries({ queryKey: reviewKeys.list(query) });
    void queryClient.invalidateQueries({ queryKey: alarmKeys.facets });
    setSelected(0);
  };
  const time = (ms: number) =>
    new Intl.DateTimeFormat(language, { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(ms));
  const span = (item: ReviewItem) =>
    item.end > item.start
      ? `${time(item.start)} – ${new Intl.DateTimeFormat(language, { timeStyle: 'medium' }).format(new Date(item.end))}`
      : time(item.start);
  const done = review.isSuccess ? review.data : null;

  return (
    <section aria-labelledby={headingId} className="alarms">
      <div className="toolbar">
        <h2 id={headingId}>{t('alarms.title')}</h2>
        <span className="meta" role="status">
          {t('items.count', { count: total })}
        </span>
        {arrived > 0 && (
          <button type="button" className="primary" onClick={showNew}>
            {t('alarms.new', { count: arrived })}
          </button>
        )}
      </div>
      <AlarmFilters facets={facets.data} />
      <div className="button-row review-bulk">
        <button
          type="button"
          disabled={checked.size === 0 || review.isPending}
          onClick={() =>
            review.mutate(
              { target: { itemIds: [...checked] }, reviewed: true },
              { onSuccess: () => setChecked(new Set()) },
            )
          }
        >
          {t('items.markSelected', { count: checked.size })}
        </button>
        <button type="button" disabled={total === 0 || review.isPending} onClick={() => setAskAll(true)}>
          {t('items.markAllShown', { count: total })}
        </button>
        <span className="meta" role="status">
          {done !== null && t('items.marked', { count: done })}
        </span>
      </div>
      <p className="hint">{t('items.keys')}</p>
      {pages.isError && <ErrorNotice error={pages.error} />}
      {review.isError && <ErrorNotice error={review.error} />}
      {pages.isSuccess && items.length === 0 && <p>{t('alarms.empty')}</p>}
      <div className="alarms-body">
        <VirtualList
          items={items}
          rowHeight={ROW_HEIGHT}
          label={t('items.list')}
          keyOf={(item) => item.item_id}
          focusIndex={selected}
          onNearEnd={() => {
            if (pages.hasNextPage && !pages.isFetchingNextPage) void pages.fetchNextPage();
          }}
          renderRow={(item, index) => {
            const name = item.task_name ?? title(item.task_id);
            return (
              <div
                className={`alarm-row${index === selected && opened === null ? ' alarm-selected' : ''}${item.reviewed_at ? ' alarm-reviewed' : ''}`}
              >
                <input
                  type="checkbox"
                  checked={checked.has(item.item_id)}
                  onChange={() => check(item.item_id)}
                  aria-label={t('items.select', { name, time: time(item.start) })}
                />
                <button
                  type="button"
                  className="alarm-open"
                  aria-current={index === selected && opened === null ? 'true' : undefined}
                  onClick={() => {
                    setSelected(index);
                    setOpened(null);
                    setAt(null);
                  }}
                >
                  {item.thumbnail_url ? (
                    <img
                      className="alarm-thumb"
                      src={link(access, item.thumbnail_url) ?? undefined}
                      alt=""
                      loading="lazy"
                      width={112}
                      height={63}
                    />
                  ) : (
                    <span className="alarm-thumb alarm-no-image">{t('alarms.noImage')}</span>
                  )}
                  <span className="alarm-text">
                    <strong>{name}</strong>
                    <span className="sub">
                      {span(item)} · {item.classes.map((id) => names.class(id, item.apps)).join(', ')}
                    </span>
                    <span className="sub">
                      {t('items.rowFacts', {
                        count: item.alarm_count,
                        rules: item.rules.map(names.rule).join(', '),
                      })}
                    </span>
                  </span>
                  <span className="alarm-score">{item.peak_score > 0 ? item.peak_score.toFixed(2) : ''}</span>
                  <span className={item.reviewed_at ? 'badge badge-ok' : 'badge badge-warn'}>
                    {item.reviewed_at ? t('alarms.reviewed') : t('alarms.unreviewed')}
                  </span>
                </button>
              </div>
            );
          }}
        />
        <div ref={detail}>
          {openId && (
            <ItemDetail
              key={openId}
              itemId={openId}
              initial={items.find((item) => item.item_id === openId)}
            />
          )}
        </div>
      </div>
      {camera && (
        <Timeline
          taskId={camera}
          name={(opened === null ? current?.task_name : null) ?? title(camera)}
          apps={current?.apps ?? []}
          at={at ?? current?.start ?? Date.now()}
          onAt={setAt}
          openItemId={openId}
          onOpen={(itemId) => setOpened({ itemId, taskId: camera })}
        />
      )}
      {askAll && (
        <ConfirmDialog
          title={t('items.markAllTitle')}
          message={t('items.markAllMessage', { count: total })}
          confirmLabel={t('items.markAllShown', { count: total })}
          onConfirm={() => review.mutate({ target: { filter: query }, reviewed: true })}
          onClose={() => setAskAll(false)}
        />
      )}
    </section>
  );
}
