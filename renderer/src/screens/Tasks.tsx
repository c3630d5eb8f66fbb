import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { isRunning, type Task } from '../api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { taskFigures } from '../health';
import type { MessageKey, Translate } from '../i18n';
import { closeTaskMutation, tasksQuery } from '../queries/tasks';
import { paths } from '../routes';
import { useT } from '../store';
import { StartTask } from './StartTask';
import { TaskEditor } from './TaskEditor';

function modeLabel(t: Translate, mode: Task['mode']): string {
  return t(`mode.${mode}`);
}

export function statusLabel(t: Translate, task: Task): string {
  if (isRunning(task)) {
    if (task.status === 'starting') return t('status.starting');
    if (task.status === 'stream_lost') return t('status.streamLost');
    return t('status.running');
  }
  const code = task.close_code;
  const key = `status.closed.${code}`;
  return code >= 1 && code <= 5 ? t(key as MessageKey) : t('status.closed.other', { code });
}

function statusClass(task: Task): string {
  if (!isRunning(task)) return 'badge';
  return task.status === 'stream_lost'
    ? 'badge badge-bad'
    : task.status === 'starting'
      ? 'badge'
      : 'badge badge-ok';
}

/** The task table; `taskId` (from the address) opens that task's editor. */
export function Tasks({ taskId }: { taskId: string | null }) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const headingId = useId();
  const [, navigate] = useLocation();
  const [starting, setStarting] = useState(false);
  const [closing, setClosing] = useState<Task | null>(null);
  const tasks = useQuery(tasksQuery(transport));
  const close = useMutation(closeTaskMutation(transport, queryClient));
  const editing = taskId === null ? undefined : tasks.data?.find((task) => task.task_id === taskId);

  return (
    <section aria-labelledby={headingId}>
      <div className="toolbar">
        <h2 id={headingId}>{t('tasks.title')}</h2>
        <button type="button" onClick={() => tasks.refetch()} disabled={tasks.isFetching}>
          {t('common.refresh')}
        </button>
        <button type="button" className="primary" onClick={() => setStarting(true)}>
          {t('tasks.new')}
        </button>
      </div>
      {close.isError && <ErrorNotice error={close.error} />}
      {tasks.isPending && <p role="status">{t('common.loading')}</p>}
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {tasks.isSuccess && tasks.data.length === 0 && <p>{t('tasks.empty')}</p>}
      {tasks.isSuccess && tasks.data.length > 0 && (
        <div className="table-scroll">
          <table className="tasks-table">
            <caption className="visually-hidden">{t('tasks.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('tasks.col.id')}</th>
                <th scope="col">{t('tasks.col.mode')}</th>
                <th scope="col">{t('tasks.col.apps')}</th>
                <th scope="col">{t('tasks.col.status')}</th>
                <th scope="col" className="num">
                  {t('tasks.col.fps')}
                </th>
                <th scope="col" className="num">
                  {t('tasks.col.reconnects')}
                </th>
                <th scope="col" className="num">
                  {t('tasks.col.closeCode')}
                </th>
                <th scope="col">{t('tasks.col.dump')}</th>
                <th scope="col">{t('tasks.col.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {tasks.data.map((task) => {
                const running = isRunning(task);
                const figures = taskFigures(task.health);
                const pending = close.isPending && close.variables === task.task_id;
                const shortId = task.task_id.slice(0, 8);
                return (
                  <tr key={task.task_id} className={running ? '' : 'closed-row'}>
                    <th scope="row">
                      <code title={task.task_id}>{shortId}</code>
                      {(task.device_id || task.business_id) && (
                        <span className="sub">
                          {[task.device_id, task.business_id].filter(Boolean).join(' · ')}
                        </span>
                      )}
                    </th>
                    <td>{modeLabel(t, task.mode)}</td>
                    <td>{task.app_ids.join(', ')}</td>
                    <td>
                      <span className={statusClass(task)}>{statusLabel(t, task)}</span>
                    </td>
                    <td className="num">{figures.fps === null ? '—' : figures.fps.toFixed(1)}</td>
                    <td className="num">{figures.reconnects ?? '—'}</td>
                    <td className="num">{task.close_code}</td>
                    <td className="dump">{task.dump}</td>
                    <td>
                      {running && (
                        <div className="row-actions">
                          {task.mode === 'video' ? (
                            <>
                              <Link
                                className="button"
                                href={paths.live(task.task_id)}
                                aria-label={t('tasks.liveLabel', { id: shortId })}
                              >
                                {t('tasks.live')}
                              </Link>
                              <Link
                                className="button"
                                href={paths.optimization(task.task_id)}
                                aria-label={t('tasks.optimizeLabel', { id: shortId })}
                              >
                                {t('tasks.optimize')}
                              </Link>
                            </>
                          ) : (
                            <Link
                              className="button"
                              href={paths.images(task.task_id)}
                              aria-label={t('tasks.uploadLabel', { id: shortId })}
                            >
                              {t('tasks.upload')}
                            </Link>
                          )}
                          <Link
                            className="button"
                            href={paths.task(task.task_id)}
                            aria-label={t('tasks.editLabel', { id: shortId })}
                          >
                            {t('tasks.edit')}
                          </Link>
                          <button
                            type="button"
                            className="danger"
                            aria-label={t('tasks.closeLabel', { id: shortId })}
                            onClick={() => setClosing(task)}
                            disabled={pending}
                          >
                            {pending ? t('tasks.closing') : t('tasks.close')}
                          </button>
                        </div>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {starting && (
        <StartTask
          onClose={() => setStarting(false)}
          onStarted={(started, mode) => {
            setStarting(false);
            navigate(mode === 'video' ? paths.live(started) : paths.images(started));
          }}
        />
      )}
      {editing && (
        <TaskEditor
          task={editing}
          onClose={() => navigate(paths.tasks)}
          onEditRegions={() => navigate(paths.live(editing.task_id))}
        />
      )}
      {closing && (
        <ConfirmDialog
          title={t('tasks.closeTitle')}
          message={t('tasks.closeConfirm', { id: closing.task_id })}
          confirmLabel={t('tasks.close')}
          onConfirm={() => close.mutate(closing.task_id)}
          onClose={() => setClosing(null)}
        />
      )}
    </section>
  );
}
