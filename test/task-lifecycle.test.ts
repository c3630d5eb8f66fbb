import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toApiError } from '../engine/api/domain-errors';
import { ManualClock } from '../engine/clock';
import type { NewEvent } from '../engine/events/schema';
import { InferencePool } from '../engine/inference/pool';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import { MediaFolders } from '../engine/media/media-folders';
import { StreamWatchdog } from '../engine/media/stream-watchdog';
import { PackagesRepository } from '../engine/packages/packages-repository';
import { PackageRegistry } from '../engine/packages/registry';
import { createDetector } from '../engine/pipeline/detectors';
import { VideoAnalysis } from '../engine/pipeline/video-analysis';
import { type Db, openDb } from '../engine/store/db';
import { SettingsRepository } from '../engine/store/settings-repository';
import { PackageUse } from '../engine/tasks/package-use';
import { TaskRegistry } from '../engine/tasks/registry';
import type { TaskView } from '../engine/tasks/schema';
import { TaskRepository } from '../engine/tasks/task-repository';
import { BUILTIN_PACKAGE_DIR, TEST_MEDIA_DIRS, VIDEO } from './helpers/fixtures';

/** The task state machine of part 3 with the real store and ffmpeg, and time moved by hand. */
let dir: string;
let db: Db;
let clock: ManualClock;
let tasks: TaskRegistry;
let pool: InferencePool;
const events: NewEvent[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-tasks-'));
  db = openDb(dir);
  clock = new ManualClock();
  const ffmpeg = findFfmpeg();
  const taskRows = new TaskRepository(db);
  const packageUse = new PackageUse(taskRows);
  const packages = new PackageRegistry(new PackagesRepository(db), clock, dir, (zapkId) =>
    packageUse.uses(zapkId),
  );
  await packages.installDir(BUILTIN_PACKAGE_DIR, true);
  pool = new InferencePool({ workers: 1 });
  const video = new VideoAnalysis({
    sources: new MediaFolders(TEST_MEDIA_DIRS),
    packages,
    sink: { enqueue: (_target, event) => events.push(event) },
    createDetector: (app) => createDetector(app.model, pool),
    now: () => clock.now(),
    openStream: (source) =>
      new StreamWatchdog(source, {
        clock,
        createSource: (url, transport) => new FrameSource(url, { transport, ffmpeg }),
      }),
  });
  tasks = new TaskRegistry(taskRows, new SettingsRepository(db), packageUse, clock, packages, video);
});

afterEach(async () => {
  await tasks.shutdown();
  await pool.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return toApiError(error)?.code ?? 'other';
  }
  return 'accepted';
};

describe('image and diff tasks', () => {
  it('admits images at least 1 s apart and refuses the rest with 42901 without recording them', async () => {
    const task = await tasks.start({ mode: 'diff', zapk_id: 'builtin', app_ids: ['change'] });
    expect(refusal(() => tasks.admitImage(task.task_id, 'diff'))).toBe('accepted');
    clock.advance(999);
    expect(refusal(() => tasks.admitImage(task.task_id, 'diff'))).toBe(42901);
    clock.advance(1);
    expect(refusal(() => tasks.admitImage(task.task_id, 'diff'))).toBe('accepted');
    expect(refusal(() => tasks.admitImage(task.task_id, 'image'))).toBe(40903);
  });

  it('each image restarts the 5 min idle timer; silence longer than that closes with close_code 3', async () => {
    const closed: TaskView[] = [];
    tasks.on('closed', (view) => closed.push(view));
    const task = await tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    clock.advance(4 * 60_000);
    tasks.admitImage(task.task_id, 'image');
    clock.advance(5 * 60_000 - 1);
    expect(tasks.get(task.task_id).status).toBe('running');
    clock.advance(1);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'closed', close_code: 3 });
    expect(closed.map((view) => view.close_code)).toEqual([3]);
    expect(refusal(() => tasks.admitImage(task.task_id, 'image'))).toBe(40902);
  });
});

