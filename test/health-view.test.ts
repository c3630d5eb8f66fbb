import { describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract/health';
import { GATE_OFF, renderDump, restingHealth } from '../engine/tasks/health-view';
import { RUNNING_SUB_STREAM } from './helpers/health-values';

/** A running task with an AI video whose push retries: every part of the dump line. */
const RUNNING: TaskHealth = {
  stream: {
    state: 'running',
    width: 768,
    height: 576,
    fps: 10,
    reconnects: 1,
    black_frames: 12,
    last_error: null,
    full_rate: true,
    rate_switch_error: null,
    decoder: { hwaccel: 'none', fallback: null },
  },
  overloaded: false,
  overload: null,
  analysed_fps: 4.96,
  target_fps: 10,
  frames_analysed: 120,
  frames_dropped: 3,
  analysis_errors: 0,
  last_analysis_error: null,
  inference_ms: 31.6,
  images: 0,
  ai_video: [
    {
      app_ids: ['person', 'car'],
      width: 768,
      height: 576,
      fps: 10,
      bitrate_kbps: 600,
      viewers: 1,
      encoder: { state: 'live', last_error: null, retry_in_s: null },
      frames_written: 250,
      frames_dropped: 2,
      osd_error: null,
      pushes: [
        {
          url: 'rtmp://127.0.0.1:1935/live/…',
          ffmpeg: { state: 'retrying', last_error: 'Connection refused', retry_in_s: 4 },
        },
      ],
    },
  ],
  events_refused: 0,
  clock_breaks: 0,
  last_clock_break_at: null,
  stream_lost_since: null,
  clips: 'recording',
  clips_reason: null,
  gate: GATE_OFF,
  sub_stream: null,
};

describe('the dump line, rendered from the health object', () => {
  it('says how a running task with an AI video goes', () => {
    expect(renderDump(RUNNING)).toBe(
      'running 5.0 fps analysed, source 768x576 at 10.0 fps, 1 reconnects, 120 frames analysed, ' +
        '3 dropped (cores busy), inference 32 ms; AI video: [person,car] 768x576 at 10.0 fps, 600 kbit/s, ' +
        '1 viewer, encoder live, 250 frames (2 dropped: encoder behind); ' +
        'push rtmp://127.0.0.1:1935/live/…: retrying in 4 s (Connection refused)',
    );
  });

  it('says why a running task is overloaded', () => {
    const overload = "the engine's event loop ran 2.3 s late";
    expect(renderDump({ ...RUNNING, overloaded: true, overload, ai_video: [] })).toBe(
      `running 5.0 fps analysed (overloaded: ${overload}), source 768x576 at 10.0 fps, 1 reconnects, ` +
        '120 frames analysed, 3 dropped (cores busy), inference 32 ms',
    );
  });

  it('says what the motion gate spares the detector when it is on', () => {
    const gate = {
      ...RUNNING.gate,
      enabled: true,
      resting: true,
      detector_runs_per_s: 0.4,
      refresh_s: 8,
      area_fraction: 0.204,
    };
    expect(renderDump({ ...RUNNING, gate, ai_video: [] })).toBe(
      'running 5.0 fps analysed, source 768x576 at 10.0 fps, 1 reconnects, 120 frames analysed, ' +
        '3 dropped (cores busy), inference 32 ms, motion gate resting: 0.4 detector runs/s, 20% of the frame, ' +
        'whole every 8 s',
    );
  });

  it("says which stream a task with a sub-stream analyses, and the main stream's drops (gaps in its clips)", () => {
    const base =
      'running 5.0 fps analysed, source 768x576 at 10.0 fps, 1 reconnects, 120 frames analysed, 3 dropped (cores busy), inference 32 ms';
    const sub = RUNNING_SUB_STREAM;
    const dump = (sub_stream: TaskHealth['sub_stream']) =>
      renderDump({ ...RUNNING, sub_stream, ai_video: [] });
    expect(dump(sub)).toBe(`${base}, analysing the sub-stream 640x360`);
    expect(dump({ ...sub, state: 'lost', analysing: 'main_stream', last_error: 'Connection refused' })).toBe(
      `${base}, analysing the main stream (sub-stream lost: Connection refused)`,
    );
    const main = { state: 'lost', drops: 1, last_error: 'End of file' } as const;
    expect(dump({ ...sub, main })).toBe(
      `${base}, analysing the sub-stream 640x360, main stream lost (End of file): its clips have a gap`,
    );
    expect(dump({ ...sub, main: { ...main, state: 'running', drops: 2 } })).toBe(
      `${base}, analysing the sub-stream 640x360, main stream dropped 2 times (last: End of file)`,
    );
  });

  it('says how an outage goes, with analysis errors and the rate the AI video fell back to', () => {
    const lost: TaskHealth = {
      ...RUNNING,
      stream: {
        ...(RUNNING.stream as NonNullable<TaskHealth['stream']>),
        state: 'reconnecting',
        last_error: 'Connection reset',
        full_rate: false,
        rate_switch_error: 'no second connection',
      },
      analysis_errors: 2,
      last_analysis_error: 'model m.onnx crashed',
      ai_video: [],
      events_refused: 1,
    };
    expect(renderDump(lost)).toBe(
      'stream lost (Connection reset), reconnecting: 1 reconnects, 12 black frames filled, ' +
        '2 analysis errors, last: model m.onnx crashed, 1 events refused as invalid',
    );
    expect(renderDump({ ...lost, ai_video: RUNNING.ai_video })).toContain(
      '; AI video (at the analysis rate: the source gave no second connection: no second connection): [person,car]',
    );
  });

  it('gives a task with nothing live its counts and, while reopening, what is known of its source', () => {
    expect(restingHealth(3)).toEqual({
      stream: null,
      overloaded: false,
      overload: null,
      analysed_fps: 0,
      target_fps: null,
      frames_analysed: 0,
      frames_dropped: 0,
      analysis_errors: 0,
      last_analysis_error: null,
      inference_ms: null,
      images: 3,
      ai_video: [],
      clock_breaks: 0,
      last_clock_break_at: null,
      clips: 'off',
      clips_reason: null,
      gate: {
        enabled: false,
        resting: false,
        rate_fps: 0,
        frames_skipped: 0,
        frames_regions: 0,
        frames_full: 0,
        detector_runs_per_s: 0,
        refresh_s: 0,
        area_fraction: 0,
      },
      sub_stream: null,
    });
    expect(
      restingHealth(0, {
        status: 'stream_lost',
        source: { width: 640, height: 480 },
        reconnects: 2,
        lastError: 'No such file',
      }).stream,
    ).toEqual({
      state: 'reconnecting',
      width: 640,
      height: 480,
      fps: 0,
      reconnects: 2,
      black_frames: 0,
      last_error: 'No such file',
      full_rate: false,
      rate_switch_error: null,
      decoder: { hwaccel: 'none', fallback: null },
    });
  });
});
