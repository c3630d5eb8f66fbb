import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackBody } from '../engine/events/schema';
import type { TaskView } from '../engine/tasks/schema';
import { ffmpegChildrenOf, isAlive } from './helpers/child';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { Receiver } from './helpers/receiver';

/**
 * A starved machine is not a lost camera (issue 31, item 15). A real engine reads the real fixture
 * through real ffmpeg; its own event loop is blocked in bursts from here (it runs in this process),
 * as a starved or busy engine is: the frames wait in their pipe meanwhile. That must not reopen the
 * source or send stream_lost, and the task says it is overloaded. A source that goes silent while the
 * engine is responsive (its ffmpeg stopped) or whose ffmpeg dies is still lost and reopened.
 */

let t: TestEngine;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestEngine();
  receiver = await Receiver.start();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

const view = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
const callbacks = (taskId: string, event: string) =>
  receiver.requests.filter((r) => r.task_id === taskId && (r.body as CallbackBody).event === event);

/** A running task on the fixture that has analysed a few frames. */
async function runningTask(): Promise<string> {
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO, report_url: receiver.url },
  });
  expect(started.body.code, started.body.msg).toBe(0);
  const taskId = (started.body.data as { task_id: string }).task_id;
  // And its clip recording dropped (the fixture's MS-MPEG4v3 cannot be kept): that reopens the
  // source on a second ffmpeg, which the tests below would take for a reconnect.
  await eventually('frames analysed, recording off', async () => {
    const { health } = await view(taskId);
    return health.frames_analysed >= 10 && health.clips === 'off';
  });
  return taskId;
}

/** The task's reading ffmpeg: the one this process runs (one task at a time here). */
async function readerOf(): Promise<number> {
  return eventually('one ffmpeg', () => {
    const pids = ffmpegChildrenOf(process.pid);
    return pids.length === 1 && pids[0];
  });
}

/** Holds this thread, the engine's event loop with it, as a starved or busy engine is held. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('an engine starved of its event loop', () => {
  it('keeps its streams: no reconnect, no stream_lost, and its tasks say they are overloaded', async () => {
    const taskId = await runningTask();
    const reader = await readerOf();
    const before = await view(taskId);
    expect([before.health.overloaded, before.health.overload]).toEqual([false, null]);
    // Three bursts of 4 s, each longer than the 3 s stall window, with a second between.
    for (let burst = 0; burst < 3; burst++) {
      block(4_000);
      await sleep(1_000);
    }
    const after = await view(taskId);
    expect(after.status).toBe('running');
    expect(after.health.stream).toMatchObject({ state: 'running', reconnects: 0, black_frames: 0 });
    expect(after.health.overloaded).toBe(true);
    expect(after.health.overload).toMatch(/event loop (was|ran) \d+\.\d s (behind|late)/);
    expect(after.dump).toContain('(overloaded: ');
    // The same ffmpeg goes on, and the analysis with it.
    expect(ffmpegChildrenOf(process.pid)).toEqual([reader]);
    await eventually(
      'analysis going on',
      async () => (await view(taskId)).health.frames_analysed > after.health.frames_analysed + 5,
    );
    // No word of a loss reached the callback receiver, and the overload passes once the engine is free.
    await eventually('overload over', async () => !(await view(taskId)).health.overloaded, 30_000);
    expect(callbacks(taskId, 'stream_lost')).toEqual([]);
    expect((await view(taskId)).health.stream?.reconnects).toBe(0);
    await t.call('DELETE', `/api/task/${taskId}`);
    await eventually('no ffmpeg left', () => ffmpegChildrenOf(process.pid).length === 0);
  }, 90_000);
});

describe('a source that is really lost, the engine responsive', () => {
  it('is found silent (its ffmpeg stopped), reported stream_lost and reopened', async () => {
    const taskId = await runningTask();
    const reader = await readerOf();
    process.kill(reader, 'SIGSTOP');
    await receiver.waitFor('stream_lost', () => callbacks(taskId, 'stream_lost').length === 1, 15_000);
    const lost = await view(taskId);
    expect(lost.status).toBe('stream_lost');
    expect(lost.health.stream?.last_error).toBe('no frame for 3 s');
    // The backoff runs on the engine's clock, moved by hand; the silent ffmpeg was stopped first.
    await eventually('the stream reopened', async () => {
      t.advance(1_000);
      return (await view(taskId)).health.stream?.reconnects === 1;
    });
    expect(isAlive(reader)).toBe(false);
    expect((await view(taskId)).status).toBe('running');
    await receiver.waitFor('stream_restored', () => callbacks(taskId, 'stream_restored').length === 1);
    await t.call('DELETE', `/api/task/${taskId}`);
    await eventually('no ffmpeg left', () => ffmpegChildrenOf(process.pid).length === 0);
  }, 90_000);

  it('is lost when its ffmpeg dies, and reopened', async () => {
    const taskId = await runningTask();
    process.kill(await readerOf(), 'SIGKILL');
    await receiver.waitFor('stream_lost', () => callbacks(taskId, 'stream_lost').length === 1, 15_000);
    await eventually('the stream reopened', async () => {
      t.advance(1_000);
      return (await view(taskId)).health.stream?.reconnects === 1;
    });
    await receiver.waitFor('stream_restored', () => callbacks(taskId, 'stream_restored').length === 1);
    await t.call('DELETE', `/api/task/${taskId}`);
  }, 90_000);
});
