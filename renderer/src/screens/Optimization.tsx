import { useQuery } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { useLocation } from 'wouter';
import { isRunning, type OptimizationView } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { useTransport } from '../context';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { useNow } from '../hooks/useNow';
import type { Language, Translate } from '../i18n';
import { useNames } from '../names/useNames';
import { engineLink, exportPath, type LinkAccess } from '../optimization/links';
import { chosenRun, elapsedShare, isCollecting, megabytes, secondsLeft } from '../optimization/run';
import { REASONS } from '../optimization/samples';
import { optimizationsQuery } from '../queries/optimizations';
import { tasksQuery } from '../queries/tasks';
import { paths } from '../routes';
import { useSession, useT } from '../store';
import { taskTitle } from '../tasks/title';
import { OptimizationProposals } from './OptimizationProposals';
import { OptimizationSamples } from './OptimizationSamples';
import { OptimizationStart } from './OptimizationStart';

export function timeOf(language: Language, ms: number): string {
  return new Intl.DateTimeFormat(language, { timeStyle: 'medium' }).format(new Date(ms));
}

/**
 * Effect optimization (4.13) of a video task: start a run, follow it while it collects, review its
 * hard samples (right or wrong), apply a proposed threshold to the app's rule, download the dataset.
 */
export function Optimization({ taskId, runId }: { taskId: string | null; runId: string | null }) {
  const t = useT();
  const transport = useTransport();
  const ids = { title: useId(), task: useId(), run: useId() };
  const [, navigate] = useLocation();
  const selectTask = (id: string | null) => navigate(paths.optimization(id));
  const selectRun = (id: string | null) => navigate(paths.optimization(taskId, id));
  const language = useSession((state) => state.language);
  const access = useLinkAccess();
  const [starting, setStarting] = useState(false);

  const tasks = useQuery(tasksQuery(transport, { mode: 'video' }));
  const videoTasks = (tasks.data ?? []).filter((task) => task.mode === 'video');
  const task = videoTasks.find((candidate) => candidate.task_id === taskId);
  const names = useNames();
  const taskRunning = task ? isRunning(task) : false;

  const runs = useQuery({ ...optimizationsQuery(transport, taskId ?? ''), enabled: taskId !== null });
  const run = chosenRun(runs.data ?? [], runId);
  const newestFirst = [...(runs.data ?? [])].reverse();

  return (
    <section aria-labelledby={ids.title} className="optimization">
      <div className="toolbar">
        <h2 id={ids.title}>{t('optimization.title')}</h2>
        <label htmlFor={ids.task}>{t('optimization.task')}</label>
        <select
          id={ids.task}
          value={taskId ?? ''}
          onChange={(event) => selectTask(event.target.value || null)}
        >
          <option value="">{t('optimization.chooseTask')}</option>
          {videoTasks.map((candidate) => (
            <option key={candidate.task_id} value={candidate.task_id}>
              {taskTitle(candidate)} · {candidate.app_ids.map(names.app).join(', ')}
              {candidate.device_id ? ` · ${candidate.device_id}` : ''}
              {isRunning(candidate) ? '' : ` · ${t('optimization.taskClosed')}`}
            </option>
          ))}
        </select>
        {task && (
          <button
            type="button"
            className="primary"
            onClick={() => setStarting(true)}
            disabled={!taskRunning}
            title={taskRunning ? undefined : t('optimization.closedNoRun')}
          >
            {t('optimization.new')}
          </button>
        )}
      </div>
      <p className="hint optimization-intro">{t('optimization.intro')}</p>
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {!taskId && <p>{videoTasks.length === 0 ? t('optimization.noTasks') : t('optimization.pickTask')}</p>}
      {taskId && runs.isPending && <p role="status">{t('common.loading')}</p>}
      {runs.isError && <ErrorNotice error={runs.error} />}
      {taskId && runs.isSuccess && runs.data.length === 0 && (
        <p>{taskRunning ? t('optimization.noRuns') : t('optimization.noRunsClosed')}</p>
      )}
      {run && (
        <>
          {newestFirst.length > 1 && (
            <div className="field-row run-picker">
              <label htmlFor={ids.run}>{t('optimization.run')}</label>
              <select
                id={ids.run}
                value={run.optimization_id}
                onChange={(event) => selectRun(event.target.value)}
              >
                {newestFirst.map((candidate) => (
                  <option key={candidate.optimization_id} value={candidate.optimization_id}>
                    {t('optimization.runOption', {
                      time: timeOf(language, candidate.created_at),
                      apps: candidate.app_ids.map(names.app).join(', '),
                      status: t(`optimization.status.${candidate.status}`),
                      count: candidate.sample_count,
                    })}
                  </option>
                ))}
              </select>
            </div>
          )}
          <RunStatus run={run} access={access} />
          <OptimizationProposals run={run} />
          <OptimizationSamples key={run.optimization_id} run={run} access={access} />
        </>
      )}
      {starting && task && (
        <OptimizationStart
          task={task}
          runs={runs.data ?? []}
          onClose={() => setStarting(false)}
          onStarted={(optimizationId) => {
            setStarting(false);
            selectRun(optimizationId);
          }}
        />
      )}
    </section>
  );
}

