// Over 400 lines on purpose: the wizard's steps share one form state and one refusal mapping.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useMemo, useState } from 'react';
import { DEFAULT_OSD, errorCode, StartTaskBody } from '../../../engine/contract';
import {
  appsOf,
  closePreview,
  licenseState,
  modesOfType,
  type Osd,
  type Preview,
  previewSocket,
  startPreview,
  type TaskMode,
} from '../api';
import { AnalysisFpsField } from '../components/AnalysisFpsField';
import { AppCheckbox } from '../components/AppCheckbox';
import { areaLabel } from '../components/AreaFields';
import { Dialog } from '../components/Dialog';
import { ErrorNotice } from '../components/ErrorNotice';
import { errorProps, FieldError } from '../components/FieldError';
import type { VideoState } from '../components/HlsVideo';
import { LiveVideo } from '../components/LiveVideo';
import { isMediaFolderRefusal, MediaFolderHint } from '../components/MediaFolderHint';
import { OsdFields } from '../components/OsdFields';
import { RegionEditor } from '../components/RegionEditor';
import { useTransport } from '../context';
import { areaKeyOfField, areaProblem, editorWithAreas, finishedConfigs } from '../geometry/areas';
import { createEditor, type EditorState, shapeProblem } from '../geometry/editor';
import { packagesQuery } from '../queries/packages';
import { startTaskMutation } from '../queries/tasks';
import { useT } from '../store';
import { analysisFpsOf } from '../tasks/analysis-fps';
import { stageAppsOf } from '../tasks/stage-apps';
import { ApiError } from '../transport';
import { type FieldErrors, fieldPath, schemaErrors } from '../validation/schema-errors';

const STEPS = ['source', 'apps', 'regions', 'output'] as const;
type Step = (typeof STEPS)[number];

/** Which step shows a field: where a problem is reported and where the wizard goes back to. */
function stepOf(path: string): Step {
  if (path === 'mode' || path === 'name' || path.startsWith('video_url')) return 'source';
  if (path.startsWith('zapk_id') || path.startsWith('app_ids')) return 'apps';
  if (path.startsWith('app_configs') || path.startsWith('polygon') || path.startsWith('area.'))
    return 'regions';
  return 'output';
}

/**
 * Where the wizard shows the engine's refusal: the field its envelope names (a polygon on its app's
 * region, a zone, mask or calibration on its row: `area.<shape key>`), the source for a stream that
 * would not open; null when it concerns no field.
 */
export function formPathOf(
  error: ApiError,
  body: { app_configs?: Array<{ app_id: string }> },
  editor?: EditorState,
): string | null {
  if (error.field === undefined) {
    return error.code === errorCode('STREAM_UNAVAILABLE') ? 'video_url' : null;
  }
  const path = fieldPath(error.field);
  const appIds = (body.app_configs ?? []).map((config) => config.app_id);
  const area = editor ? areaKeyOfField(editor, appIds, path) : null;
  if (area) return `area.${area}`;
  const polygon = /^app_configs\.(\d+)\.polygon/.exec(path);
  const appId = polygon ? body.app_configs?.[Number(polygon[1])]?.app_id : undefined;
  return appId === undefined ? path || 'general' : `polygon.${appId}`;
}

interface StartTaskProps {
  onClose: () => void;
  onStarted: (taskId: string, mode: TaskMode) => void;
}

/**
 * The start wizard (4.4): source with a raw preview (4.12), applications, regions drawn on the
 * preview, then drawing options and where results go. Each step is checked with the engine's
 * StartTaskBody schema and polygon check before the next; the engine's refusal goes to its field.
 */
