import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useState } from 'react';
import type { OptimizationView, TaskSummary } from '../api';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import { useTransport } from '../context';
import { useNames } from '../names/useNames';
import { busyApps } from '../optimization/run';
import {
  DEFAULT_DURATION_S,
  DEFAULT_MAX_SAMPLES,
  type StartForm,
  startErrors,
  startRequest,
} from '../optimization/start';
import { startOptimizationMutation } from '../queries/optimizations';
import { useT } from '../store';
import { taskTitle } from '../tasks/title';

interface OptimizationStartProps {
  task: TaskSummary;
  /** The task's runs: an app in one still collecting cannot join another (40905). */
  runs: readonly OptimizationView[];
  onClose: () => void;
  onStarted: (optimizationId: string) => void;
}

/** Starts a run (4.13) on a video task: which apps, how long, how many samples at most. */
export function OptimizationStart({ task, runs, onClose, onStarted }: OptimizationStartProps) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const ids = { apps: useId(), duration: useId(), max: useId(), durationError: useId(), maxError: useId() };
  const busy = busyApps(runs);
  const names = useNames();
  const [form, setForm] = useState<StartForm>(() => ({
    appIds: task.app_ids.filter((appId) => !busy.has(appId)),
    duration: String(DEFAULT_DURATION_S),
    maxSamples: String(DEFAULT_MAX_SAMPLES),
  }));
  const [submitted, setSubmitted] = useState(false);
  const errors = submitted ? startErrors(form) : {};

  const start = useMutation({
    ...startOptimizationMutation(transport, queryClient, task.task_id),
    onSuccess: onStarted,
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    const body = startRequest(form);
    if (body) start.mutate(body);
  }

  const toggle = (appId: string, on: boolean) =>
    setForm((current) => ({
      ...current,
      appIds: on
        ? task.app_ids.filter((id) => id === appId || current.appIds.includes(id))
        : current.appIds.filter((id) => id !== appId),
    }));

  return (
    <Dialog title={t('optimization.startTitle', { id: taskTitle(task) })} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <p className="hint">{t('optimization.startIntro')}</p>
        <fieldset aria-describedby={errors.app_ids ? ids.apps : undefined}>
          <legend>{t('optimization.startApps')}</legend>
          <ul className="checklist">
            {task.app_ids.map((appId) => {
              const runningIn = busy.get(appId);
              return (
                <li key={appId}>
                  <label className={runningIn ? 'disabled' : ''}>
                    <input
                      type="checkbox"
                      checked={form.appIds.includes(appId)}
                      disabled={runningIn !== undefined}
                      onChange={(event) => toggle(appId, event.target.checked)}
                    />
                    {names.app(appId)}
                    {runningIn && ` (${t('optimization.appBusy', { id: runningIn.slice(0, 8) })})`}
                  </label>
                </li>
              );
            })}
          </ul>
          <FieldError id={ids.apps} message={errors.app_ids} />
        </fieldset>
        <div className="field-grid">
          <div className="field">
            <label htmlFor={ids.duration}>{t('optimization.duration')}</label>
            <input
              id={ids.duration}
              className="number"
              type="number"
              inputMode="numeric"
              min={10}
              max={86_400}
              step={1}
              value={form.duration}
              onChange={(event) => setForm((current) => ({ ...current, duration: event.target.value }))}
              {...errorProps(ids.durationError, errors.duration)}
            />
            <span className="hint">{t('optimization.durationHint')}</span>
            <FieldError id={ids.durationError} message={errors.duration} />
          </div>
          <div className="field">
            <label htmlFor={ids.max}>{t('optimization.maxSamples')}</label>
            <input
              id={ids.max}
              className="number"
              type="number"
              inputMode="numeric"
              min={1}
              max={100_000}
              step={1}
              value={form.maxSamples}
              onChange={(event) => setForm((current) => ({ ...current, maxSamples: event.target.value }))}
              {...errorProps(ids.maxError, errors.max_samples)}
            />
            <span className="hint">{t('optimization.maxSamplesHint')}</span>
            <FieldError id={ids.maxError} message={errors.max_samples} />
          </div>
        </div>
        {start.isError && <ErrorNotice error={start.error} />}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={start.isPending}>
            {start.isPending ? t('optimization.starting') : t('optimization.start')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
