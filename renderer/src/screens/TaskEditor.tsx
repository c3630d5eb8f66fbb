import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useMemo, useState } from 'react';
import {
  type AppConfigUpdate,
  DEFAULT_OSD,
  type RuleOverride,
  UpdateTaskBody,
} from '../../../engine/contract';
import { aiVideoSocket, appsOf, isRunning, modesOfType, type Osd, type Task } from '../api';
import { AnalysisFpsField } from '../components/AnalysisFpsField';
import { AppCheckbox } from '../components/AppCheckbox';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { FieldError } from '../components/FieldError';
import { HealthDetails } from '../components/HealthDetails';
import { LiveVideo } from '../components/LiveVideo';
import { OsdFields } from '../components/OsdFields';
import { RegionEditor } from '../components/RegionEditor';
import { RuleOverrideFields } from '../components/RuleOverrideFields';
import { useTransport } from '../context';
import { areaKeyOfField, configOf, editorWithAreas, finishedConfigs, updateOf } from '../geometry/areas';
import type { EditorState } from '../geometry/editor';
import { sourceSize } from '../health';
import { useAiLive } from '../hooks/useAiLive';
import { packagesQuery } from '../queries/packages';
import { updateTaskMutation } from '../queries/tasks';
import { useT } from '../store';
import { analysisFpsOf } from '../tasks/analysis-fps';
import {
  draftOf,
  type OverrideDraft,
  overrideFields,
  overrideOf,
  overrideProblems,
  ruleOfListing,
} from '../tasks/rule-overrides';
import { stageAppsOf } from '../tasks/stage-apps';
import { taskTitle } from '../tasks/title';
import { ApiError } from '../transport';
import { type FieldErrors, fieldPath, schemaErrors } from '../validation/schema-errors';

interface TaskEditorProps {
  task: Task;
  onClose: () => void;
  onEditRegions: () => void;
}

