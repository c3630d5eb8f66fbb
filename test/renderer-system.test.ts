import { describe, expect, it } from 'vitest';
import type { SystemInfo, TaskHealth } from '../engine/contract';
import { GATE_OFF } from '../engine/tasks/health-view';
import type { Task } from '../renderer/src/api';
import { formatBytes, formatDuration, type Translate, translate } from '../renderer/src/i18n';
import { appendSample, type SystemSample, sampleOf, seriesOf } from '../renderer/src/system/history';

const HEALTH: TaskHealth = {
  stream: {
    state: 'running',
    width: 768,
    height: 576,
    fps: 10,
    reconnects: 0,
    black_frames: 0,
    last_error: null,
    full_rate: false,
    rate_switch_error: null,
    decoder: { hwaccel: 'none', fallback: null },
  },
  overloaded: false,
  overload: null,
  analysed_fps: 9.5,
  target_fps: 10,
  frames_analysed: 100,
  frames_dropped: 4,
  analysis_errors: 0,
  last_analysis_error: null,
  inference_ms: 20,
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

function task(taskId: string, closeCode: number, health: TaskHealth): Task {
  return { task_id: taskId, close_code: closeCode, health } as Task;
}

function system(overrides: Partial<SystemInfo> = {}): SystemInfo {
  return {
    cpu: { cores: 4, load_1m: 1.5, engine_percent: 150 },
    memory: { total_bytes: 16e9, free_bytes: 8e9, engine_rss_bytes: 4e8 },
    models: [{ model: 'pkg/a', inference_ms: 12.5, queue: 0, provider: 'cpu', provider_fallback: null }],
    versions: { engine: '1', node: '22', ffmpeg: '7', onnxruntime: '1.30', nats_server: null },
    disk: { data_dir_bytes: 1e6, free_bytes: 1e10, total_bytes: 1e11 },
    media_dirs: ['/srv/vision/media'],
    outbox: { pending: 3, oldest_age_ms: 1500, refused_events: 0, last_refusal: null },
    tasks: { running: 1, stream_lost: 0, total: 3, clock_breaks: 0, last_clock_break_at: null },
    clips: {
      count: 0,
      bytes: 0,
      quota_bytes: 2 ** 30,
      dropped: { quota: 0, retention: 0, disk_full: 0 },
      last_error: null,
      last_error_at: null,
    },
    decoding: { setting: 'auto', hwaccel: 'none', fallback: null },
    uptime_s: 60,
    ...overrides,
  };
}

describe('the system page history', () => {
  it('a sample: CPU as a share of the machine, running cameras only, drops per second between readings', () => {
    const tasks = [
      task('camera', 0, HEALTH),
      task('closed', 1, HEALTH),
      task('images', 0, { ...HEALTH, stream: null, images: 5 }),
    ];
    const first = sampleOf(system(), tasks, 10_000, undefined);
    expect(first).toEqual({
      at: 10_000,
      cpuPercent: 37.5,
      engineRssBytes: 4e8,
      outboxPending: 3,
      inferenceMs: { 'pkg/a': 12.5 },
      cameras: { camera: { fps: 9.5, dropsPerS: 0, droppedTotal: 4 } },
    });
    const later = [task('camera', 0, { ...HEALTH, analysed_fps: 8, frames_dropped: 10 })];
    expect(sampleOf(system(), later, 12_000, first).cameras).toEqual({
      camera: { fps: 8, dropsPerS: 3, droppedTotal: 10 },
    });
  });

  it('keeps the last samples only, and reads one figure of each with gaps as null', () => {
    const samples = [1, 2, 3].map(
      (n): SystemSample => ({
        at: n,
        cpuPercent: n,
        engineRssBytes: 0,
        outboxPending: 0,
        inferenceMs: n === 2 ? {} : { 'pkg/a': n * 10 },
        cameras: {},
      }),
    );
    const kept = samples.reduce<SystemSample[]>((history, sample) => appendSample(history, sample, 2), []);
    expect(kept.map((sample) => sample.at)).toEqual([2, 3]);
    expect(seriesOf(samples, (sample) => sample.inferenceMs['pkg/a'])).toEqual([10, null, 30]);
  });
});

describe('figures in the operator’s language', () => {
  const en: Translate = (key, params) => translate('en', key, params);
  const zh: Translate = (key, params) => translate('zh-CN', key, params);

  it('durations in their two largest units', () => {
    expect([42, 185, 7800, 356_400].map((s) => formatDuration(en, s))).toEqual([
      '42 s',
      '3 min 5 s',
      '2 h 10 min',
      '4 d 3 h',
    ]);
    expect(formatDuration(zh, 185)).toBe('3 分 5 秒');
  });

  it('counted words in the number’s plural form, not "(s)"', () => {
    expect([0, 1, 2].map((count) => en('mqtt.backlog', { count }))).toEqual([
      '0 events waiting for the broker',
      '1 event waiting for the broker',
      '2 events waiting for the broker',
    ]);
    expect(zh('images.objects', { count: 1 })).toBe(
      translate('zh-CN', 'images.objects', { count: 2 }).replace('2', '1'),
    );
  });

  it('bytes with a decimal unit', () => {
    expect([0, 999, 1500, 391_000_000, 1.53e9].map((b) => formatBytes('en', b))).toEqual([
      '0 byte',
      '999 byte',
      '1.5 kB',
      '391 MB',
      '1.5 GB',
    ]);
  });
});
