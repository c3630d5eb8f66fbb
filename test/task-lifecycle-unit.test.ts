import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { toApiError } from '../engine/api/domain-errors';
import { ManualClock } from '../engine/clock';
import { RECONNECT_POLICY } from '../engine/media/reconnect-policy';
import type { InstalledApp } from '../engine/packages/registry';
import { APP_TYPE } from '../engine/rules/schema';
import { TASK_LIMITS } from '../engine/tasks/limits';
import { PackageUse } from '../engine/tasks/package-use';
import { TaskRegistry, type VideoRunner } from '../engine/tasks/registry';
import type { StartTaskBody, TaskView } from '../engine/tasks/schema';
import type { InstalledApps } from '../engine/tasks/task-store';
import type { FrameSize } from '../engine/vision/types';
import { MemorySettings, MemoryTaskStore } from './helpers/memory-task-store';

/**
 * The task lifecycle's timers (part 3 of the contract) as a unit: the registry on an in-memory
 * store, a runner that opens sources when told, and a clock moved by hand. What these stand in for
 * is tested for real elsewhere: the SQL in task-repository.test.ts, the sources and the engine
 * around them in task-lifecycle.test.ts and resume-guard.test.ts.
 */

const SOURCE = { width: 1280, height: 720 };
const CAMERA = 'rtsp://camera.example/stream';
const STARTED_AT = Date.UTC(2026, 0, 1);

/** A runner whose sources open or fail as the test says, recording each try. */
class FakeRunner extends EventEmitter<{
  lost: [taskId: string, reason: string];
  restored: [taskId: string, info: { width: number; height: number }];
}> {
  /** Each try to open a source: its task and when, on the registry's clock. */
  readonly opens: Array<{ taskId: string; at: number; signal?: AbortSignal }> = [];
  readonly stopped: string[] = [];
  readonly clockBreaks = { total: 0, lastAt: null };
  /** Why the next sources fail to open; undefined opens them. */
  failure: string | undefined;

  constructor(private readonly clock: ManualClock) {
    super();
  }

  async start(task: { task_id: string }, _source: unknown, _timeoutMs: number, signal?: AbortSignal) {
    this.opens.push({ taskId: task.task_id, at: this.clock.now(), signal });
    if (this.failure) throw new Error(this.failure);
    return SOURCE as FrameSize;
  }

  update(): void {}

  async stop(taskId: string): Promise<void> {
    this.stopped.push(taskId);
  }

  health(): undefined {
    return undefined;
  }
}

const app = (appId: string, license: { expire: number } | 'perpetual'): InstalledApp => ({
  zapk_id: 'builtin',
  app_id: appId,
  name: appId,
  type: APP_TYPE.detection,
  rule: {},
  license_expire: license === 'perpetual' ? 0 : license.expire,
  perpetual: license === 'perpetual',
  labels: ['motion'],
  model: {
    key: 'builtin/motion',
    name: 'builtin/motion',
    spec: {
      family: 'motion',
      labels: ['motion'],
      score_threshold: 0.5,
      nms_iou: 0.5,
      class_agnostic_nms: false,
    },
    file: null,
  },
});

/** Licensed until an hour after the clocks start. */
const HOUR_LICENSE = { expire: (STARTED_AT + 60 * 60_000) / 1000 };
const APPS: Record<string, InstalledApp> = {
  motion: app('motion', 'perpetual'),
  trial: app('trial', HOUR_LICENSE),
};
const packages: InstalledApps = {
  app: (_zapkId, appId) => {
    const found = APPS[appId];
    if (!found) throw new Error(`no app ${appId}`);
    return found;
  },
};

/** One life of an engine on the store and settings given (a restart is a new one on the same). */
function engine(store = new MemoryTaskStore(), settings = new MemorySettings()) {
  const clock = new ManualClock(STARTED_AT);
  const runner = new FakeRunner(clock);
  const video: VideoRunner = runner;
  const tasks = new TaskRegistry(store, settings, new PackageUse(store), clock, packages, video);
  const closed: TaskView[] = [];
  tasks.on('closed', (view) => closed.push(view));
  return { store, settings, clock, runner, tasks, closed };
}

