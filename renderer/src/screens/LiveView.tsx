import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { pointInPolygon } from '../../../engine/contract';
import {
  type AppConfig,
  aiVideoSocket,
  appsOf,
  isRunning,
  resetHeatmap,
  type Task,
  type TaskSummary,
} from '../api';
import { nodeLabel } from '../cluster/site';
import { ErrorNotice } from '../components/ErrorNotice';
import { HeatmapImage } from '../components/HeatmapImage';
import type { VideoState } from '../components/HlsVideo';
import { LiveCounts } from '../components/LiveCounts';
import { LiveVideo } from '../components/LiveVideo';
import { RegionEditor } from '../components/RegionEditor';
import { StatusBadge } from '../components/StatusBadge';
import { useTransport } from '../context';
import { useFeed } from '../feed/store';
import {
  areaKeyOfField,
  areaLabel,
  areaProblem,
  configOf,
  editorWithAreas,
  finishedConfigs,
  updateOf,
} from '../geometry/areas';
import { type EditorState, polygonOf, shapeProblem } from '../geometry/editor';
import type { Size } from '../geometry/viewport';
import { analysedText, clockBreaksText, sourceSize } from '../health';
import { useAiLive } from '../hooks/useAiLive';
import { useNow } from '../hooks/useNow';
import { SaveClip } from '../live/SaveClip';
import { useNames } from '../names/useNames';
import { packagesQuery } from '../queries/packages';
import { RUNNING_VIDEO, taskKeys, taskQuery, tasksQuery, updateTaskMutation } from '../queries/tasks';
import { paths } from '../routes';
import { useSession, useT } from '../store';
import { stageAppsOf } from '../tasks/stage-apps';
import { taskTitle } from '../tasks/title';
import { ApiError } from '../transport';
import { fieldPath } from '../validation/schema-errors';

/** How long an AI video error shows before the view asks for the video again. */
const VIDEO_RENEW_MS = 2_000;
/** How long a reported object keeps its zone lit. */
const LIT_MS = 3_000;
const SAVE_DELAY_MS = 300;

type SaveState =
  | { kind: 'idle' }
  | { kind: 'saving' }
  | { kind: 'saved'; at: number }
  | { kind: 'error'; msg: string };

/**
 * A video task's AI video (4.10) with the polygon editor over it: each app's region, zones, masks and
 * calibration. An app's finished, valid shapes are saved at once through 4.7, so the running
 * analysis follows the drawing; regions light up while the feed reports objects inside them.
 */
export function LiveView({ taskId }: { taskId: string | null }) {
  const t = useT();
  const transport = useTransport();
  const [, navigate] = useLocation();
  const selectId = useId();
  const tasks = useQuery(tasksQuery(transport, RUNNING_VIDEO));
  const videoTasks = (tasks.data ?? []).filter((task) => task.mode === 'video' && isRunning(task));
  const names = useNames();

  return (
    <section aria-labelledby={`${selectId}-title`} className="live">
      <div className="toolbar">
        <h2 id={`${selectId}-title`}>{t('live.title')}</h2>
        <label htmlFor={selectId}>{t('live.task')}</label>
        <select
          id={selectId}
          value={taskId ?? ''}
          onChange={(event) => navigate(paths.live(event.target.value))}
        >
          <option value="">{t('live.chooseTask')}</option>
          {videoTasks.map((task) => (
            <option key={task.task_id} value={task.task_id}>
              {taskTitle(task)} · {task.app_ids.map(names.app).join(', ')}
              {task.device_id ? ` · ${task.device_id}` : ''}
              {task.node ? ` · ${nodeLabel(task, t)}` : ''}
            </option>
          ))}
        </select>
        {taskId && (
          <Link className="button" href={paths.optimization(taskId)}>
            {t('live.optimize')}
          </Link>
        )}
        {taskId && <SaveClip key={taskId} taskId={taskId} />}
      </div>
      {tasks.isError && <ErrorNotice error={tasks.error} />}
      {!taskId && <p>{videoTasks.length === 0 ? t('live.noTasks') : t('live.pick')}</p>}
      {taskId && (
        <LiveTask key={taskId} taskId={taskId} listed={videoTasks.find((task) => task.task_id === taskId)} />
      )}
    </section>
  );
}