/**
 * Update of a running task (4.7): its applications, its drawing options, and each app's region,
 * zones, masks and ground calibration, drawn over the task's AI video (or typed as coordinates).
 * Checked with the engine's UpdateTaskBody schema and its polygon, zone and calibration checks.
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
  const storedOverrides = useMemo(() => task.rule_overrides ?? {}, [task]);
  const [overrideDrafts, setOverrideDrafts] = useState<Record<string, OverrideDraft>>(() =>
    Object.fromEntries(Object.entries(storedOverrides).map(([appId, o]) => [appId, draftOf(o)])),
  );
  const [serverError, setServerError] = useState<string | null>(null);
  const [areaErrors, setAreaErrors] = useState<Record<string, string>>({});

  // The apps being edited, named and typed from the package once it is listed.
  const stageApps = useMemo(() => stageAppsOf(appIds, candidates), [appIds, candidates]);
  const [editor, setEditor] = useState<EditorState>(() =>
    editorWithAreas(
      task.app_ids.map((app_id) => ({ app_id, type: 1 })),
      task.app_configs,
    ),
  );
  // The shapes follow the chosen apps; finished ones are kept.
  useEffect(() => {
    setEditor((current) => {
      const owned = Object.values(current.shapes).filter((shape) => !shape.area).length;
      if (owned === stageApps.length && stageApps.every((app) => app.app_id in current.shapes))
        return current;
      const next = editorWithAreas(stageApps, finishedConfigs(current, stageApps));
      return { ...next, active: current.active in next.shapes ? current.active : next.active };
    });
  }, [stageApps]);
  /** Each app's config as the engine has it, to send only those that change. */
  const initialConfigs = useMemo(() => {
    const initial = editorWithAreas(stageApps, task.app_configs);
    return Object.fromEntries(stageApps.map((app) => [app.app_id, JSON.stringify(configOf(initial, app))]));
  }, [stageApps, task]);

  /** Per app of a video task: its rule (the app's, as listed) and the fields a camera may tune. */
  const overridable = useMemo(
    () =>
      task.mode !== 'video'
        ? []
        : appIds.flatMap((appId) => {
            const app = candidates.find((candidate) => candidate.app_id === appId);
            if (!app) return [];
            const rule = ruleOfListing(app.rule);
            return [{ appId, rule, fields: overrideFields(rule) }];
          }),
    [task.mode, appIds, candidates],
  );

  const { body, errors } = useMemo(() => {
    const initialOsd: Record<string, unknown> = { ...DEFAULT_OSD, ...task.osd };
    const found: FieldErrors = {};
    const configs: AppConfigUpdate[] = [];
    for (const app of stageApps) {
      const config = configOf(editor, app);
      if (config === null)
        found[`polygon.${app.app_id}`] = { key: 'taskEdit.unfinished', params: { app: app.name } };
      else if (JSON.stringify(config) !== initialConfigs[app.app_id]) configs.push(updateOf(config));
    }
    const { display_polygon: _ignored, ...osdUpdate } = osd;
    const changedOsd = Object.fromEntries(
      Object.entries(osdUpdate).filter(([key, value]) => initialOsd[key] !== value),
    );
    // Each app's override as the fields make it; sent only for the apps whose override changes.
    const overrides: Record<string, RuleOverride | null> = {};
    for (const { appId, rule, fields } of overridable) {
      const stored = storedOverrides[appId];
      const { override, notNumbers } = overrideOf(stored, overrideDrafts[appId] ?? {}, fields);
      for (const key of notNumbers) found[`override.${appId}.${key}`] = { key: 'overrides.notNumber' };
      const [problem] = overrideProblems(rule, override);
      if (problem) found[`override.${appId}.`] = { key: 'validation.invalid', text: problem };
      const empty = Object.keys(override).length === 0;
      if (JSON.stringify(empty ? undefined : override) !== JSON.stringify(stored))
        overrides[appId] = empty ? null : override;
    }
    const { value: analysisFps, problem: fpsProblem } = analysisFpsOf(fpsText);
    const update = {
      ...(name.trim() !== task.name ? { name: name.trim() } : {}),
      ...(analysisFps !== undefined && analysisFps !== task.analysis_fps
        ? { analysis_fps: analysisFps }
        : {}),
      ...(appIds.join() !== task.app_ids.join() ? { app_ids: appIds } : {}),
      ...(Object.keys(changedOsd).length > 0 ? { osd: changedOsd } : {}),
      ...(configs.length > 0 ? { app_configs: configs } : {}),
      ...(Object.keys(overrides).length > 0 ? { rule_overrides: overrides } : {}),
    };
    Object.assign(found, Object.keys(update).length > 0 ? schemaErrors(UpdateTaskBody, update) : {});
    if (appIds.length === 0) found.app_ids = { key: 'wizard.chooseApps' };
    if (fpsProblem) found.analysis_fps = fpsProblem;
    return { body: update, errors: found };
  }, [
    name,
    fpsText,
    appIds,
    osd,
    task,
    stageApps,
    editor,
    initialConfigs,
    overridable,
    overrideDrafts,
    storedOverrides,
  ]);

  // The running video task's AI video under the drawing surface, released when the dialog closes.
  const video = task.mode === 'video' && isRunning(task);
  const live = useAiLive(transport, task.task_id, video ? task.app_ids : []);

  const save = useMutation({
    ...updateTaskMutation(transport, queryClient),
    onSuccess: onClose,
    onError: (error) => {
      if (!(error instanceof ApiError)) return;
      const appIdsSent = (body.app_configs ?? []).map((config) => config.app_id);
      const key =
        error.field === undefined ? null : areaKeyOfField(editor, appIdsSent, fieldPath(error.field));
      if (key) setAreaErrors({ [key]: error.msg });
      else setServerError(error.msg);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    setServerError(null);
    setAreaErrors({});
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
        {overridable.map(({ appId, fields }) => (
          <RuleOverrideFields
            key={appId}
            appId={appId}
            fields={fields}
            draft={overrideDrafts[appId] ?? {}}
            onChange={(draft) => setOverrideDrafts((current) => ({ ...current, [appId]: draft }))}
            errors={overrideErrors(errors, appId)}
          />
        ))}
        <OsdFields osd={osd} onChange={setOsd} errors={errors} path="osd" withPolygonSwitch={false} />
        <fieldset>
          <legend>{t('taskEdit.polygons')}</legend>
          <RegionEditor
            apps={stageApps}
            editor={editor}
            onChange={(next) => {
              setEditor(next);
              setAreaErrors({});
            }}
            source={sourceSize(task.health)}
            frame={
              live.data ? (
                <LiveVideo
                  socketPath={aiVideoSocket(task.task_id, live.data.stream)}
                  hlsUrl={live.data.hls_url}
                  label={t('live.videoLabel', { id: taskTitle(task) })}
                />
              ) : undefined
            }
            areaErrors={areaErrors}
          />
          {appIds.map((appId) => (
            <FieldError
              key={appId}
              id={`${polygonsId}-${appId}-error`}
              message={errors[`polygon.${appId}`]}
            />
          ))}
          {video && (
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

/** The problems of one app's override, by field key ("" for the override as a whole). */
function overrideErrors(errors: FieldErrors, appId: string): FieldErrors {
  const prefix = `override.${appId}.`;
  const schemaPrefix = `rule_overrides.${appId}`;
  const own: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    if (path.startsWith(prefix)) own[path.slice(prefix.length)] = message;
    else if (path.startsWith(schemaPrefix)) own[''] = message;
  }
  return own;
}
