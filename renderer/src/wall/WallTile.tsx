import { useEffect, useRef, useState } from 'react';
import { aiVideoSocket, type TaskSummary, type VideoScale } from '../api';
import { nodeLabel } from '../cluster/site';
import type { VideoState } from '../components/HlsVideo';
import { LiveVideo } from '../components/LiveVideo';
import { StatusBadge } from '../components/StatusBadge';
import { useTransport } from '../context';
import { useAiLive } from '../hooks/useAiLive';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { useNow } from '../hooks/useNow';
import { engineLink } from '../optimization/links';
import { useSession, useT } from '../store';
import { taskTitle } from '../tasks/title';
import { apiPath } from '../transport';
import { SNAPSHOT_REFRESH_MS } from './layout';
import { useAlarmsToday } from './useAlarmsToday';

interface WallTileProps {
  task: TaskSummary;
  /** The size of AI video to play: a tile's, or null for the full size. */
  scale: VideoScale | null;
  focused: boolean;
  onSelect: () => void;
}

/** One camera on the wall: its annotated video, name, state and alarms today; a click focuses it. */
export function WallTile({ task, scale, focused, onSelect }: WallTileProps) {
  const t = useT();
  const alarms = useAlarmsToday(task.task_id);
  const language = useSession((state) => state.language);
  const title = taskTitle(task);
  const node = nodeLabel(task, t);
  const lostSince = task.health.stream_lost_since;
  return (
    <li className={focused ? 'wall-tile wall-focused' : 'wall-tile'}>
      <button type="button" className="wall-select" onClick={onSelect}>
        {/* Named by its content, not an aria-label: what the tile shows ("no signal since ...") is then
            part of its name, as voice control and axe's label-content-name-mismatch want. */}
        <span className="visually-hidden">
          {focused ? t('wall.unfocus', { name: title }) : t('wall.focus', { name: title })}
        </span>
        <TileVideo task={task} scale={scale} />
        {lostSince !== null && (
          <p className="wall-placeholder wall-no-signal">
            {t('tasks.noSignalSince', { time: timeOfDay(lostSince, language) })}
          </p>
        )}
      </button>
      <TileClock />
      <div className="wall-caption">
        <span className="wall-name">{title}</span>
        <StatusBadge task={task} />
        {node && <span className="wall-node">{node}</span>}
        {alarms !== undefined && <span className="wall-alarms">{t('wall.alarms', { count: alarms })}</span>}
      </div>
    </li>
  );
}

/** The time of day on the picture, as recorders print it: an operator reads at a glance when a tile is. */
function TileClock() {
  const language = useSession((state) => state.language);
  const now = useNow(1000);
  return (
    <time className="wall-clock" dateTime={new Date(now).toISOString()}>
      {timeOfDay(now, language)}
    </time>
  );
}

const timeOfDay = (ms: number, language: string) =>
  new Date(ms).toLocaleTimeString(language, { hour12: false });

/** How long a lost AI video waits before the tile asks for a new one. */
const VIDEO_RENEW_MS = 2_000;

interface Wanted {
  /** 'full' or the width: a stream's React key, kept when it goes from incoming to shown. */
  key: string;
  scale: VideoScale | null;
}

const wantedOf = (scale: VideoScale | null): Wanted => ({ key: scale ? String(scale.width) : 'full', scale });

/**
 * A tile's AI video at the size it asks for. When the size changes (focused: full size; back on the
 * wall: the tile's), the video it shows keeps playing while the new one opens beneath it, and gives
 * way once the new one plays: a focus shows moving pictures at once, never "Opening".
 */
function TileVideo({ task, scale }: { task: TaskSummary; scale: VideoScale | null }) {
  const t = useT();
  const wanted = wantedOf(scale);
  const [shown, setShown] = useState<Wanted>(wanted);
  const [playing, setPlaying] = useState(false);
  const incoming = wanted.key === shown.key ? null : wanted;
  // Beneath the one shown (earlier in the document), so the shown one stays on top until it goes.
  const streams = incoming ? [incoming, shown] : [shown];
  return (
    <>
      {streams.map((stream) => (
        <TileStream
          key={stream.key}
          task={task}
          scale={stream.scale}
          onPlaying={(now) => {
            if (stream !== incoming) setPlaying(now);
            else if (now) {
              setShown(stream);
              setPlaying(true);
            }
          }}
        />
      ))}
      {!playing && task.health.stream_lost_since === null && (
        <p className="wall-placeholder">{t('wall.opening')}</p>
      )}
    </>
  );
}

/** One AI video of a tile; a refreshing snapshot while the engine cannot give it (its video limit). */
function TileStream({
  task,
  scale,
  onPlaying,
}: {
  task: TaskSummary;
  scale: VideoScale | null;
  onPlaying: (playing: boolean) => void;
}) {
  const t = useT();
  const transport = useTransport();
  const live = useAiLive(transport, task.task_id, task.app_ids, scale ?? undefined);
  const [state, setState] = useState<VideoState>({ kind: 'loading' });
  const { renew } = live;
  const report = useRef(onPlaying);
  report.current = onPlaying;
  const playing = state.kind === 'playing' && !live.isError;
  useEffect(() => report.current(playing), [playing]);
  // A player that lost its stream (the engine restarted) gets a new one, after a moment.
  useEffect(() => {
    if (state.kind !== 'error') return;
    const timer = setTimeout(renew, VIDEO_RENEW_MS);
    return () => clearTimeout(timer);
  }, [state, renew]);
  if (live.isError) return <TileSnapshot taskId={task.task_id} title={taskTitle(task)} />;
  if (!live.data) return null;
  return (
    <LiveVideo
      socketPath={aiVideoSocket(task.task_id, live.data.stream)}
      hlsUrl={live.data.hls_url}
      label={t('wall.videoLabel', { name: taskTitle(task) })}
      onState={setState}
    />
  );
}

function TileSnapshot({ taskId, title }: { taskId: string; title: string }) {
  const t = useT();
  const access = useLinkAccess();
  const [tick, setTick] = useState(0);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    const timer = setInterval(() => setTick((value) => value + 1), SNAPSHOT_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  // A new address per refresh: the picture is never cached (the engine also says no-store).
  const src = access
    ? engineLink(`${apiPath`/api/task/${taskId}/snapshot`}?width=480&refresh=${tick}`, access)
    : null;
  if (!src) return null;
  return (
    <>
      <img
        src={src}
        alt={t('wall.snapshotLabel', { name: title })}
        onLoad={() => setFailed(false)}
        onError={() => setFailed(true)}
      />
      {failed && <p className="wall-placeholder">{t('wall.noPicture')}</p>}
    </>
  );
}
