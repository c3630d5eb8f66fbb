import { describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract';
import { GATE_OFF } from '../engine/tasks/health-view';
import type { Task } from '../renderer/src/api';
import { subStreamRows } from '../renderer/src/health';
import { translate } from '../renderer/src/i18n';
import { taskState } from '../renderer/src/tasks/status';
import { redactCredentials, streamErrorKind } from '../renderer/src/tasks/stream-error';
import { taskTitle } from '../renderer/src/tasks/title';
import { RUNNING_SUB_STREAM } from './helpers/health-values';

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
  analysed_fps: 10,
  target_fps: 10,
  frames_analysed: 50,
  frames_dropped: 0,
  analysis_errors: 0,
  last_analysis_error: null,
  inference_ms: 12,
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

const task = (status: Task['status'], closeCode: number, health: Partial<TaskHealth> = {}) =>
  ({ status, close_code: closeCode, health: { ...HEALTH, ...health } }) as Task;
const SUB = RUNNING_SUB_STREAM;
const stream = (state: NonNullable<TaskHealth['stream']>['state']) => ({
  stream: { ...(HEALTH.stream as NonNullable<TaskHealth['stream']>), state },
});

describe('a task’s state as every screen shows it', () => {
  it('reads tone and words from status and health, never from the dump line', () => {
    expect(
      [
        task('running', 0),
        task('starting', 0),
        task('stream_lost', 0),
        task('running', 0, stream('reconnecting')),
        task('running', 0, stream('stalled')),
        task('running', 0, { overloaded: true, overload: "the engine's event loop ran 2.3 s late" }),
        task('running', 0, { analysis_errors: 50 }),
        task('running', 0, { events_refused: 2 }),
        task('running', 0, { sub_stream: SUB }),
        task('running', 0, { sub_stream: { ...SUB, state: 'lost', analysing: 'main_stream' } }),
        task('running', 0, {
          sub_stream: { ...SUB, main: { state: 'lost', drops: 1, last_error: 'End of file' } },
        }),
        task('closed', 1),
        task('closed', 9),
      ].map(taskState),
    ).toEqual([
      { tone: 'ok', message: 'status.running' },
      { tone: 'idle', message: 'status.starting' },
      { tone: 'bad', message: 'status.streamLost' },
      { tone: 'bad', message: 'status.streamLost' },
      { tone: 'warn', message: 'status.stalled' },
      { tone: 'warn', message: 'status.overloaded' },
      { tone: 'bad', message: 'status.analysisFailing' },
      { tone: 'warn', message: 'status.eventsRefused', params: { count: 2 } },
      { tone: 'ok', message: 'status.running' },
      { tone: 'warn', message: 'status.subStreamLost' },
      { tone: 'warn', message: 'status.mainStreamLost' },
      { tone: 'idle', message: 'status.closed.1' },
      { tone: 'idle', message: 'status.closed.other', params: { code: 9 } },
    ]);
  });

  it('says a lost stream in Chinese too', () => {
    const { message } = taskState(task('stream_lost', 0));
    expect(translate('zh-CN', message)).toBe('视频流中断，正在重连');
  });

  it('names a task by its name, else by the start of its id', () => {
    expect(taskTitle({ task_id: 'a1b2c3d4-0000', name: 'Gate 1' })).toBe('Gate 1');
    expect(taskTitle({ task_id: 'a1b2c3d4-0000' })).toBe('a1b2c3d4');
  });
});

describe('a sub-stream task’s health as the details show it', () => {
  const en = (key: Parameters<typeof translate>[1], params?: Parameters<typeof translate>[2]) =>
    translate('en', key, params);

  it('says what each stream delivers and which one analysis reads', () => {
    expect(subStreamRows(en, 'en', SUB)).toEqual([
      ['Sub-stream', '640×360 at 25 fps'],
      ['Analysis reads', 'The sub-stream'],
      ['Main stream (clips)', 'Receiving · ended on its own 0 times'],
    ]);
    expect(subStreamRows(en, 'en', { ...SUB, analysing: 'main_stream' })[1]).toEqual([
      'Analysis reads',
      'The main stream, while its AI video is watched',
    ]);
  });

  it('says a lost sub-stream, a stretched aspect and a main stream that dropped, with their errors', () => {
    const rows = subStreamRows(en, 'en', {
      ...SUB,
      state: 'lost',
      fps: null,
      aspect_mismatch: true,
      analysing: 'main_stream',
      last_error: 'rtsp://cam:secret@10.0.0.5/sub: Connection refused',
      main: { state: 'lost', drops: 1, last_error: 'rtsp://10.0.0.5/main: End of file' },
    });
    expect(rows).toEqual([
      ['Sub-stream', 'Lost: the main stream is analysed meanwhile'],
      ['Analysis reads', 'The main stream, until the sub-stream returns'],
      ['Aspect', 'Differs from the main stream’s by over 2%: boxes are stretched to fit it'],
      [
        'Last sub-stream error',
        'Connection refused: the camera or server is not accepting (rtsp://***@10.0.0.5/sub: Connection refused)',
      ],
      ['Main stream (clips)', 'Lost: clips have a gap until it returns · ended on its own 1 time'],
      ['Last main stream error', 'The source ended the stream (rtsp://10.0.0.5/main: End of file)'],
    ]);
    expect(subStreamRows((key, params) => translate('zh-CN', key, params), 'zh-CN', SUB)[2]).toEqual([
      '主码流（片段）',
      '正在接收 · 自行中断 0 次',
    ]);
  });
});

describe('a stream error as operators read it', () => {
  it('tells the kinds an operator can act on apart, in both languages', () => {
    const lines = [
      'rtsp://cam:secret@10.0.0.5/stream1: Server returned 401 Unauthorized (authorization failed)',
      'http://10.0.0.5/live/missing.m3u8: Server returned 404 Not Found',
      'rtmp://127.0.0.1:1935/live/cam: Connection refused',
      'rtsp://gate.example/stream1: No route to host',
      'rtsp://10.0.0.5/stream1: Connection timed out',
      'rtmp://127.0.0.1:1935/live/cam: End of file',
      'rtsp://10.0.0.5/stream1: Invalid data found when processing input',
      'ffmpeg exited with code 1',
    ];
    expect(lines.map(streamErrorKind)).toEqual([
      'health.error.denied',
      'health.error.notFound',
      'health.error.refused',
      'health.error.unreachable',
      'health.error.timeout',
      'health.error.ended',
      'health.error.badData',
      null,
    ]);
    expect(translate('zh-CN', 'health.error.refused')).toBe('连接被拒绝：摄像头或服务器未接受连接');
  });

  it('hides credentials in the URLs of the line it shows', () => {
    expect(redactCredentials('rtsp://cam:secret@10.0.0.5/s1 then http://u@h/x and rtmp://h/live')).toBe(
      'rtsp://***@10.0.0.5/s1 then http://***@h/x and rtmp://h/live',
    );
  });
});
