import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useMemo, useReducer } from 'react';
import { appsOf, type TaskMode } from '../api';
import { Dialog } from '../components/Dialog';
import { WaitProgress } from '../components/WaitProgress';
import { useTransport } from '../context';
import { useAbortable } from '../hooks/useAbortable';
import { packagesQuery } from '../queries/packages';
import { startTaskMutation } from '../queries/tasks';
import { isSourceRefusal, refusalOf } from '../refusals/refusal';
import { useT } from '../store';
import { stageAppsOf } from '../tasks/stage-apps';
import { redactCredentials } from '../tasks/stream-error';
import { ApiError } from '../transport';
import { AppsStep } from '../wizard/AppsStep';
import { formPathOf, startBody, wizardErrors } from '../wizard/body';
import { OutputStep } from '../wizard/OutputStep';
import { RegionsStep } from '../wizard/RegionsStep';
import { SourceStep } from '../wizard/SourceStep';
import { errorsOf, initialWizard, STEPS, visibleError, wizardReducer } from '../wizard/state';
import { usePreview } from '../wizard/usePreview';

interface StartTaskProps {
  onClose: () => void;
  onStarted: (taskId: string, mode: TaskMode) => void;
}

/**
 * The start wizard (4.4): source with a raw preview (4.12), applications, regions drawn on the
 * preview, then drawing options and where results go. Each step is checked with the engine's
 * StartTaskBody schema and polygon check before the next; the engine's refusal goes to its field.
 * The form is ../wizard/state's reducer; what it sends and what holds it back, ../wizard/body.
 */
export function StartTask({ onClose, onStarted }: StartTaskProps) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const [state, dispatch] = useReducer(wizardReducer, undefined, initialWizard);
  const preview = usePreview(transport);
  const subPreview = usePreview(transport);

  const packages = useQuery(packagesQuery(transport));
  const pkg = packages.data?.find((candidate) => candidate.zapk_id === state.zapkId);
  const candidates = useMemo(() => (pkg ? appsOf(pkg) : []), [pkg]);
  const stageApps = useMemo(() => stageAppsOf(state.appIds, candidates), [state.appIds, candidates]);

  useEffect(() => dispatch({ type: 'stageApps', stageApps }), [stageApps]);

  const body = useMemo(() => startBody(state, stageApps), [state, stageApps]);
  const errors = useMemo(() => wizardErrors(state, stageApps, t), [state, stageApps, t]);

  const waiting = useAbortable();
  const start = useMutation({
    ...startTaskMutation(transport, queryClient, waiting.begin),
    onSuccess: (taskId) => onStarted(taskId, state.mode),
    onError: (error) => {
      // One refusal at a time: the start's replaces the previews'.
      preview.open.reset();
      subPreview.open.reset();
      const path = error instanceof ApiError ? formPathOf(error, body, state.editor) : null;
      if (path === null || !(error instanceof ApiError)) return;
      const key = isSourceRefusal(error) ? refusalOf(error).message : undefined;
      dispatch({ type: 'refused', path, msg: error.msg, key });
    },
  });

  const { step } = state;
  const index = STEPS.indexOf(step);
  function next(event: FormEvent) {
    event.preventDefault();
    dispatch({ type: 'next', errors });
    if (step === 'output' && errorsOf(errors, step).length === 0) start.mutate(body);
  }
  const stepProps = { state, dispatch, visible: (path: string) => visibleError(state, errors, path) };
  const unplacedStartError =
    start.isError &&
    !(start.error instanceof ApiError && formPathOf(start.error, body, state.editor) !== null)
      ? start.error
      : null;

  return (
    <Dialog title={t('wizard.title')} onClose={onClose} wide>
      <ol className="steps" aria-label={t('wizard.steps')}>
        {STEPS.map((name, i) => (
          <li
            key={name}
            aria-current={name === step ? 'step' : undefined}
            className={i < index ? 'done' : ''}
          >
            {t(`wizard.step.${name}`)}
          </li>
        ))}
      </ol>
      <form onSubmit={next} noValidate className="wizard">
        {step === 'source' && (
          <SourceStep
            {...stepProps}
            preview={preview}
            subPreview={subPreview}
            startRefusal={isSourceRefusal(start.error) ? start.error : null}
            onPreview={() => {
              // One refusal at a time: a new preview's replaces the start's.
              start.reset();
              dispatch({ type: 'videoUrl', videoUrl: state.videoUrl });
            }}
          />
        )}
        {step === 'apps' && <AppsStep {...stepProps} packages={packages} candidates={candidates} />}
        {step === 'regions' && (
          <RegionsStep {...stepProps} stageApps={stageApps} errors={errors} preview={preview} />
        )}
        {step === 'output' && <OutputStep {...stepProps} errors={errors} startError={unplacedStartError} />}
        {start.isPending && state.mode === 'video' && (
          <WaitProgress
            what={t('wizard.wait.start', { url: redactCredentials(state.videoUrl.trim()) })}
            onCancel={() => {
              // The engine drops a start whose client went away: nothing of it runs or is stored.
              waiting.abort();
              start.reset();
            }}
          />
        )}

        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          {index > 0 && (
            <button type="button" onClick={() => dispatch({ type: 'back' })}>
              {t('wizard.back')}
            </button>
          )}
          <button type="submit" className="primary" disabled={start.isPending}>
            {step === 'output'
              ? start.isPending
                ? t('wizard.starting')
                : t('wizard.start')
              : t('wizard.next')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
