import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId } from 'react';
import { closeTask, isRunning, listTasks, type Task } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import type { MessageKey, Translate } from '../i18n';
import { useT } from '../store';

const REFRESH_MS = 5_000;

function modeLabel(t: Translate, mode: Task['mode']): string {
  return t(`mode.${mode ?? 'video'}`);
}

function statusLabel(t: Translate, task: Task): string {
  if (isRunning(task)) return t('status.running');
  const code = task.close_code ?? 0;
  const key = `status.closed.${code}`;
  return code >= 1 && code <= 5 ? t(key as MessageKey) : t('status.closed.other', { code });
}

export function Tasks() {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const headingId = useId();
  const tasks = useQuery({
    queryKey: ['tasks'],
    queryFn: ({ signal }) => listTasks(transport, signal),
    refetchInterval: REFRESH_MS,
  });
  const close = useMutation({
    mutationFn: (taskId: string) => closeTask(transport, taskId),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ['tasks'] }),
  });

  function requestClose(taskId: string) {
    if (window.confirm(t('tasks.closeConfirm', { id: taskId }))) close.mutate(taskId);
  }

  return (
    <section aria-labelledby={headingId}>
      <div className="toolbar">
        <h2 id={headingId}>{t('tasks.title')}</h2>
        <button type="button" onClick={() => tasks.refetch()} disabled={tasks.isFetching}>
          {t('common.refresh')}
        </button>
      </div>
      {close.isError && <ErrorNotice error={close.error} />}
      {tasks.isPending && <p role="status">{t('common.loading')}</p>}
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {tasks.isSuccess && tasks.data.length === 0 && <p>{t('tasks.empty')}</p>}
      {tasks.isSuccess && tasks.data.length > 0 && (
        <div className="table-scroll">
          <table>
            <caption className="visually-hidden">{t('tasks.caption')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('tasks.col.id')}</th>
                <th scope="col">{t('tasks.col.mode')}</th>
                <th scope="col">{t('tasks.col.apps')}</th>
                <th scope="col">{t('tasks.col.status')}</th>
                <th scope="col">{t('tasks.col.dump')}</th>
                <th scope="col">{t('tasks.col.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {tasks.data.map((task) => {
                const running = isRunning(task);
                const closing = close.isPending && close.variables === task.task_id;
                return (
                  <tr key={task.task_id}>
                    <th scope="row">
                      <code>{task.task_id}</code>
                    </th>
                    <td>{modeLabel(t, task.mode)}</td>
                    <td>{task.app_ids.join(', ')}</td>
                    <td>
                      <span className={running ? 'badge badge-ok' : 'badge'}>{statusLabel(t, task)}</span>
                    </td>
                    <td className="dump">{task.dump ?? ''}</td>
                    <td>
                      {running && (
                        <button
                          type="button"
                          className="danger"
                          aria-label={t('tasks.closeLabel', { id: task.task_id })}
                          onClick={() => requestClose(task.task_id)}
                          disabled={closing}
                        >
                          {closing ? t('tasks.closing') : t('tasks.close')}
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
