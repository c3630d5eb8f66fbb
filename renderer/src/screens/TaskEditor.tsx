import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useId, useMemo, useState } from 'react';
import { DEFAULT_OSD, UpdateTaskBody } from '../../../engine/contract';
import { appsOf, modesOfType, type Osd, type Task } from '../api';
import { AnalysisFpsField } from '../components/AnalysisFpsField';
import { AppCheckbox } from '../components/AppCheckbox';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { FieldError } from '../components/FieldError';
import { HealthDetails } from '../components/HealthDetails';
import { OsdFields } from '../components/OsdFields';
import { useTransport } from '../context';
import { createEditor, formatPoints, parsePoints, setPoints, shapeProblem } from '../geometry/editor';
import { packagesQuery } from '../queries/packages';
import { updateTaskMutation } from '../queries/tasks';
import { useT } from '../store';
import { analysisFpsOf } from '../tasks/analysis-fps';
import { taskTitle } from '../tasks/title';
import { ApiError } from '../transport';
import { type FieldErrors, schemaErrors } from '../validation/schema-errors';

interface TaskEditorProps {
  task: Task;
  onClose: () => void;
  onEditRegions: () => void;
}

/**
 * Update of a running task (4.7): its applications, its drawing options and, as typed coordinates,
 * its polygons (the live view draws them on the video). Checked with the engine's UpdateTaskBody
 * schema and polygon check.
 */
