import { useQueries } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { AlarmView, Clip } from '../api';
import { useTransport } from '../context';
import { useLinkAccess } from '../hooks/useLinkAccess';
import { formatTime } from '../i18n';
import { eventQuery } from '../queries/events';
import { useSession, useT } from '../store';
import {
  alarmsAt,
  alarmsInClip,
  boxesOf,
  clipLink,
  FALLBACK_FPS,
  type FrameBoxes,
  measuredFps,
  stepTime,
} from './clip-time';

/** Alarms of one clip whose stored boxes are read (each one stored event, its snapshot included). */
export const BOX_ALARMS = 30;
/** Presented frames kept to measure a clip's frame rate when it does not name one. */
const MEASURED_FRAMES = 12;

interface ClipPlayerProps {
  clip: Clip;
  /** The best alarm's snapshot: the poster until the clip plays. */
  poster: string | null;
  alarms: readonly AlarmView[];
  name: string;
  /** A video time to go to (an alarm chosen in the list), with a counter so the same time can be asked again. */
  seek?: { time: number; n: number } | null;
}

/**
 * A review item's clip inline: the camera's own recording with the snapshot as its poster, the
 * browser's own seek bar, a frame step either way at the clip's rate and a download link. The boxes
 * the alarms stored are drawn over the picture where they are known, within BOX_WINDOW_MS of an
 * alarm's time; a line under the video says in words what is drawn.
 */
export function ClipPlayer({ clip, poster, alarms, name, seek }: ClipPlayerProps) {
  const t = useT();
  const language = useSession((state) => state.language);
  const transport = useTransport();
  const access = useLinkAccess();
  const video = useRef<HTMLVideoElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [time, setTime] = useState(0);
  const [measured, setMeasured] = useState<number | null>(null);
  // The clip's link is read once per clip: a new link token must not reload a playing video.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the clip id decides, not each new access object
  const src = useMemo(() => clipLink(clip, access), [clip.clip_id, clip.state, access === null]);
  const download = clipLink(clip, access, true);
  const covered = useMemo(() => alarmsInClip(alarms, clip).slice(0, BOX_ALARMS), [alarms, clip]);
  const bodies = useQueries({
    queries: covered.map((alarm) => eventQuery(transport, alarm.task_id, alarm.seq)),
  });
  const withBoxes = covered.flatMap((alarm, i) => {
    const boxes = boxesOf(bodies[i]?.data?.body);
    return boxes ? [{ timestamp: alarm.timestamp, boxes }] : [];
  });
  const shown = clip.start === null ? undefined : alarmsAt(withBoxes, clip.start, time)[0];
  const fps = measured ?? FALLBACK_FPS;

  useEffect(() => {
    const element = video.current;
    if (!element || !src) return;
    const times: number[] = [];
    let handle = 0;
    const onFrame = (_now: number, frame: VideoFrameCallbackMetadata) => {
      setTime(frame.mediaTime);
      if (times.length < MEASURED_FRAMES) {
        times.push(frame.mediaTime);
        setMeasured(measuredFps(times));
      }
      handle = element.requestVideoFrameCallback(onFrame);
    };
    const onTime = () => setTime(element.currentTime);
    handle = element.requestVideoFrameCallback(onFrame);
    element.addEventListener('seeked', onTime);
    element.addEventListener('timeupdate', onTime);
    return () => {
      element.cancelVideoFrameCallback(handle);
      element.removeEventListener('seeked', onTime);
      element.removeEventListener('timeupdate', onTime);
    };
  }, [src]);

  useEffect(() => {
    const element = video.current;
    if (element && seek) {
      element.pause();
      element.currentTime = seek.time;
    }
  }, [seek]);

  useEffect(() => {
    const element = video.current;
    const surface = canvas.current;
    if (!element || !surface) return;
    draw(surface, element, shown?.boxes ?? null);
  }, [shown]);

  const step = (direction: 1 | -1) => {
    const element = video.current;
    if (!element) return;
    element.pause();
    element.currentTime = stepTime(element.currentTime, fps, direction, element.duration);
  };

  return (
    <div className="clip-player">
      <div className="clip-stage">
        <video
          ref={video}
          src={src ?? undefined}
          poster={poster ?? undefined}
          controls
          preload="metadata"
          playsInline
          muted
          aria-label={t('clip.videoLabel', { name })}
        />
        <canvas ref={canvas} className="clip-boxes" />
      </div>
      <p className="sub clip-boxes-said" aria-live="polite">
        {shown
          ? t('clip.boxesShown', {
              time: formatTime(language, shown.timestamp),
              count: shown.boxes.boxes.length,
            })
          : t('clip.boxesNone')}
      </p>
      {clip.preroll_short && <p className="sub">{t('clip.prerollShort')}</p>}
      <div className="button-row">
        <button type="button" onClick={() => step(-1)} disabled={!src}>
          {t('clip.previousFrame')}
        </button>
        <button type="button" onClick={() => step(1)} disabled={!src}>
          {t('clip.nextFrame')}
        </button>
        {download && (
          <a className="button" href={download} download>
            {t('clip.download')}
          </a>
        )}
      </div>
    </div>
  );
}

/** The boxes over the video's picture, scaled from the source frame to the element's content box. */
function draw(surface: HTMLCanvasElement, element: HTMLVideoElement, shown: FrameBoxes | null): void {
  const ratio = window.devicePixelRatio || 1;
  const width = element.clientWidth;
  const height = element.clientHeight;
  surface.width = Math.round(width * ratio);
  surface.height = Math.round(height * ratio);
  surface.style.width = `${width}px`;
  surface.style.height = `${height}px`;
  const context = surface.getContext('2d');
  if (!context) return;
  context.clearRect(0, 0, surface.width, surface.height);
  if (!shown || shown.frame.width <= 0 || shown.frame.height <= 0) return;
  // The picture is letterboxed inside the element (object-fit: contain).
  const scale = Math.min(width / shown.frame.width, height / shown.frame.height);
  const left = (width - shown.frame.width * scale) / 2;
  const top = (height - shown.frame.height * scale) / 2;
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.lineWidth = 2;
  context.font = '12px system-ui, sans-serif';
  for (const box of shown.boxes) {
    const x = left + box.x * scale;
    const y = top + box.y * scale;
    context.strokeStyle = '#ffd400';
    context.strokeRect(x, y, box.w * scale, box.h * scale);
    const label = context.measureText(box.label);
    context.fillStyle = '#000000';
    context.fillRect(x, Math.max(0, y - 16), label.width + 6, 16);
    context.fillStyle = '#ffd400';
    context.fillText(box.label, x + 3, Math.max(12, y - 4));
  }
}