export function StartTask({ onClose, onStarted }: StartTaskProps) {
  const t = useT();
  const transport = useTransport();
  const queryClient = useQueryClient();
  const ids = {
    mode: useId(),
    url: useId(),
    pkg: useId(),
    report: useId(),
    business: useId(),
    device: useId(),
    name: useId(),
    fps: useId(),
  };
  const [step, setStep] = useState<Step>('source');
  const [mode, setMode] = useState<TaskMode>('video');
  const [videoUrl, setVideoUrl] = useState('');
  const [zapkId, setZapkId] = useState('');
  const [appIds, setAppIds] = useState<string[]>([]);
  const [editor, setEditor] = useState<EditorState>(() => createEditor([], []));
  const [osd, setOsd] = useState<Required<Osd>>({ ...DEFAULT_OSD });
  const [reportUrl, setReportUrl] = useState('');
  const [businessId, setBusinessId] = useState('');
  const [deviceId, setDeviceId] = useState('');
  const [name, setName] = useState('');
  const [fpsText, setFpsText] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [videoState, setVideoState] = useState<VideoState | null>(null);
  const [shown, setShown] = useState<Set<Step>>(new Set());
  const [serverErrors, setServerErrors] = useState<FieldErrors>({});

  const packages = useQuery(packagesQuery(transport));
  const pkg = packages.data?.find((candidate) => candidate.zapk_id === zapkId);
  const now = Date.now();
  const candidates = useMemo(() => (pkg ? appsOf(pkg) : []), [pkg]);
  const stageApps = useMemo(() => stageAppsOf(appIds, candidates), [appIds, candidates]);

  // The shapes follow the chosen apps; those already finished are kept.
  useEffect(() => {
    setEditor((current) => editorWithAreas(stageApps, finishedConfigs(current, stageApps)));
  }, [stageApps]);

  // A preview stream is released when it is replaced or the wizard closes.
  useEffect(() => {
    if (!preview) return;
    return () => {
      closePreview(transport, preview.stream_id).catch(() => {
        // Gone already (the engine drops idle previews): nothing to release.
      });
    };
  }, [preview, transport]);

  const openPreview = useMutation({
    mutationFn: () => startPreview(transport, videoUrl.trim()),
    onMutate: () => {
      setPreview(null);
      setVideoState(null);
    },
    onSuccess: setPreview,
  });

  const body = useMemo(() => {
    // Apps with nothing drawn send nothing; the errors below hold back unfinished ones.
    const appConfigs = finishedConfigs(editor, stageApps).flatMap(({ zones, masks, ...config }) =>
      config.polygon.length > 0 || zones?.length || masks?.length || config.calibration
        ? [{ ...config, ...(zones?.length ? { zones } : {}), ...(masks?.length ? { masks } : {}) }]
        : [],
    );
    const analysisFps = mode === 'video' ? analysisFpsOf(fpsText).value : undefined;
    return {
      mode,
      zapk_id: zapkId,
      app_ids: appIds,
      ...(mode === 'video' ? { video_url: videoUrl.trim() } : {}),
      osd,
      ...(appConfigs.length > 0 ? { app_configs: appConfigs } : {}),
      ...(reportUrl.trim() ? { report_url: reportUrl.trim() } : {}),
      ...(businessId ? { business_id: businessId } : {}),
      ...(deviceId ? { device_id: deviceId } : {}),
      ...(name.trim() ? { name: name.trim() } : {}),
      ...(analysisFps !== undefined ? { analysis_fps: analysisFps } : {}),
    };
  }, [
    mode,
    zapkId,
    appIds,
    videoUrl,
    osd,
    editor,
    stageApps,
    reportUrl,
    businessId,
    deviceId,
    name,
    fpsText,
  ]);

  const errors = useMemo(() => {
    const found: FieldErrors = { ...schemaErrors(StartTaskBody, body) };
    if (mode === 'video' && videoUrl.trim() === '') found.video_url = { key: 'validation.required' };
    if (appIds.length === 0) found.app_ids = { key: 'wizard.chooseApps' };
    const fpsProblem = mode === 'video' ? analysisFpsOf(fpsText).problem : undefined;
    if (fpsProblem) found.analysis_fps = fpsProblem;
    for (const app of stageApps) {
      const shape = editor.shapes[app.app_id];
      const problem = shape ? shapeProblem(shape, app.type) : null;
      if (problem) {
        found[`polygon.${app.app_id}`] =
          problem.kind === 'drawing'
            ? { key: 'regions.unfinished', params: { app: app.name } }
            : { key: 'validation.invalid', text: `${app.name}: ${problem.message}` };
      }
    }
    for (const key of Object.keys(editor.shapes)) {
      const app = stageApps.find((candidate) => candidate.app_id === editor.shapes[key]?.area?.app);
      if (app && areaProblem(editor, key)) {
        const what = areaLabel(t, editor, key, app.name);
        found[`area.${key}`] = { key: 'areas.notSaved', params: { what } };
      }
    }
    return { ...found, ...serverErrors };
  }, [body, mode, videoUrl, appIds, fpsText, stageApps, editor, serverErrors, t]);
  const errorsOf = (of: Step) => Object.entries(errors).filter(([path]) => stepOf(path) === of);

  const start = useMutation({
    ...startTaskMutation(transport, queryClient),
    onSuccess: (taskId) => onStarted(taskId, mode),
    onError: (error) => {
      const path = error instanceof ApiError ? formPathOf(error, body, editor) : null;
      if (path === null || !(error instanceof ApiError)) return;
      setServerErrors({ [path]: { key: 'validation.invalid', text: error.msg } });
      setStep(stepOf(path));
    },
  });

  const index = STEPS.indexOf(step);
  function next(event: FormEvent) {
    event.preventDefault();
    setShown((current) => new Set(current).add(step));
    if (errorsOf(step).length > 0) return;
    if (step === 'output') start.mutate(body);
    else setStep(STEPS[index + 1] as Step);
  }
  const visible = (path: string) =>
    shown.has(stepOf(path)) || path in serverErrors ? errors[path] : undefined;

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
          <>
            <fieldset>
              <legend>{t('wizard.mode')}</legend>
              <div className="segmented">
                {(['video', 'image', 'diff'] as const).map((choice) => (
                  <label key={choice}>
                    <input
                      type="radio"
                      name={ids.mode}
                      checked={mode === choice}
                      onChange={() => {
                        setMode(choice);
                        setAppIds([]);
                      }}
                    />
                    {t(`mode.${choice}`)}
                  </label>
                ))}
              </div>
              <p className="hint">{t(`wizard.modeHint.${mode}`)}</p>
            </fieldset>
            <div className="field">
              <label htmlFor={ids.name}>{t('tasks.nameLabel')}</label>
              <input
                id={ids.name}
                value={name}
                onChange={(event) => {
                  setName(event.target.value);
                  setServerErrors({});
                }}
                {...errorProps(`${ids.name}-error`, visible('name'))}
              />
              <span className="hint">{t('tasks.nameHint')}</span>
              <FieldError id={`${ids.name}-error`} message={visible('name')} />
            </div>
            {mode === 'video' && (
              <fieldset>
                <legend>{t('wizard.source')}</legend>
                <div className="field">
                  <label htmlFor={ids.url}>{t('wizard.videoUrl')}</label>
                  <div className="field-row">
                    <input
                      id={ids.url}
                      value={videoUrl}
                      placeholder="rtsp://192.168.1.20/stream1"
                      spellCheck={false}
                      onChange={(event) => {
                        setVideoUrl(event.target.value);
                        setServerErrors({});
                      }}
                      {...errorProps(`${ids.url}-error`, visible('video_url'))}
                    />
                    <button
                      type="button"
                      onClick={() => openPreview.mutate()}
                      disabled={videoUrl.trim() === '' || openPreview.isPending}
                    >
                      {openPreview.isPending ? t('wizard.previewing') : t('wizard.preview')}
                    </button>
                  </div>
                  <span className="hint">{t('wizard.videoUrlHint')}</span>
                  <FieldError id={`${ids.url}-error`} message={visible('video_url')} />
                </div>
                {openPreview.isError && <ErrorNotice error={openPreview.error} />}
                {(isMediaFolderRefusal(openPreview.error) ||
                  (isMediaFolderRefusal(start.error) && 'video_url' in serverErrors)) && <MediaFolderHint />}
                {preview && (
                  <div className="preview">
                    <LiveVideo
                      socketPath={previewSocket(preview.stream_id)}
                      hlsUrl={preview.hls_url}
                      label={t('wizard.previewLabel')}
                      onState={setVideoState}
                    />
                    <p className="meta">
                      {t('wizard.previewSize', { width: preview.width, height: preview.height })}
                      {videoState?.kind === 'error' && ` · ${videoState.detail}`}
                    </p>
                  </div>
                )}
              </fieldset>
            )}
          </>
        )}

        {step === 'apps' && (
          <fieldset>
            <legend>{t('wizard.apps')}</legend>
            <div className="field">
              <label htmlFor={ids.pkg}>{t('wizard.package')}</label>
              <select
                id={ids.pkg}
                value={zapkId}
                onChange={(event) => {
                  setZapkId(event.target.value);
                  setAppIds([]);
                }}
                {...errorProps(`${ids.pkg}-error`, visible('zapk_id'))}
              >
                <option value="">{t('wizard.choosePackage')}</option>
                {packages.data?.map((candidate) => (
                  <option key={candidate.zapk_id} value={candidate.zapk_id}>
                    {candidate.name} ({candidate.zapk_id})
                  </option>
                ))}
              </select>
              <FieldError id={`${ids.pkg}-error`} message={visible('zapk_id')} />
            </div>
            {packages.isError && <ErrorNotice error={packages.error} />}
            {pkg && (
              <ul className="checklist" aria-describedby={`${ids.pkg}-apps-error`}>
                {candidates.map((app) => {
                  const fits = modesOfType(app.type).includes(mode);
                  const expired = licenseState(app, now).kind === 'expired';
                  return (
                    <li key={app.app_id}>
                      <AppCheckbox
                        app={app}
                        selected={appIds}
                        onChange={setAppIds}
                        disabled={!fits || expired}
                      >
                        {!fits && (
                          <span className="hint">
                            {' '}
                            — {t('wizard.appWrongMode', { mode: t(`mode.${mode}`) })}
                          </span>
                        )}
                        {expired && <span className="hint"> — {t('license.expired')}</span>}
                      </AppCheckbox>
                    </li>
                  );
                })}
              </ul>
            )}
            <FieldError id={`${ids.pkg}-apps-error`} message={visible('app_ids')} />
          </fieldset>
        )}

        {step === 'regions' && (
          <>
            <p className="hint">{t(preview ? 'wizard.regionsHint' : 'wizard.regionsNoPreview')}</p>
            <RegionEditor
              apps={stageApps}
              editor={editor}
              onChange={(next) => {
                setEditor(next);
                setServerErrors({});
              }}
              areaErrors={Object.fromEntries(
                Object.entries(serverErrors).flatMap(([path, message]) =>
                  path.startsWith('area.') ? [[path.slice('area.'.length), message.text ?? '']] : [],
                ),
              )}
              source={preview ? { width: preview.width, height: preview.height } : null}
              frame={
                preview ? (
                  <LiveVideo
                    socketPath={previewSocket(preview.stream_id)}
                    hlsUrl={preview.hls_url}
                    label={t('wizard.previewLabel')}
                  />
                ) : undefined
              }
            />
            {errorsOf('regions').map(([path, message]) =>
              shown.has('regions') ? (
                <p key={path} className="field-error" role="alert">
                  {message.text ?? t(message.key, message.params)}
                </p>
              ) : null,
            )}
          </>
        )}

        {step === 'output' && (
          <>
            <OsdFields
              osd={osd}
              onChange={setOsd}
              errors={shown.has('output') ? errors : {}}
              path="osd"
              withPolygonSwitch
            />
            <fieldset>
              <legend>{t('wizard.results')}</legend>
              <div className="field-grid">
                {(
                  [
                    [ids.report, 'report_url', reportUrl, setReportUrl, 'https://receiver.example/callback'],
                    [ids.business, 'business_id', businessId, setBusinessId, ''],
                    [ids.device, 'device_id', deviceId, setDeviceId, ''],
                  ] as const
                ).map(([id, name, value, set, placeholder]) => (
                  <div className="field" key={name}>
                    <label htmlFor={id}>{t(`wizard.${name}`)}</label>
                    <input
                      id={id}
                      value={value}
                      placeholder={placeholder}
                      spellCheck={false}
                      onChange={(event) => {
                        set(event.target.value);
                        setServerErrors({});
                      }}
                      {...errorProps(`${id}-error`, visible(name))}
                    />
                    <FieldError id={`${id}-error`} message={visible(name)} />
                  </div>
                ))}
              </div>
              <p className="hint">{t('wizard.reportHint')}</p>
              {mode === 'video' && (
                <AnalysisFpsField
                  id={ids.fps}
                  value={fpsText}
                  onChange={(text) => {
                    setFpsText(text);
                    setServerErrors({});
                  }}
                  error={visible('analysis_fps')}
                />
              )}
            </fieldset>
            {errors.general && (
              <p className="notice notice-error" role="alert">
                {errors.general.text}
              </p>
            )}
            {start.isError &&
              !(start.error instanceof ApiError && formPathOf(start.error, body, editor) !== null) && (
                <ErrorNotice error={start.error} />
              )}
          </>
        )}

        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          {index > 0 && (
            <button type="button" onClick={() => setStep(STEPS[index - 1] as Step)}>
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
