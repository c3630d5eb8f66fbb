import { useQuery } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { isRunning } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { RUNNING_VIDEO, tasksQuery } from '../queries/tasks';
import { useSession, useT } from '../store';
import { taskTitle } from '../tasks/title';
import { pageCount, pageOf, tileVideo, WALL_SIZES } from '../wall/layout';
import { useWallSettings } from '../wall/store';
import { WallTile } from '../wall/WallTile';

/**
 * Every running camera at once: a grid of 1, 4, 9 or 16 tiles (the choice is remembered), paged
 * when there are more cameras, each tile the camera's annotated video scaled to the tile
 * (layout.ts). The grid always fits the window (styles.css). A click focuses one camera, its tile
 * going on playing while its full-size video opens (Escape goes back); full screen is the pictures
 * alone, on black.
 */
export function Wall() {
  const t = useT();
  const transport = useTransport();
  const headingId = useId();
  const language = useSession((state) => state.language);
  const size = useWallSettings((state) => state.size);
  const setSize = useWallSettings((state) => state.setSize);
  const tasks = useQuery(tasksQuery(transport, RUNNING_VIDEO));
  const [page, setPage] = useState(0);
  const [focused, setFocused] = useState<string | null>(null);
  const wallRef = useRef<HTMLElement>(null);

  const cameras = useMemo(
    () =>
      (tasks.data ?? [])
        .filter((task) => task.mode === 'video' && isRunning(task))
        .sort((a, b) => taskTitle(a).localeCompare(taskTitle(b), language, { numeric: true })),
    [tasks.data, language],
  );
  const pages = pageCount(cameras.length, size);
  const shown = focused
    ? cameras.filter((task) => task.task_id === focused)
    : pageOf(cameras, size, Math.min(page, pages - 1));
  const scale = focused ? null : tileVideo(size);

  useEffect(() => {
    if (!focused) return;
    const back = (event: KeyboardEvent) => {
      if (event.key === 'Escape' && !document.fullscreenElement) setFocused(null);
    };
    document.addEventListener('keydown', back);
    return () => document.removeEventListener('keydown', back);
  }, [focused]);
  // A focused camera that stopped running leaves the focus.
  useEffect(() => {
    if (focused && tasks.data && !cameras.some((task) => task.task_id === focused)) setFocused(null);
  }, [focused, cameras, tasks.data]);

  return (
    <section aria-labelledby={headingId} className="wall" ref={wallRef}>
      <div className="toolbar">
        <h2 id={headingId}>{t('wall.title')}</h2>
        <fieldset className="segmented wall-sizes">
          <legend className="visually-hidden">{t('wall.size')}</legend>
          {WALL_SIZES.map((option) => (
            <label key={option}>
              <input
                type="radio"
                name="wall-size"
                value={option}
                checked={size === option}
                onChange={() => {
                  setSize(option);
                  setPage(0);
                  setFocused(null);
                }}
              />
              {t('wall.sizeOption', { count: option })}
            </label>
          ))}
        </fieldset>
        {pages > 1 && !focused && (
          <span className="button-row">
            <button type="button" onClick={() => setPage((p) => Math.max(0, p - 1))} disabled={page === 0}>
              {t('wall.previous')}
            </button>
            <span className="meta">{t('wall.page', { page: Math.min(page, pages - 1) + 1, pages })}</span>
            <button
              type="button"
              onClick={() => setPage((p) => Math.min(pages - 1, p + 1))}
              disabled={page >= pages - 1}
            >
              {t('wall.next')}
            </button>
          </span>
        )}
        {focused && (
          <button type="button" onClick={() => setFocused(null)}>
            {t('wall.back')}
          </button>
        )}
        <button
          type="button"
          onClick={() => {
            if (document.fullscreenElement) void document.exitFullscreen();
            else void wallRef.current?.requestFullscreen();
          }}
        >
          {t('wall.fullScreen')}
        </button>
      </div>
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {tasks.isSuccess && cameras.length === 0 && <p>{t('wall.empty')}</p>}
      <ul className={`wall-grid wall-${focused ? 1 : size}`}>
        {shown.map((task) => (
          <WallTile
            key={task.task_id}
            task={task}
            scale={scale}
            focused={focused === task.task_id}
            onSelect={() => setFocused(focused === task.task_id ? null : task.task_id)}
          />
        ))}
      </ul>
    </section>
  );
}
