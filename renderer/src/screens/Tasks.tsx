import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { TASK_PAGE_LIMIT } from '../../../engine/contract';
import { isRunning, type TaskSummary } from '../api';
import { nodeLabel } from '../cluster/site';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { StatusBadge } from '../components/StatusBadge';
import { useTransport } from '../context';
import { taskFigures } from '../health';
import {
  closeTaskMutation,
  purgeTaskMutation,
  RUNNING,
  startAgainMutation,
  taskQuery,
  tasksQuery,
} from '../queries/tasks';
import { paths } from '../routes';
import { useSession, useT } from '../store';
import { taskTitle } from '../tasks/title';
import { StartTask } from './StartTask';
import { TaskEditor } from './TaskEditor';

const CLOSED = { state: 'closed' } as const;

/**
 * The task table, running tasks and then closed ones (each a page of the listing without areas);
 * `taskId` (from the address) opens that task's editor, which reads the whole task.
 */
export function Tasks({ taskId }: { taskId: string | null }) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const headingId = useId();
  const [, navigate] = useLocation();
  const [starting, setStarting] = useState(false);
  const [closing, setClosing] = useState<TaskSummary | null>(null);
  const [removing, setRemoving] = useState<TaskSummary | null>(null);
  const running = useQuery(tasksQuery(transport, RUNNING));
  const closed = useQuery(tasksQuery(transport, CLOSED));
  const editing = useQuery({ ...taskQuery(transport, taskId ?? ''), enabled: taskId !== null });
  const close = useMutation(closeTaskMutation(transport, queryClient));
  const remove = useMutation(purgeTaskMutation(transport, queryClient));
  const again = useMutation({
    ...startAgainMutation(transport, queryClient),
    onSuccess: (started, closedId) =>
      navigate(
        closed.data?.find((task) => task.task_id === closedId)?.mode === 'video'
          ? paths.live(started)
          : paths.images(started),
      ),
  });
  const language = useSession((state) => state.language);
  const failed = running.error ?? closed.error;
  const listed = running.isSuccess && closed.isSuccess;

  return (
    <section aria-labelledby={headingId}>
      <div className="toolbar">
        <h2 id={headingId}>{t('tasks.title')}</h2>
        <button
          type="button"
          onClick={() => Promise.all([running.refetch(), closed.refetch()])}
          disabled={running.isFetching || closed.isFetching}
        >
          {t('common.refresh')}
        </button>
        <button type="button" className="primary" onClick={() => setStarting(true)}>
          {t('tasks.new')}
        </button>
      </div>
      {close.isError && <ErrorNotice error={close.error} />}
      {remove.isError && <ErrorNotice error={remove.error} />}
      {again.isError && <ErrorNotice error={again.error} />}
      {(running.isPending || closed.isPending) && <p role="status">{t('common.loading')}</p>}
      {failed && <ErrorNotice error={failed} />}
      {listed && running.data.length + closed.data.length === 0 && <p>{t('tasks.empty')}</p>}
      {listed &&
        groupTasks(running.data, closed.data, language).map((group) => (
          <TaskGroup
            key={group.id}
            label={t(group.id === 'active' ? 'tasks.group.active' : 'tasks.group.closed', {
              count: group.tasks.length,
            })}
            tasks={group.tasks}
            open={group.id === 'active' || group.tasks.length <= FOLDED_CLOSED}
            more={group.id === 'closed' && group.tasks.length >= TASK_PAGE_LIMIT}
            closingId={close.isPending ? (close.variables ?? null) : null}
            startingId={again.isPending ? (again.variables ?? null) : null}
            onClose={setClosing}
            onRemove={setRemoving}
            onStartAgain={(task) => again.mutate(task.task_id)}
          />
        ))}
      {starting && (
        <StartTask
          onClose={() => setStarting(false)}
          onStarted={(started, mode) => {
            setStarting(false);
            navigate(mode === 'video' ? paths.live(started) : paths.images(started));
          }}
        />
      )}
      {/* The editor starts from the task as the engine has it now, not from what the cache kept. */}
      {editing.data && editing.isFetchedAfterMount && (
        <TaskEditor
          task={editing.data}
          onClose={() => navigate(paths.tasks)}
          onEditRegions={() => navigate(paths.live(editing.data.task_id))}
        />
      )}
      {closing && (
        <ConfirmDialog
          title={t('tasks.closeTitle')}
          message={t('tasks.closeConfirm', { id: taskTitle(closing) })}
          confirmLabel={t('tasks.close')}
          onConfirm={() => close.mutate(closing.task_id)}
          onClose={() => setClosing(null)}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={t('tasks.removeTitle')}
          message={t('tasks.removeConfirm', { id: taskTitle(removing) })}
          confirmLabel={t('tasks.remove')}
          onConfirm={() => remove.mutate(removing.task_id)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}

/** More closed tasks than this start folded: the running ones are what an operator looks for. */
const FOLDED_CLOSED = 10;

/** Running tasks first, then closed ones, each sorted by name as the operator reads it. */
function groupTasks(running: readonly TaskSummary[], stopped: readonly TaskSummary[], language: string) {
  const byName = (a: TaskSummary, b: TaskSummary) =>
    taskTitle(a).localeCompare(taskTitle(b), language, { numeric: true }) || a.created_at - b.created_at;
  const active = [...running].sort(byName);
  const closed = [...stopped].sort(byName);
  return [
    { id: 'active' as const, tasks: active },
    { id: 'closed' as const, tasks: closed },
  ].filter((group) => group.tasks.length > 0);
}

interface TaskGroupProps {
  label: string;
  tasks: readonly TaskSummary[];
  open: boolean;
  /** The group is a full page of the listing: there may be more than it shows. */
  more: boolean;
  closingId: string | null;
  /** The closed task being started again (its source opens, up to 15 s). */
  startingId: string | null;
  onClose: (task: TaskSummary) => void;
  onRemove: (task: TaskSummary) => void;
  onStartAgain: (task: TaskSummary) => void;
}

function TaskGroup({
  label,
  tasks,
  open,
  more,
  closingId,
  startingId,
  onClose,
  onRemove,
  onStartAgain,
}: TaskGroupProps) {
  const t = useT();
  return (
    <details className="task-group" open={open}>
      <summary>{label}</summary>
      {more && <p className="hint">{t('tasks.closedPage', { count: tasks.length })}</p>}
      <div className="table-scroll">
        <table className="tasks-table">
          <caption className="visually-hidden">{t('tasks.caption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('tasks.col.name')}</th>
              <th scope="col">{t('tasks.col.mode')}</th>
              <th scope="col">{t('tasks.col.apps')}</th>
              <th scope="col">{t('tasks.col.status')}</th>
              <th scope="col" className="num">
                {t('tasks.col.fps')}
              </th>
              <th scope="col" className="num">
                {t('tasks.col.reconnects')}
              </th>
              <th scope="col">{t('tasks.col.actions')}</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((task) => (
              <TaskRow
                key={task.task_id}
                task={task}
                closing={closingId === task.task_id}
                starting={startingId === task.task_id}
                onClose={onClose}
                onRemove={onRemove}
                onStartAgain={onStartAgain}
              />
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

function TaskRow({
  task,
  closing,
  starting,
  onClose,
  onRemove,
  onStartAgain,
}: {
  task: TaskSummary;
  closing: boolean;
  starting: boolean;
  onClose: (task: TaskSummary) => void;
  onRemove: (task: TaskSummary) => void;
  onStartAgain: (task: TaskSummary) => void;
}) {
  const t = useT();
  const running = isRunning(task);
  const figures = taskFigures(task.health);
  const title = taskTitle(task);
  const node = nodeLabel(task, t);
  return (
    <tr className={running ? '' : 'closed-row'}>
      <th scope="row">
        {title}
        <span className="sub">
          <code title={task.task_id}>{task.task_id.slice(0, 8)}</code>
          {task.business_id && ` · ${task.business_id}`}
          {node && ` · ${node}`}
        </span>
      </th>
      <td className="nowrap">{t(`mode.${task.mode}`)}</td>
      <td>{task.app_ids.join(', ')}</td>
      <td>
        <StatusBadge task={task} />
      </td>
      <td className="num">{figures.fps === null ? '—' : figures.fps.toFixed(1)}</td>
      <td className="num">{figures.reconnects ?? '—'}</td>
      <td>
        {running && (
          <div className="row-actions">
            {task.mode === 'video' ? (
              <>
                <Link
                  className="button"
                  href={paths.live(task.task_id)}
                  aria-label={t('tasks.liveLabel', { id: title })}
                >
                  {t('tasks.live')}
                </Link>
                <Link
                  className="button"
                  href={paths.optimization(task.task_id)}
                  aria-label={t('tasks.optimizeLabel', { id: title })}
                >
                  {t('tasks.optimize')}
                </Link>
              </>
            ) : (
              <Link
                className="button"
                href={paths.images(task.task_id)}
                aria-label={t('tasks.uploadLabel', { id: title })}
              >
                {t('tasks.upload')}
              </Link>
            )}
            <Link
              className="button"
              href={paths.task(task.task_id)}
              aria-label={t('tasks.editLabel', { id: title })}
            >
              {t('tasks.edit')}
            </Link>
            <button
              type="button"
              className="danger"
              aria-label={t('tasks.closeLabel', { id: title })}
              onClick={() => onClose(task)}
              disabled={closing}
            >
              {closing ? t('tasks.closing') : t('tasks.close')}
            </button>
          </div>
        )}
        {!running && (
          <div className="row-actions">
            <button
              type="button"
              aria-label={t('tasks.startAgainLabel', { name: title })}
              onClick={() => onStartAgain(task)}
              disabled={starting}
              aria-busy={starting}
            >
              {starting ? t('tasks.starting') : t('tasks.startAgain')}
            </button>
            <button
              type="button"
              className="danger"
              aria-label={t('tasks.removeLabel', { id: title })}
              onClick={() => onRemove(task)}
            >
              {t('tasks.remove')}
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}
