import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../engine/clock';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { encodedFixture, freePort } from './helpers/rtmp-source';

/**
 * A camera that keeps dropping: a real RTMP server (ffmpeg in listen mode) that serves one second of
 * video and hangs up, started again each time, read by a real engine whose watchdog reconnects in
 * real time. The engine log must account for every loss and every reconnect, and stay a few lines.
 */

/** Stream changes written in full per task and window (operations-log.ts). */
const STREAM_BURST = 5;
const RECONNECTS = 10;

/** An RTMP server of a one-second clip, started again whenever it ends, until stopped. */
class DroppingCamera {
  private child?: ChildProcess;
  private stopped = false;
  private readonly running: Promise<void>;

  constructor(
    readonly url: string,
    file: string,
  ) {
    this.running = this.serve(file);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await terminate(this.child, 'SIGKILL');
    await this.running;
  }

  private async serve(file: string): Promise<void> {
    while (!this.stopped) {
      const args = ['-hide_banner', '-loglevel', 'error', '-re', '-i', file, '-c', 'copy', '-f', 'flv'];
      const child = spawn(findFfmpeg(), [...args, '-listen', '1', this.url], { stdio: 'ignore' });
      this.child = child;
      await once(child, 'exit');
      await new Promise((done) => setTimeout(done, 50));
    }
  }
}

let t: TestEngine | undefined;
let camera: DroppingCamera | undefined;

afterAll(async () => {
  await camera?.stop();
  await t?.stop();
});

describe('the log of a camera that keeps dropping', () => {
  it('accounts for every loss and reconnect in a few lines per window', async () => {
    // The reconnect backoff runs on real time here; one window spans the whole test.
    t = await startTestEngine(undefined, undefined, {
      clock: systemClock,
      logLevel: 'info',
      log: { stdout: false, repeatWindowMs: 30 * 60_000 },
    });
    camera = new DroppingCamera(
      `rtmp://127.0.0.1:${await freePort()}/live/drop-${process.pid}`,
      encodedFixture(10),
    );
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: camera.url },
    });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const task = async () => (await t?.call('GET', `/api/task/${taskId}`))?.body.data as TaskView;
    await eventually(
      `${RECONNECTS} reconnects`,
      async () => ((await task()).health.stream?.reconnects ?? 0) >= RECONNECTS,
      150_000,
      200,
    );
    // The camera goes for good: the last loss, and no reconnect after it (frames still in the
    // engine's pipe may give one more first).
    await camera.stop();
    const settled = async () => {
      const before = await task();
      await new Promise((done) => setTimeout(done, 2_000));
      const after = await task();
      const same = after.health.stream?.reconnects === before.health.stream?.reconnects;
      return after.status === 'stream_lost' && same && after.health.stream?.reconnects;
    };
    const reconnects = await eventually('the stream lost for good', settled, 30_000, 0);
    await t.engine.close();

    const lines = readFileSync(join(t.dataDir, 'logs', 'engine.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const of = (event: string) => lines.filter((line) => line.event === event);
    const restored = of('stream.restored');
    const lost = of('stream.lost');
    // The first few as they came, each with the count so far; the rest summed up in one line.
    expect(restored.map((line) => [line.task_id, line.reconnects, line.repeats])).toEqual([
      ...Array.from({ length: STREAM_BURST }, (_, i) => [taskId, i + 1, undefined]),
      [taskId, reconnects, reconnects - STREAM_BURST],
    ]);
    expect(lost.map((line) => [line.task_id, line.reconnects, line.repeats])).toEqual([
      ...Array.from({ length: STREAM_BURST }, (_, i) => [taskId, i, undefined]),
      [taskId, reconnects, reconnects + 1 - STREAM_BURST],
    ]);
    for (const line of lost) expect(line.reason).toEqual(expect.any(String));
    // 2 x 6 lines for more than 20 changes of the stream.
    expect(restored.length + lost.length).toBe(2 * (STREAM_BURST + 1));
    expect(reconnects).toBeGreaterThanOrEqual(RECONNECTS);
  }, 200_000);
});
