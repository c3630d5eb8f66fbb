import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SystemInfo } from '../engine/contract/health';
import type { NewEvent } from '../engine/events/schema';
import { compileCheck } from '../engine/schema/ajv';
import { renderDump } from '../engine/tasks/health-view';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { freePort } from './helpers/rtmp-source';

/**
 * Health as data: a running video task's figures, the machine's view (GET /api/system) and the field
 * of a refused request, read as values, never parsed out of text.
 */

let t: TestEngine;
const checkSystem = compileCheck<SystemInfo>(SystemInfo, 'system');

beforeAll(async () => {
  t = await startTestEngine();
  expect(await installExamplePackage(t)).toBe(200);
});

afterAll(async () => {
  await t?.stop();
});

const task = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;

describe('health as data', () => {
  it('a running video task reports its stream and analysis as figures, and the dump is rendered from them', async () => {
    // A receiver that refuses connections: the task's events stay pending in the outbox.
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: VIDEO,
        report_url: `http://127.0.0.1:${await freePort()}/hook`,
      },
    });
    expect(started.body.code).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    await eventually(
      'frames analysed, and clips off',
      async () => {
        const { health } = await task(taskId);
        return health.frames_analysed >= 5 && health.clips === 'off';
      },
      60_000,
    );

    const shown = await task(taskId);
    expect(shown.health).toEqual({
      stream: {
        state: 'running',
        width: 768,
        height: 576,
        fps: expect.any(Number),
        reconnects: 0,
        black_frames: 0,
        last_error: null,
        full_rate: false,
        rate_switch_error: null,
        decoder: { hwaccel: 'none', fallback: null },
      },
      analysed_fps: expect.any(Number),
      target_fps: 10,
      frames_analysed: expect.any(Number),
      frames_dropped: expect.any(Number),
      analysis_errors: 0,
      last_analysis_error: null,
      inference_ms: expect.any(Number),
      images: 0,
      ai_video: [],
      overloaded: false,
      overload: null,
      events_refused: 0,
      clock_breaks: 0,
      last_clock_break_at: null,
      stream_lost_since: null,
      // The fixture's MS-MPEG4v3 is no codec a clip can be kept of (its reader was reopened without).
      clips: 'off',
      clips_reason: 'clips are kept of H.264 and H.265 streams, not msmpeg4v3',
      // On by default; the fixture's walkers keep it from resting.
      gate: {
        enabled: true,
        resting: false,
        rate_fps: expect.any(Number),
        frames_skipped: 0,
        frames_regions: expect.any(Number),
        frames_full: expect.any(Number),
        detector_runs_per_s: expect.any(Number),
        refresh_s: 2,
        area_fraction: expect.any(Number),
      },
      sub_stream: null,
    });
    expect(shown.health.inference_ms).toBeGreaterThan(0);
    // Every frame the gate looked at is analysed, whole or on regions (none skipped).
    const { gate } = shown.health;
    expect(gate.frames_full + gate.frames_regions).toBeGreaterThanOrEqual(5);
    expect(shown.dump).toBe(renderDump(shown.health));

    await eventually(
      'an event pending delivery',
      async () => ((await t.call('GET', '/api/system')).body.data as SystemInfo).outbox.pending > 0,
      60_000,
    );
    const answer = await t.call('GET', '/api/system');
    const system = answer.body.data as SystemInfo;
    expect(checkSystem(system)).toEqual({ ok: true, value: system });
    expect(system.cpu.cores).toBe(availableParallelism());
    // startTestEngine asks for software decoding (the engine's default, auto, depends on the machine).
    expect(system.decoding).toEqual({ setting: 'none', hwaccel: 'none', fallback: null });
    expect(system.memory.engine_rss_bytes).toBeGreaterThan(0);
    expect(system.memory.engine_rss_bytes).toBeLessThan(system.memory.total_bytes);
    expect(system.models).toEqual([
      {
        model: 'coco-yolox-nano/yolox-nano',
        inference_ms: expect.any(Number),
        queue: expect.any(Number),
        provider: 'cpu',
        provider_fallback: null,
      },
    ]);
    expect(system.versions).toMatchObject({
      node: process.versions.node,
      onnxruntime: (createRequire(import.meta.url)('onnxruntime-node/package.json') as { version: string })
        .version,
    });
    expect(system.versions.ffmpeg).not.toBe('unknown');
    expect(system.disk.data_dir_bytes).toBeGreaterThan(0);
    expect(system.disk.free_bytes).toBeLessThanOrEqual(system.disk.total_bytes);
    expect(system.outbox.oldest_age_ms).toBeGreaterThanOrEqual(0);
    expect([system.outbox.refused_events, system.outbox.last_refusal]).toEqual([0, null]);
    expect(system.tasks).toEqual({
      running: 1,
      stream_lost: 0,
      total: 1,
      clock_breaks: 0,
      last_clock_break_at: null,
    });

    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
    expect((await task(taskId)).health.stream).toBeNull();
  }, 120_000);

  it('an image task has no stream', async () => {
    const started = await t.call('POST', '/api/task', {
      json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    expect((await task(taskId)).health).toMatchObject({ stream: null, images: 0, ai_video: [] });
    await t.call('DELETE', `/api/task/${taskId}`);
  });

  it("an event the outbox refuses as invalid is counted in the task's health and GET /api/system", async () => {
    const started = await t.call('POST', '/api/task', {
      json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    const before = ((await t.call('GET', '/api/system')).body.data as SystemInfo).outbox.refused_events;
    // What a defect in the rules would hand over: a stay of negative length.
    const invalid = { event: 'stream_lost', task_id: taskId, timestamp: -1, data: { reason: 'x' } };
    expect(() =>
      t.engine.outbox.enqueue({ task_id: taskId, report_url: '' }, invalid as unknown as NewEvent),
    ).toThrow(/refusing an invalid event/);

    expect((await task(taskId)).health.events_refused).toBe(1);
    const system = async () => (await t.call('GET', '/api/system')).body.data as SystemInfo;
    // The view is cached for 2 s.
    await eventually(
      'the refusal counted',
      async () => (await system()).outbox.refused_events === before + 1,
    );
    expect((await system()).outbox.last_refusal).toMatch(/^event\./);
    await t.call('DELETE', `/api/task/${taskId}`);
  });

  it('GET /api/system needs a token', async () => {
    expect((await t.call('GET', '/api/system', { token: null })).body.code).toBe(40101);
  });

  it.each([
    [{ app_ids: ['person'] }, 'zapk_id'],
    [{ zapk_id: 'coco-yolox-nano', app_ids: 'person' }, 'app_ids'],
    [{ zapk_id: 'coco-yolox-nano', app_ids: ['person'], osd: { font_size: 2 } }, 'osd.font_size'],
    [
      {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        app_configs: [{ app_id: 'person', polygon: [[1]] }],
      },
      'app_configs[0].polygon[0]',
    ],
    [{ zapk_id: 'coco-yolox-nano', app_ids: ['person'], colour: 'red' }, 'colour'],
  ])('a refused body names its field: %j -> %s', async (json, field) => {
    const answer = await t.call('POST', '/api/task', { json });
    expect(answer.body).toMatchObject({ code: 40001, field });
    expect(answer.body.msg).toMatch(new RegExp(`^body\\.${field.replace(/[.[\]]/g, '\\$&')}: `));
  });
});