/** Lets the registry's awaits on the runner settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

const videoTask = (body: Partial<StartTaskBody> = {}): StartTaskBody => ({
  zapk_id: 'builtin',
  app_ids: ['motion'],
  video_url: CAMERA,
  ...body,
});

const refusal = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return toApiError(error)?.code ?? 'other';
  }
  return 'accepted';
};

describe('image tasks close when idle', () => {
  it('each image restarts the 5 min idle timer; silence longer than that closes with close_code 3', async () => {
    const { tasks, clock, closed } = engine();
    const task = await tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    clock.advance(4 * 60_000);
    tasks.admitImage(task.task_id, 'image');
    clock.advance(TASK_LIMITS.imageIdleCloseMs - 1);
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'running', dump: 'running, 1 images received' });
    clock.advance(1);
    expect(tasks.get(task.task_id)).toMatchObject({
      status: 'closed',
      close_code: 3,
      dump: 'closed: no image for more than 5 min',
      closed_at: STARTED_AT + 4 * 60_000 + TASK_LIMITS.imageIdleCloseMs,
    });
    expect(closed.map((view) => view.close_code)).toEqual([3]);
    expect(refusal(() => tasks.admitImage(task.task_id, 'image'))).toBe(40902);
    expect(tasks.runs(task.task_id)).toBe(false);
    // Only the hourly purge is left armed.
    expect(clock.pending).toBe(1);
  });

  it('an image task resumed after a restart closes 5 min after its last image, not after the restart', async () => {
    const first = engine();
    const task = await first.tasks.start({ mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] });
    first.clock.advance(60_000);
    first.tasks.admitImage(task.task_id, 'image');
    const second = engine(first.store, first.settings);
    second.clock.advance(3 * 60_000);
    second.tasks.resumeAll();
    second.clock.advance(TASK_LIMITS.imageIdleCloseMs - 2 * 60_000 - 1);
    expect(second.tasks.get(task.task_id).status).toBe('running');
    second.clock.advance(1);
    expect(second.tasks.get(task.task_id)).toMatchObject({ status: 'closed', close_code: 3 });
  });
});

describe('video tasks whose stream is lost', () => {
  it('a stream not restored within 5 min closes the task with close_code 2; a second loss keeps the deadline', async () => {
    const { tasks, clock, runner, closed } = engine();
    const task = await tasks.start(videoTask());
    expect(task).toMatchObject({ status: 'running', dump: 'running, source 1280x720, 0 reconnects' });
    runner.emit('lost', task.task_id, 'connection reset');
    expect(tasks.get(task.task_id)).toMatchObject({ status: 'stream_lost', close_code: 0 });
    clock.advance(2 * 60_000);
    runner.emit('lost', task.task_id, 'still down');
    clock.advance(TASK_LIMITS.streamLossCloseMs - 2 * 60_000 - 1);
    expect(tasks.get(task.task_id).status).toBe('stream_lost');
    clock.advance(1);
    expect(tasks.get(task.task_id)).toMatchObject({
      status: 'closed',
      close_code: 2,
    });
    // The reason named is the loss that armed the deadline's (the registry's choice, kept here).
    expect(tasks.get(task.task_id).dump).toMatch(
      /^closed: the video stream was not restored within 5 min \(last error: /,
    );
    expect(closed).toHaveLength(1);
    expect(runner.stopped).toEqual([task.task_id]);
    // The watchdog reconnects a self-healing stream: the registry tried no source itself.
    expect(runner.opens).toHaveLength(1);
  });

  it('a stream restored within 5 min keeps the task and counts the reconnect', async () => {
    const { tasks, clock, runner, closed } = engine();
    const task = await tasks.start(videoTask());
    runner.emit('lost', task.task_id, 'connection reset');
    clock.advance(TASK_LIMITS.streamLossCloseMs - 1);
    runner.emit('restored', task.task_id, { width: 640, height: 360 });
    clock.advance(60 * 60_000);
    expect(tasks.get(task.task_id)).toMatchObject({
      status: 'running',
      dump: 'running, source 640x360, 1 reconnects',
    });
    expect(closed).toEqual([]);
  });
});

describe('reopening a source the registry opens itself', () => {
  /** A video task stored by one engine, resumed by the next whose source fails to open. */
  async function resumedUnreachable() {
    const first = engine();
    const task = await first.tasks.start(videoTask());
    await first.tasks.shutdown();
    const second = engine(first.store, first.settings);
    second.runner.failure = 'connection refused';
    second.tasks.resumeAll();
    await settle();
    return { ...second, taskId: task.task_id };
  }

  /** The waits between tries to open the source, until the clock reaches `until`. */
  async function waitsUntil(
    { clock, runner }: { clock: ManualClock; runner: FakeRunner },
    until: number,
  ): Promise<number[]> {
    // Step by step, so that each failed try arms its wait before the clock passes it.
    while (clock.now() < until) {
      clock.advance(Math.min(250, until - clock.now()));
      await settle();
    }
    return runner.opens.slice(1).map((open, index) => open.at - (runner.opens[index]?.at ?? 0));
  }

  it('tries again after 1 s, doubling each wait up to 30 s, and closes with close_code 2 after 5 min', async () => {
    const resumed = await resumedUnreachable();
    const { tasks, clock, runner, closed, taskId } = resumed;
    expect(tasks.get(taskId)).toMatchObject({ status: 'stream_lost', close_code: 0 });
    expect(runner.opens.map((open) => open.at)).toEqual([STARTED_AT]);
    const waits = await waitsUntil(resumed, STARTED_AT + TASK_LIMITS.streamLossCloseMs - 1);
    expect(RECONNECT_POLICY).toEqual({ firstMs: 1_000, maxMs: 30_000 });
    expect(waits.slice(0, 7)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(new Set(waits.slice(5))).toEqual(new Set([30_000]));
    expect(tasks.get(taskId).status).toBe('stream_lost');
    clock.advance(1);
    expect(tasks.get(taskId)).toMatchObject({
      status: 'closed',
      close_code: 2,
      dump: 'closed: the video stream was not restored within 5 min (last error: connection refused)',
    });
    expect(closed).toHaveLength(1);
    // Closed: no try after it, and nothing of the task left armed (only the hourly purge).
    const tries = runner.opens.length;
    clock.advance(10 * 60_000);
    await settle();
    expect(runner.opens).toHaveLength(tries);
    expect(clock.pending).toBe(1);
  });

  it('a source that opens again runs the task, and the next loss waits 1 s again', async () => {
    const resumed = await resumedUnreachable();
    const { tasks, runner, taskId } = resumed;
    await waitsUntil(resumed, STARTED_AT + 7_000);
    expect(runner.opens).toHaveLength(4);
    runner.failure = undefined;
    await waitsUntil(resumed, STARTED_AT + 15_000);
    expect(runner.opens).toHaveLength(5);
    expect(tasks.get(taskId)).toMatchObject({
      status: 'running',
      dump: 'running, source 1280x720, 1 reconnects',
    });
    runner.failure = 'connection refused';
    tasks.streamLost(taskId, 'decoder error');
    await waitsUntil(resumed, STARTED_AT + 16_000);
    expect(runner.opens.at(-1)?.at).toBe(STARTED_AT + 16_000);
  });

  it('closing the task aborts the source being opened', async () => {
    const { tasks, runner, taskId } = await resumedUnreachable();
    const pending = runner.opens.at(-1);
    expect(pending?.signal?.aborted).toBe(false);
    tasks.close(taskId, 1);
    expect(pending?.signal?.aborted).toBe(true);
  });
});