export function TaskEditor({ task, onClose, onEditRegions }: TaskEditorProps) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const polygonsId = useId();
  const packages = useQuery(packagesQuery(transport));
  const pkg = packages.data?.find((candidate) => candidate.zapk_id === task.zapk_id);
  const candidates = useMemo(() => (pkg ? appsOf(pkg) : []), [pkg]);
  const [name, setName] = useState(task.name);
  const [fpsText, setFpsText] = useState(task.analysis_fps === null ? '' : String(task.analysis_fps));
  const [appIds, setAppIds] = useState<string[]>(task.app_ids);
  const [osd, setOsd] = useState<Required<Osd>>({ ...DEFAULT_OSD, ...task.osd });
  const initialText = useMemo(
    () =>
      Object.fromEntries(
        task.app_ids.map((appId) => [
          appId,
          formatPoints(task.app_configs?.find((config) => config.app_id === appId)?.polygon ?? []),
        ]),
      ),
    [task],
  );
  const [texts, setTexts] = useState<Record<string, string>>(initialText);
  const [serverError, setServerError] = useState<string | null>(null);

  const { body, errors } = useMemo(() => {
    const typeOf = (appId: string) => candidates.find((app) => app.app_id === appId)?.type ?? 1;
    const initialOsd: Record<string, unknown> = { ...DEFAULT_OSD, ...task.osd };
    const found: FieldErrors = {};
    const configs: Array<{ app_id: string; polygon: number[][] }> = [];
    for (const appId of appIds) {
      const text = texts[appId] ?? '';
      if (text === (initialText[appId] ?? '')) continue;
      const points = parsePoints(text);
      if (points === null) {
        found[`polygon.${appId}`] = { key: 'regions.pointsInvalid' };
        continue;
      }
      const editor = setPoints(createEditor([{ app_id: appId, type: typeOf(appId) }], []), points);
      const shape = editor.shapes[appId];
      const problem = shape ? shapeProblem(shape, typeOf(appId)) : null;
      if (problem?.kind === 'invalid')
        found[`polygon.${appId}`] = { key: 'validation.invalid', text: problem.message };
      else configs.push({ app_id: appId, polygon: points });
    }
    const { display_polygon: _ignored, ...osdUpdate } = osd;
    const changedOsd = Object.fromEntries(
      Object.entries(osdUpdate).filter(([key, value]) => initialOsd[key] !== value),
    );
    const { value: analysisFps, problem: fpsProblem } = analysisFpsOf(fpsText);
    const update = {
      ...(name.trim() !== task.name ? { name: name.trim() } : {}),
      ...(analysisFps !== undefined && analysisFps !== task.analysis_fps
        ? { analysis_fps: analysisFps }
        : {}),
      ...(appIds.join() !== task.app_ids.join() ? { app_ids: appIds } : {}),
      ...(Object.keys(changedOsd).length > 0 ? { osd: changedOsd } : {}),
      ...(configs.length > 0 ? { app_configs: configs } : {}),
    };
    Object.assign(found, Object.keys(update).length > 0 ? schemaErrors(UpdateTaskBody, update) : {});
    if (appIds.length === 0) found.app_ids = { key: 'wizard.chooseApps' };
    if (fpsProblem) found.analysis_fps = fpsProblem;
    return { body: update, errors: found };
  }, [name, fpsText, appIds, texts, osd, initialText, task, candidates]);

  const save = useMutation({
    ...updateTaskMutation(transport, queryClient),
    onSuccess: onClose,
    onError: (error) => {
      if (error instanceof ApiError) setServerError(error.msg);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setServerError(null);
    if (Object.keys(errors).length === 0 && Object.keys(body).length > 0)
      save.mutate({ taskId: task.task_id, body });
  }

  const compatible = candidates.filter((app) => modesOfType(app.type).includes(task.mode));
  return (
    <Dialog title={t('taskEdit.title', { id: taskTitle(task) })} onClose={onClose} wide>
      <HealthDetails task={task} />
      <form onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={`${polygonsId}-name`}>{t('tasks.nameLabel')}</label>
          <input
            id={`${polygonsId}-name`}
            value={name}
            maxLength={64}
            onChange={(event) => setName(event.target.value)}
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={`${polygonsId}-name-hint`}
          />
          <span className="hint" id={`${polygonsId}-name-hint`}>
            {t('tasks.nameHint')}
          </span>
          <FieldError id={`${polygonsId}-name-error`} message={errors.name} />
        </div>
        {task.mode === 'video' && (
          <AnalysisFpsField
            id={`${polygonsId}-fps`}
            value={fpsText}
            onChange={setFpsText}
            error={errors.analysis_fps}
            placeholder={task.analysis_fps === null ? undefined : String(task.analysis_fps)}
          />
        )}
        <fieldset>
          <legend>{t('wizard.apps')}</legend>
          {packages.isError && <ErrorNotice error={packages.error} />}
          <ul className="checklist">
            {compatible.map((app) => (
              <li key={app.app_id}>
                <AppCheckbox app={app} selected={appIds} onChange={setAppIds} />
              </li>
            ))}
          </ul>
          <FieldError id={`${polygonsId}-apps`} message={errors.app_ids} />
        </fieldset>
        <OsdFields osd={osd} onChange={setOsd} errors={errors} path="osd" withPolygonSwitch={false} />
        <fieldset>
          <legend>{t('taskEdit.polygons')}</legend>
          <p className="hint">{t('regions.pointsHint')}</p>
          {appIds.map((appId) => {
            const id = `${polygonsId}-${appId}`;
            const error = errors[`polygon.${appId}`];
            return (
              <div className="field" key={appId}>
                <label htmlFor={id}>{candidates.find((app) => app.app_id === appId)?.name ?? appId}</label>
                <input
                  id={id}
                  value={texts[appId] ?? ''}
                  spellCheck={false}
                  placeholder={t('regions.wholeFrame')}
                  onChange={(event) => setTexts((current) => ({ ...current, [appId]: event.target.value }))}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${id}-error` : undefined}
                />
                <FieldError id={`${id}-error`} message={error} />
              </div>
            );
          })}
          {task.mode === 'video' && (
            <button type="button" onClick={onEditRegions}>
              {t('taskEdit.drawOnVideo')}
            </button>
          )}
        </fieldset>
        {serverError && (
          <p className="notice notice-error" role="alert">
            {serverError}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            className="primary"
            disabled={save.isPending || Object.keys(body).length === 0 || Object.keys(errors).length > 0}
          >
            {save.isPending ? t('common.saving') : t('taskEdit.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