function endLabel(t: Translate, run: OptimizationView): string {
  return t(`optimization.ended.${run.end_reason === '' ? 'duration' : run.end_reason}`);
}

/** The run's state, figures and the dataset download. */
function RunStatus({ run, access }: { run: OptimizationView; access: LinkAccess | null }) {
  const t = useT();
  const language = useSession((state) => state.language);
  const titleId = useId();
  const names = useNames();
  const collecting = isCollecting(run);
  const now = useNow(1000);
  const download = access ? engineLink(exportPath(run.task_id, run.optimization_id), access) : null;
  const badge =
    run.status === 'running' ? 'badge badge-live' : run.status === 'finished' ? 'badge badge-ok' : 'badge';

  return (
    <section className="card run-status" aria-labelledby={titleId}>
      <div className="card-title">
        <h3 id={titleId}>
          {t('optimization.runTitle', { time: timeOf(language, run.created_at) })}
          <span className={badge}>{t(`optimization.status.${run.status}`)}</span>
        </h3>
        {download && (
          <a className="button-link primary" href={download} download>
            {t('optimization.download', { count: run.sample_count })}
          </a>
        )}
      </div>
      <p className="meta">
        <span>{t('optimization.apps', { apps: run.app_ids.map(names.app).join(', ') })}</span>
        <span>{t('optimization.durationOf', { seconds: run.duration })}</span>
        <span>{t('optimization.maxSamplesOf', { count: run.max_samples })}</span>
      </p>
      {collecting ? (
        <div className="run-progress">
          <progress
            value={elapsedShare(run, now)}
            max={1}
            aria-label={t('optimization.progressLabel', { seconds: secondsLeft(run, now) })}
          />
          <span className="meta">{t('optimization.secondsLeft', { seconds: secondsLeft(run, now) })}</span>
        </div>
      ) : (
        <p className="meta">
          {endLabel(t, run)}
          {run.finished_at !== null && ` · ${timeOf(language, run.finished_at)}`}
        </p>
      )}
      <p className="visually-hidden" role="status">
        {t('optimization.liveSummary', { status: t(`optimization.status.${run.status}`) })}
      </p>
      <dl className="facts run-facts">
        <dt>{t('optimization.framesAnalysed')}</dt>
        <dd>{run.frames_analysed}</dd>
        <dt>{t('optimization.samplesStored')}</dt>
        <dd>
          {t('optimization.samplesOf', {
            count: run.sample_count,
            max: run.max_samples,
            mb: megabytes(run.image_bytes),
          })}
        </dd>
        <dt>{t('optimization.byReason')}</dt>
        <dd>
          {REASONS.map(
            (reason) => `${t(`optimization.reason.${reason}`)} ${run.samples_by_reason[reason]}`,
          ).join(' · ')}
        </dd>
        <dt>{t('optimization.verdicts')}</dt>
        <dd>
          {t('optimization.verdictCounts', {
            right: run.verdicts.right,
            wrong: run.verdicts.wrong,
            none: run.verdicts.none,
          })}
        </dd>
        {run.samples_dropped > 0 && (
          <>
            <dt>{t('optimization.dropped')}</dt>
            <dd>{run.samples_dropped}</dd>
          </>
        )}
      </dl>
      {run.sample_limit && <p className="notice">{t(`optimization.limit.${run.sample_limit}`)}</p>}
      {download && <p className="hint">{t('optimization.downloadHint')}</p>}
    </section>
  );
}