describe('licenses', () => {
  it('a task closes with close_code 4 when the first time-limited license of its apps runs out', async () => {
    const { tasks, clock, closed } = engine();
    const task = await tasks.start(videoTask({ app_ids: ['motion', 'trial'] }));
    const perpetual = await tasks.start(videoTask());
    clock.advance(60 * 60_000 - 1);
    expect(tasks.get(task.task_id).status).toBe('running');
    clock.advance(1);
    expect(tasks.get(task.task_id)).toMatchObject({
      status: 'closed',
      close_code: 4,
      dump: 'closed: an application license expired (application "trial")',
    });
    expect(closed.map((view) => view.task_id)).toEqual([task.task_id]);
    clock.advance(24 * 60 * 60_000);
    expect(tasks.get(perpetual.task_id).status).toBe('running');
  });

  it('an update that drops the time-limited app disarms its expiry', async () => {
    const { tasks, clock } = engine();
    const task = await tasks.start(videoTask({ app_ids: ['motion', 'trial'] }));
    tasks.update(task.task_id, { app_ids: ['motion'] });
    clock.advance(2 * 60 * 60_000);
    expect(tasks.get(task.task_id).status).toBe('running');
  });
});

describe('the resume guard', () => {
  const LIMIT = TASK_LIMITS.maxUncleanResumes;

  /** A store holding one running video task of an engine that then died. */
  async function crashed() {
    const first = engine();
    const task = await first.tasks.start(videoTask());
    return { store: first.store, settings: first.settings, taskId: task.task_id };
  }

  /** The next engine's life on the same store: it resumes the tasks. */
  async function restart(store: MemoryTaskStore, settings: MemorySettings) {
    const next = engine(store, settings);
    next.tasks.resumeAll();
    await settle();
    return next;
  }

  it(`closes a video task with close_code 5 after ${LIMIT} resumes that each ended in a crash`, async () => {
    const { store, settings, taskId } = await crashed();
    for (let resume = 1; resume <= LIMIT; resume += 1) {
      const life = await restart(store, settings);
      expect(life.tasks.get(taskId).status).toBe('running');
      expect(store.find(taskId)?.unclean_resumes).toBe(resume);
    }
    const last = await restart(store, settings);
    expect(last.tasks.get(taskId)).toMatchObject({
      status: 'closed',
      close_code: 5,
      dump: `closed: engine error (not resumed again: the engine stopped uncleanly within 5 min of each of its last ${LIMIT} resumes)`,
    });
    expect(last.runner.opens).toEqual([]);
    expect(last.closed).toHaveLength(1);
  });

  it('a clean stop starts the count afresh', async () => {
    const { store, settings, taskId } = await crashed();
    for (let resume = 1; resume < LIMIT; resume += 1) await restart(store, settings);
    const cleanly = await restart(store, settings);
    await cleanly.tasks.shutdown();
    await restart(store, settings);
    expect(store.find(taskId)?.unclean_resumes).toBe(0);
    for (let resume = 1; resume < LIMIT; resume += 1) await restart(store, settings);
    const life = await restart(store, settings);
    expect(life.tasks.get(taskId).status).toBe('running');
    expect(store.find(taskId)?.unclean_resumes).toBe(LIMIT);
  });

  it(`a resumed task that runs ${TASK_LIMITS.resumeHealthyMs / 60_000} min starts its count afresh`, async () => {
    const { store, settings, taskId } = await crashed();
    for (let resume = 1; resume < LIMIT; resume += 1) await restart(store, settings);
    const life = await restart(store, settings);
    expect(store.find(taskId)?.unclean_resumes).toBe(LIMIT);
    life.clock.advance(TASK_LIMITS.resumeHealthyMs - 1);
    expect(store.find(taskId)?.unclean_resumes).toBe(LIMIT);
    life.clock.advance(1);
    expect(store.find(taskId)?.unclean_resumes).toBe(0);
  });
});
