/** What the screens show of a task's health: typed figures from the engine, never its dump line. */
import type { Hwaccel, SubStreamHealth, TaskHealth } from '../../engine/contract';
import type { Size } from './geometry/viewport';
import {
  formatNumber,
  formatTime,
  type Language,
  type MessageKey,
  type Params,
  type Translate,
} from './i18n';
import { streamErrorText } from './tasks/stream-error';

/** The task table's figures; null where the task has no stream (image and diff tasks, closed ones). */
export function taskFigures(health: TaskHealth): { fps: number | null; reconnects: number | null } {
  return {
    fps: health.stream ? health.analysed_fps : null,
    reconnects: health.stream ? health.stream.reconnects : null,
  };
}

/** The source frame size the engine decodes (what polygons are in); null before the first frame. */
export function sourceSize(health: TaskHealth): Size | null {
  const width = health.stream?.width ?? 0;
  const height = health.stream?.height ?? 0;
  return width > 0 && height > 0 ? { width, height } : null;
}

/**
 * How a stream is decoded, as a state in words: the path in use, or, when the setting asked for a
 * hardware path that failed (ffmpeg's cuda/vaapi/qsv device errors), "hardware decoding
 * unavailable, using the CPU" with ffmpeg's reason kept for the details.
 */
export function decodingState(decoder: { hwaccel: Hwaccel; fallback: string | null }): {
  key: MessageKey;
  params?: Params;
  detail: string | null;
} {
  if (decoder.fallback === null) return { key: `system.hwaccel.${decoder.hwaccel}`, detail: null };
  if (decoder.hwaccel === 'none') return { key: 'health.hwUnavailable', detail: decoder.fallback };
  return { key: 'health.hwOther', params: { path: decoder.hwaccel }, detail: decoder.fallback };
}

// lagOverload's words (engine/system/loop-lag.ts): the one overload with figures of its own.
const LOOP_LATE = /^the engine's event loop ran ([\d.]+) s late$/;

/** Why a task counts as overloaded, as a state with its figure where the engine gives one. */
export function overloadState(reason: string): { key: MessageKey; params?: Params; detail: string } {
  const late = LOOP_LATE.exec(reason);
  if (late) return { key: 'health.overload.late', params: { s: late[1] ?? '' }, detail: reason };
  return { key: 'health.overload.busy', detail: reason };
}

/**
 * The source's clock breaks (health.clock_breaks) in plain words: how many, when the last was, and
 * that no alarm was lost for them.
 */
export function clockBreaksText(
  t: Translate,
  language: Language,
  health: Pick<TaskHealth, 'clock_breaks' | 'last_clock_break_at'>,
): string {
  return t('health.clockBreaksText', {
    count: health.clock_breaks,
    time: health.last_clock_break_at === null ? '–' : formatTime(language, health.last_clock_break_at),
  });
}

/** What the task analyses, in the operator's words: the rate against its target, frames analysed and dropped. */
export function analysedText(
  t: Translate,
  language: Language,
  health: Pick<TaskHealth, 'analysed_fps' | 'target_fps' | 'frames_analysed' | 'frames_dropped'>,
): string {
  return t('health.analysedFigures', {
    fps: formatNumber(language, health.analysed_fps),
    target: health.target_fps === null ? '–' : formatNumber(language, health.target_fps),
    frames: health.frames_analysed,
    dropped: health.frames_dropped,
  });
}

/**
 * A sub-stream task's rows of the health details (issue 36): what the sub-stream delivers, which
 * stream analysis reads and why, an aspect that differs, and the main stream that clips are cut from.
 */
export function subStreamRows(
  t: Translate,
  language: Language,
  sub: SubStreamHealth,
): Array<[string, string]> {
  const running = sub.state === 'running';
  const rows: Array<[string, string]> = [
    [
      t('health.subStream'),
      !running
        ? t('health.subStreamLost')
        : sub.width && sub.height && sub.fps !== null
          ? t('health.sourceFigures', {
              width: sub.width,
              height: sub.height,
              fps: formatNumber(language, sub.fps),
            })
          : t('health.streamState.running'),
    ],
    [
      t('health.analysisReads'),
      t(
        sub.analysing === 'sub_stream'
          ? 'health.reads.sub'
          : running
            ? 'health.reads.mainWatched'
            : 'health.reads.mainFallback',
      ),
    ],
  ];
  if (sub.aspect_mismatch) rows.push([t('health.aspect'), t('health.aspectMismatch')]);
  if (sub.last_error) rows.push([t('health.subStreamError'), streamErrorText(t, sub.last_error)]);
  rows.push([
    t('health.mainStream'),
    t('health.mainStreamFigures', {
      state: t(sub.main.state === 'running' ? 'health.streamState.running' : 'health.mainStreamLost'),
      drops: sub.main.drops,
    }),
  ]);
  if (sub.main.last_error) rows.push([t('health.mainStreamError'), streamErrorText(t, sub.main.last_error)]);
  return rows;
}
