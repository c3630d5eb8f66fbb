import { describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract';
import { GATE_OFF } from '../engine/tasks/health-view';
import { clockBreaksText, sourceSize, taskFigures } from '../renderer/src/health';
import { type Language, type MessageKey, type Params, translate } from '../renderer/src/i18n';

const RUNNING: TaskHealth = {
  stream: {
    state: 'running',
    width: 768,
    height: 576,
    fps: 10,
    reconnects: 2,
    black_frames: 0,
    last_error: null,
    full_rate: false,
    rate_switch_error: null,
    decoder: { hwaccel: 'none', fallback: null },
  },
  overloaded: false,
  overload: null,
  analysed_fps: 9.6,
  target_fps: 10,
  frames_analysed: 501,
  frames_dropped: 3,
  analysis_errors: 0,
  last_analysis_error: null,
  inference_ms: 12.5,
  images: 0,
  ai_video: [],
  events_refused: 0,
  clock_breaks: 0,
  last_clock_break_at: null,
  stream_lost_since: null,
  clips: 'recording',
  clips_reason: null,
  gate: GATE_OFF,
  sub_stream: null,
};
const IMAGES: TaskHealth = { ...RUNNING, stream: null, analysed_fps: 0, images: 3 };

describe('task health as the console shows it', () => {
  it('the task table reads fps and reconnects from the figures; a task without stream has none', () => {
    expect(taskFigures(RUNNING)).toEqual({ fps: 9.6, reconnects: 2 });
    expect(taskFigures(IMAGES)).toEqual({ fps: null, reconnects: null });
  });

  it('the polygon editor takes the source frame size from the stream, once known', () => {
    expect(sourceSize(RUNNING)).toEqual({ width: 768, height: 576 });
    expect(sourceSize(IMAGES)).toBeNull();
    const connecting = {
      ...RUNNING,
      stream: { ...(RUNNING.stream as NonNullable<TaskHealth['stream']>), width: null, height: null },
    };
    expect(sourceSize(connecting)).toBeNull();
  });

  it("says how often the camera's clock broke, when last, and that alarms were kept, in each language", () => {
    const at = new Date(2026, 10, 28, 14, 2, 7).getTime();
    const words = (language: Language) =>
      clockBreaksText((key: MessageKey, params?: Params) => translate(language, key, params), language, {
        clock_breaks: 3,
        last_clock_break_at: at,
      });
    expect(words('en')).toBe(
      'The camera’s clock stepped back or jumped 3 times, last at 2:02:07 PM; alarms were kept (timed by the engine’s clock).',
    );
    expect(words('zh-CN')).toBe(
      '摄像机的时钟回退或跳变了 3 次，最近一次在 14:02:07；告警均已保留（按引擎时钟计时）。',
    );
  });
});