describe('video tasks', () => {
  it('a lost stream that comes back within 5 min keeps the task, counting the reconnect', async () => {
    const events: string[] = [];
    tasks.on('stream_lost', () => events.push('lost'));
    tasks.on('stream_restored', () => events.push('restored'));
    const task = await tasks.start({ zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
    expect(task.health.stream).toMatchObject({ state: 'running', width: 768, height: 576, reconnects: 0 });
    // As the stream's watchdog reports it: it reconnects on its own, the registry keeps the books.
    tasks.streamLost(task.task_id, 'connection reset', true);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'stream_lost', close_code: 0 });
    clock.advance(4 * 60_000);
    tasks.streamRestored(task.task_id, { width: 640, height: 360 });
    expect(tasks.get(task.task_id).status).toBe('running');
    clock.advance(10 * 60_000);
    expect(tasks.get(task.task_id).status).toBe('running');
    expect(events.slice(0, 2)).toEqual(['lost', 'restored']);
  });

  it('a stream not restored within 5 min closes the task with close_code 2', async () => {
    const task = await tasks.start({ zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
    tasks.streamLost(task.task_id, 'connection reset', true);
    // A second report while already lost must not push the deadline back.
    clock.advance(2 * 60_000);
    tasks.streamLost(task.task_id, 'still down', true);
    clock.advance(3 * 60_000);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'closed', close_code: 2 });
  });

  it('a persistent task is never closed for its lost stream, and says since when it is lost', async () => {
    const task = await tasks.start({
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
      persistent: true,
    });
    expect(task).toMatchObject({ persistent: true, health: { stream_lost_since: null } });
    const lostAt = clock.now();
    tasks.streamLost(task.task_id, 'connection refused', true);
    clock.advance(6 * 60_000);
    tasks.streamLost(task.task_id, 'still refused', true);
    clock.advance(60 * 60_000);
    expect(tasks.get(task.task_id)).toMatchObject({
      status: 'stream_lost',
      close_code: 0,
      health: { stream_lost_since: lostAt },
    });
    tasks.streamRestored(task.task_id, { width: 768, height: 576 });
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'running', health: { stream_lost_since: null } });
  });

  it('a task made persistent while lost stays; made not persistent, it closes 5 min after the loss', async () => {
    const task = await tasks.start({ zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO });
    tasks.streamLost(task.task_id, 'connection reset', true);
    clock.advance(4 * 60_000);
    await tasks.update(task.task_id, { persistent: true });
    clock.advance(10 * 60_000);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'stream_lost', persistent: true });
    await tasks.update(task.task_id, { persistent: false });
    // Lost 14 min ago: past the 5 min, so it closes at once, as it would have.
    clock.advance(0);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'closed', close_code: 2, persistent: false });
  });

  it('refuses persistent for image and diff tasks', async () => {
    await expect(
      tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'], persistent: true }),
    ).rejects.toMatchObject({ kind: 'task.invalid', details: { field: 'persistent' } });
  });

  it('refuses motion_gate for image and diff tasks, at start and in an update', async () => {
    await expect(
      tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'], motion_gate: true }),
    ).rejects.toMatchObject({ kind: 'task.invalid', details: { field: 'motion_gate' } });
    const image = await tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    expect(image.motion_gate).toBe(false);
    expect(() => tasks.update(image.task_id, { motion_gate: false })).toThrow(
      expect.objectContaining({ kind: 'task.invalid', details: { field: 'motion_gate' } }),
    );
  });

  it('detects on crops only with the gate on: gate_regions refused for image tasks and without motion_gate, kept by updates', async () => {
    await expect(
      tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'], gate_regions: true }),
    ).rejects.toMatchObject({ kind: 'task.invalid', details: { field: 'gate_regions' } });
    await expect(
      tasks.start({
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: VIDEO,
        motion_gate: false,
        gate_regions: true,
      }),
    ).rejects.toMatchObject({ kind: 'task.invalid', details: { field: 'gate_regions' } });
    const task = await tasks.start({
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
      gate_regions: true,
    });
    expect([task.motion_gate, task.gate_regions]).toEqual([true, true]);
    const gate = (body: Parameters<typeof tasks.update>[1]) => {
      const view = tasks.update(task.task_id, body);
      return [view.motion_gate, view.gate_regions];
    };
    expect(gate({ name: 'renamed' })).toEqual([true, true]);
    // Turning the gate off turns its crops off; turning it on again leaves them off.
    expect(gate({ motion_gate: false })).toEqual([false, false]);
    expect(gate({ motion_gate: true })).toEqual([true, false]);
    expect(() => tasks.update(task.task_id, { motion_gate: false, gate_regions: true })).toThrow(
      expect.objectContaining({ kind: 'task.invalid', details: { field: 'gate_regions' } }),
    );
    expect(gate({ gate_regions: true })).toEqual([true, true]);
    expect(gate({ gate_regions: false })).toEqual([true, false]);
  });

  it('starting on a source with no video fails fast and records nothing', async () => {
    await expect(
      tasks.start({ zapk_id: 'builtin', app_ids: ['motion'], video_url: '/dev/null' }),
    ).rejects.toMatchObject({ kind: 'source.unavailable', details: { field: 'video_url' } });
    expect(tasks.list({ limit: 100, offset: 0 })).toEqual({ items: [], total: 0 });
  });
});