/** `listed`: the task as the listing shows it, which names the node that runs it in a cluster. */
function LiveTask({ taskId, listed }: { taskId: string; listed: TaskSummary | undefined }) {
  const t = useT();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const queryClient = useQueryClient();
  const now = useNow(1000);
  const task = useQuery(taskQuery(transport, taskId));
  const packages = useQuery(packagesQuery(transport));
  const update = useMutation(updateTaskMutation(transport, queryClient));
  const names = useNames();
  const { mutateAsync: saveConfigs } = update;
  const data = task.data;
  const node = listed ? nodeLabel(listed, t) : null;
  const running = data ? isRunning(data) : false;
  const appKey = data?.app_ids.join('\n') ?? '';

  const apps = useMemo(() => {
    const pkg = packages.data?.find((candidate) => candidate.zapk_id === data?.zapk_id);
    return stageAppsOf(appKey ? appKey.split('\n') : [], pkg ? appsOf(pkg) : []);
  }, [packages.data, data?.zapk_id, appKey]);

  // The AI video of all the task's apps while it runs; released when the view closes or the apps change.
  const liveApps = useMemo(() => (running && appKey !== '' ? appKey.split('\n') : []), [running, appKey]);
  const live = useAiLive(transport, taskId, liveApps);
  const [videoState, setVideoState] = useState<VideoState | null>(null);
  const { renew } = live;
  // A player that lost its stream (the engine restarted) gets a new one, by itself, after a moment.
  useEffect(() => {
    if (videoState?.kind !== 'error') return;
    const timer = setTimeout(() => {
      setVideoState(null);
      renew();
    }, VIDEO_RENEW_MS);
    return () => clearTimeout(timer);
  }, [videoState, renew]);
  const [videoSize, setVideoSize] = useState<Size | null>(null);
  // The heatmap replaces the video while shown; each reset asks for a fresh picture at once.
  const [heatShown, setHeatShown] = useState(false);
  const [heatEpoch, setHeatEpoch] = useState(0);
  const reset = useMutation({
    mutationFn: () => resetHeatmap(transport, taskId),
    onSuccess: () => setHeatEpoch((value) => value + 1),
  });

  // What the feed says about this task: the latest frame (size, snapshot) and recent objects.
  const items = useFeed((state) => state.items);
  const taskItems = useMemo(() => items.filter((item) => item.body.task_id === taskId), [items, taskId]);
  const latestMessage = taskItems.find((item) => item.body.event === 'message');
  const latestFrame = latestMessage?.body.event === 'message' ? latestMessage.body.data.frame : undefined;
  const latestSnapshot =
    latestMessage?.body.event === 'message'
      ? latestMessage.body.data.rules.find((rule) => rule.image !== '')?.image
      : undefined;
  const source: Size | null =
    (data ? sourceSize(data.health) : null) ??
    (latestFrame ? { width: latestFrame.width, height: latestFrame.height } : null) ??
    videoSize;

  // The editor starts from what the engine has (read since this view opened, not what the cache
  // kept from another screen), and follows a change of the task's apps.
  const [editor, setEditor] = useState<EditorState | null>(null);
  /** Each app's config as last sent (JSON), to send only what changed. */
  const saved = useRef<Record<string, string>>({});
  const fresh = task.isFetchedAfterMount;
  useEffect(() => {
    if (!data || !fresh || apps.length === 0) return;
    setEditor((current) => {
      if (!current) {
        const first = editorWithAreas(apps, data.app_configs);
        saved.current = Object.fromEntries(
          apps.map((app) => [app.app_id, JSON.stringify(configOf(first, app))]),
        );
        return first;
      }
      const owned = Object.entries(current.shapes).filter(([, shape]) => !shape.area);
      const same = apps.every((app) => app.app_id in current.shapes) && owned.length === apps.length;
      if (same) return current;
      return {
        ...editorWithAreas(apps, finishedConfigs(current, apps)),
        active: current.active in current.shapes ? current.active : (apps[0]?.app_id ?? ''),
      };
    });
  }, [data, fresh, apps]);

  // Each app's finished, valid shapes that differ from what the engine has are saved live (4.7).
  const [save, setSave] = useState<SaveState>({ kind: 'idle' });
  const [areaErrors, setAreaErrors] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!editor || !running) return;
    const changed: AppConfig[] = [];
    for (const app of apps) {
      const config = configOf(editor, app);
      if (config && saved.current[app.app_id] !== JSON.stringify(config)) changed.push(config);
    }
    if (changed.length === 0) return;
    const timer = setTimeout(() => {
      setSave({ kind: 'saving' });
      setAreaErrors({});
      // Counted as saved when sent: an edit made while this is under way (an undo, a redo) is
      // compared with what the engine is about to have, not with what it had.
      const sent = changed.map((config) => [config.app_id, JSON.stringify(config)] as const);
      const before = sent.map(([appId]) => [appId, saved.current[appId]] as const);
      for (const [appId, json] of sent) saved.current[appId] = json;
      saveConfigs({ taskId, body: { app_configs: changed.map(updateOf) } })
        .then((updated: Task) => {
          queryClient.setQueryData(taskKeys.one(taskId), updated);
          setSave({ kind: 'saved', at: Date.now() });
        })
        .catch((error: unknown) => {
          // Unsent after all: what the engine has is what it had, unless a later save replaced it.
          for (const [appId, json] of before) {
            if (saved.current[appId] !== sent.find(([id]) => id === appId)?.[1]) continue;
            if (json === undefined) delete saved.current[appId];
            else saved.current[appId] = json;
          }
          const msg = error instanceof ApiError ? error.msg : String(error);
          const key =
            error instanceof ApiError && error.field !== undefined
              ? areaKeyOfField(
                  editor,
                  changed.map((config) => config.app_id),
                  fieldPath(error.field),
                )
              : null;
          if (key) setAreaErrors({ [key]: msg });
          setSave({ kind: 'error', msg });
        });
    }, SAVE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [editor, apps, running, taskId, saveConfigs, queryClient]);

  // Zones light up while objects reported in the last seconds stand inside them (foot point).
  const lit = useMemo(() => {
    const litApps = new Set<string>();
    for (const item of taskItems) {
      const body = item.body;
      if (body.event !== 'message' || now - body.timestamp > LIT_MS) continue;
      const shape = editor?.shapes[body.app_id];
      for (const rule of body.data.rules) {
        for (const object of rule.objects) {
          const foot: [number, number] = [object.x, object.y + Math.round(object.h / 2)];
          const polygon = shape ? polygonOf(shape) : null;
          if (
            !polygon ||
            polygon.length === 0 ||
            (polygon.length >= 3 && pointInPolygon(foot, polygon as Array<[number, number]>))
          ) {
            litApps.add(body.app_id);
          }
        }
      }
    }
    return litApps;
  }, [taskItems, editor, now]);

  if (task.isError) return <ErrorNotice error={task.error} />;
  if (!data || !editor) return <p role="status">{t('common.loading')}</p>;

  // A finished shape the engine would refuse is never sent: say the task keeps what it has.
  const refusedApp = apps.find((app) => {
    const shape = editor.shapes[app.app_id];
    return shape && shapeProblem(shape, app.type)?.kind === 'invalid';
  });
  const refusedArea = Object.keys(editor.shapes).find((key) => {
    const problem = areaProblem(editor, key);
    return problem !== null && problem.kind !== 'drawing';
  });
  const refusedAreaApp = apps.find((app) => app.app_id === editor.shapes[refusedArea ?? '']?.area?.app);
  const refused = refusedApp
    ? t('live.notApplied', { app: refusedApp.name })
    : refusedArea && refusedAreaApp
      ? t('areas.notApplied', { what: areaLabel(t, editor, refusedArea, refusedAreaApp.name) })
      : null;

  const videoUnavailable = live.isError || videoState?.kind === 'error';
  const frame =
    heatShown && running ? (
      <HeatmapImage taskId={taskId} name={taskTitle(data)} epoch={heatEpoch} />
    ) : live.data && !videoUnavailable ? (
      <LiveVideo
        socketPath={aiVideoSocket(taskId, live.data.stream)}
        hlsUrl={live.data.hls_url}
        label={t('live.videoLabel', { id: taskTitle(data) })}
        onState={setVideoState}
        onSize={setVideoSize}
      />
    ) : latestSnapshot ? (
      <img
        className="stage-video"
        src={`data:image/jpeg;base64,${latestSnapshot}`}
        alt={t('live.snapshotAlt')}
      />
    ) : undefined;

  return (
    <>
      <p className="meta live-meta">
        <StatusBadge task={data} />
        {node && <span className="live-node">{node}</span>}
        <span>{data.video_url}</span>
        {data.analysis_url && <span>{t('live.subStream', { url: data.analysis_url })}</span>}
        {source && <span>{t('live.sourceSize', { width: source.width, height: source.height })}</span>}
        {data.health.stream && <span>{analysedText(t, language, data.health)}</span>}
        {running && (
          <label className="heatmap-toggle">
            <input
              type="checkbox"
              checked={heatShown}
              onChange={(event) => setHeatShown(event.target.checked)}
            />
            {t('heatmap.toggle')}
          </label>
        )}
        {running && heatShown && (
          <button type="button" onClick={() => reset.mutate()} disabled={reset.isPending}>
            {t('heatmap.reset')}
          </button>
        )}
      </p>
      {running && heatShown && <p className="hint">{t('heatmap.hint')}</p>}
      {reset.isError && <ErrorNotice error={reset.error} />}
      {!running && <p className="notice">{t('live.closed')}</p>}
      {running && <LiveCounts taskId={taskId} appName={names.app} />}
      {running && data && data.health.clock_breaks > 0 && (
        <p role="status" className="notice notice-warn clock-breaks">
          {clockBreaksText(t, language, data.health)}
        </p>
      )}
      <RegionEditor
        apps={apps}
        editor={editor}
        onChange={setEditor}
        source={source}
        frame={frame}
        lit={lit}
        areaErrors={areaErrors}
        status={
          <div className="live-status">
            <p role="status" className="meta">
              {live.isPending && running
                ? t('live.videoStarting')
                : videoUnavailable
                  ? t('live.videoUnavailable', {
                      msg:
                        live.error instanceof ApiError
                          ? `${live.error.msg} (${live.error.code})`
                          : videoState?.kind === 'error'
                            ? videoState.detail
                            : String(live.error ?? ''),
                    })
                  : videoState?.kind === 'playing'
                    ? t('live.videoPlaying')
                    : live.data
                      ? t('live.videoLoading')
                      : ''}
              {videoUnavailable && latestSnapshot ? ` ${t('live.showingSnapshot')}` : ''}
            </p>
            <p role="status" className={save.kind === 'error' || refused ? 'field-error' : 'meta'}>
              {refused
                ? refused
                : save.kind === 'saving'
                  ? t('live.saving')
                  : save.kind === 'saved'
                    ? t('live.saved')
                    : save.kind === 'error'
                      ? t('live.saveFailed', { msg: save.msg })
                      : t('live.autosave')}
            </p>
          </div>
        }
      />
    </>
  );
}
