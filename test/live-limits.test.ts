import { execFile } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import { BITRATE_STEPS_KBPS, bitrateStep } from '../engine/live/bitrate';
import type { TaskView } from '../engine/tasks/schema';
import { ffmpegChildrenOf } from './helpers/child';
import { type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';

/**
 * Issue 31, item 5: the video processes a caller can start are bounded. 50 preview and 50 AI-video
 * requests sent at once to a real engine (real ffmpeg, the fixture file as source) leave at most the
 * caps' ffmpeg processes running, counted among the engine's children; the rest are refused with
 * 503 50304 and Retry-After. Bitrates on one step share an encoder; an RTMP push to a server that
 * never answers ends within its timeout; processes that end give their slot back. The caps are set
 * small through the engine options.
 */

const run = promisify(execFile);
const LIMITS = { maxPreviews: 2, maxAiVideos: 3, maxAiVideosPerTask: 2, maxPushes: 2, pushTimeoutMs: 4_000 };

let t: TestEngine;
/** A TCP server that takes connections and never says a word: an RTMP address that never answers. */
let silent: Server;
const held: Socket[] = [];

beforeAll(async () => {
  t = await startTestEngine(undefined, undefined, { analysisFps: 2, live: LIMITS });
  silent = createServer((socket) => held.push(socket));
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
});

afterAll(async () => {
  await t?.stop();
  for (const socket of held) socket.destroy();
  await new Promise((done) => silent?.close(done));
});

const silentUrl = (key: string) => {
  const address = silent.address() as { port: number };
  return `rtmp://127.0.0.1:${address.port}/live/${key}`;
};

const ffmpegs = () => ffmpegChildrenOf(process.pid).length;

/** The command lines of the engine's ffmpeg children that match `pattern`. */
async function ffmpegLines(pattern: RegExp): Promise<string[]> {
  const { stdout } = await run('ps', ['-o', 'args=', '--ppid', String(process.pid)]);
  return stdout.split('\n').filter((line) => line.includes('ffmpeg') && pattern.test(line));
}

/** Runs `requests` at once while sampling the engine's ffmpeg count; the answers and the highest count. */
async function flood(requests: (() => Promise<Answer>)[]): Promise<{ answers: Answer[]; peak: number }> {
  let peak = ffmpegs();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, ffmpegs());
      await new Promise((done) => setTimeout(done, 50));
    }
  })();
  const answers = await Promise.all(requests.map((request) => request()));
  sampling = false;
  await sampler;
  return { answers, peak };
}

function expectRefused(answer: Answer, what: RegExp): void {
  expect(answer.status).toBe(503);
  expect(answer.body.code).toBe(ERRORS.VIDEO_LIMIT.code);
  expect(answer.body.msg).toMatch(what);
  expect(answer.headers.get('retry-after')).toBe('30');
}

const openPreview = (videoUrl = VIDEO) => t.call('POST', '/api/stream', { json: { video_url: videoUrl } });

describe('raw previews (4.12)', () => {
  it('50 at once start at most maxPreviews ffmpegs; the rest are refused with 50304', async () => {
    expect(ffmpegs()).toBe(0);
    const { answers, peak } = await flood(Array.from({ length: 50 }, () => () => openPreview()));
    const opened = answers.filter((answer) => answer.status === 200);
    expect(opened).toHaveLength(LIMITS.maxPreviews);
    for (const answer of answers.filter((a) => a.status !== 200)) expectRefused(answer, /runs 2 previews/);
    // A preview opening also probes its first frame: one more short-lived ffmpeg each.
    expect(peak).toBeLessThanOrEqual(2 * LIMITS.maxPreviews);
    await eventually('the probes gone', () => ffmpegs() === LIMITS.maxPreviews);
    expect(await ffmpegLines(/ -f tee /)).toHaveLength(LIMITS.maxPreviews);

    // A released preview frees its slot for the next one.
    const [first] = opened.map((answer) => (answer.body.data as { stream_id: string }).stream_id);
    expect((await t.call('DELETE', `/api/stream/${first}`)).body.code).toBe(0);
    expect((await openPreview()).body.code).toBe(0);
    expectRefused(await openPreview(), /previews/);

    // So do previews nobody fetched, once idle, and previews that never opened.
    t.advance(61_000);
    await eventually('the idle previews released', () => ffmpegs() === 0);
    for (let i = 0; i < LIMITS.maxPreviews + 1; i++)
      expect((await openPreview('/nonexistent/cam.mp4')).body.code).toBe(ERRORS.STREAM_UNAVAILABLE.code);
    const again = await Promise.all([openPreview(), openPreview()]);
    expect(again.map((answer) => answer.body.code)).toEqual([0, 0]);
    for (const answer of again)
      await t.call('DELETE', `/api/stream/${(answer.body.data as { stream_id: string }).stream_id}`);
    expect(ffmpegs()).toBe(0);
  }, 120_000);
});

describe('AI videos (4.10)', () => {
  const tasks: string[] = [];
  /** The stream ids the flood got, by task and bitrate step. */
  const viewers = new Map<string, Map<number, string[]>>();
  const view = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
  const videos = async (taskId: string) => (await view(taskId)).health.ai_video;
  const ailive = (taskId: string, body: Record<string, unknown>) =>
    t.call('POST', `/api/task/${taskId}/ailive`, { json: { app_ids: ['motion'], ...body } });
  const release = (taskId: string, stream: string) =>
    t.call('DELETE', `/api/task/${taskId}/livestream/${stream}`);

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const started = await t.call('POST', '/api/task', {
        json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO },
      });
      expect(started.body.code).toBe(0);
      tasks.push((started.body.data as { task_id: string }).task_id);
    }
  }, 60_000);

  it('quantizes bitrates to the 1-1.5-2-3-4-6-8 steps, rounding down', () => {
    expect(BITRATE_STEPS_KBPS).toHaveLength(19);
    expect([100, 149, 150, 1999, 2000, 2999, 3000, 49_999, 50_000].map(bitrateStep)).toEqual([
      100, 100, 150, 1500, 2000, 2000, 3000, 40_000, 40_000,
    ]);
  });

  it('50 requests at once over two tasks start at most the caps of encoders; one step shares one', async () => {
    const [a, b] = tasks as [string, string];
    // Task a: three steps (2000, 1000, 600), task b: two (8000, 400); many bitrates on each step.
    const plan: Array<[string, number]> = [];
    for (let i = 0; i < 15; i++) plan.push([a, 2000 + i * 60], [a, 1000 + i * 30]);
    for (let i = 0; i < 10; i++) plan.push([a, 600 + i * 20]);
    for (let i = 0; i < 5; i++) plan.push([b, 8000 + i * 300], [b, 400 + i * 40]);
    expect(plan).toHaveLength(50);
    const { answers, peak } = await flood(
      plan.map(
        ([taskId, bitrate]) =>
          () =>
            ailive(taskId, { bitrate }),
      ),
    );

    const running = new Map<string, Set<number>>(tasks.map((taskId) => [taskId, new Set()]));
    answers.forEach((answer, i) => {
      const [taskId, bitrate] = plan[i] as [string, number];
      if (answer.status !== 200) {
        expectRefused(
          answer,
          /the task already runs 2 AI videos|the engine already runs 3 AI-video encoders/,
        );
        return;
      }
      const data = answer.body.data as { bitrate: number; stream: string };
      expect(data.bitrate).toBe(bitrateStep(bitrate));
      running.get(taskId)?.add(data.bitrate);
      const ofTask = viewers.get(taskId) ?? new Map<number, string[]>();
      viewers.set(taskId, ofTask);
      ofTask.set(data.bitrate, [...(ofTask.get(data.bitrate) ?? []), data.stream]);
    });
    // Four steps were asked for; the engine runs three encoders, at most two a task.
    const steps = [...running.values()].map((set) => set.size);
    expect(steps.reduce((sum, n) => sum + n, 0)).toBe(LIMITS.maxAiVideos);
    for (const n of steps) expect(n).toBeLessThanOrEqual(LIMITS.maxAiVideosPerTask);

    // Every request on a running step got it, as a viewer of the one encoder of that step.
    for (const taskId of tasks) {
      const shown = await videos(taskId);
      expect(shown.map((video) => video.bitrate_kbps).sort()).toEqual(
        [...(running.get(taskId) ?? [])].sort(),
      );
      for (const video of shown) {
        const asked = plan.filter(
          ([id, bitrate]) => id === taskId && bitrateStep(bitrate) === video.bitrate_kbps,
        );
        expect(video.viewers).toBe(asked.length);
      }
    }
    // The engine's ffmpegs: two sources and three encoders (a source switching to its full rate
    // runs its next reader beside it for a moment).
    expect(peak).toBeLessThanOrEqual(2 * tasks.length + LIMITS.maxAiVideos);
    await eventually('the full-rate switches done', () => ffmpegs() === tasks.length + LIMITS.maxAiVideos);
    expect(await ffmpegLines(/ -f tee /)).toHaveLength(LIMITS.maxAiVideos);
  }, 180_000);

  it('encoders that stop give their slots back', async () => {
    const [a, b] = tasks as [string, string];
    // 150 kbit/s runs nowhere: refused while the engine runs its three encoders.
    expectRefused(await ailive(b, { bitrate: 150 }), /AI/);
    // Task a closes, and task b keeps one video (its other viewers released): one encoder left.
    expect((await t.call('DELETE', `/api/task/${a}`)).body.code).toBe(0);
    for (const [step, streams] of viewers.get(b) ?? []) {
      if (step === (await videos(b))[0]?.bitrate_kbps) continue;
      for (const stream of streams) expect((await release(b, stream)).body.code).toBe(0);
    }
    expect(await videos(b)).toHaveLength(1);
    await eventually('one source and one encoder left', () => ffmpegs() === 2);
    expect((await ailive(b, { bitrate: 150 })).body).toMatchObject({ code: 0, data: { bitrate: 150 } });
    expectRefused(await ailive(b, { bitrate: 300 }), /the task already runs 2 AI videos/);
    await eventually('one source and two encoders', () => ffmpegs() === 3);
  }, 120_000);

  it('RTMP pushes are bounded, and one to an address that never answers ends within its timeout', async () => {
    const [, b] = tasks as [string, string];
    const [video] = await videos(b);
    const bitrate = video?.bitrate_kbps as number;
    const { answers } = await flood(
      Array.from({ length: 10 }, (_, i) => () => ailive(b, { bitrate, rtmp: silentUrl(`key-${i}`) })),
    );
    const pushed = answers.filter((answer) => answer.status === 200);
    expect(pushed).toHaveLength(LIMITS.maxPushes);
    for (const answer of answers.filter((a) => a.status !== 200)) expectRefused(answer, /runs 2 RTMP pushes/);
    expect((await ffmpegLines(/ -f flv /)).length).toBeLessThanOrEqual(LIMITS.maxPushes);

    // Nothing answers: each push ends after 4 s (and a look each second, and its process' exit).
    const started = performance.now();
    const ended = await eventually(
      'the pushes ended',
      async () => {
        const pushes = (await videos(b)).flatMap((v) => v.pushes);
        return (
          pushes.length === LIMITS.maxPushes && pushes.every((p) => p.ffmpeg.state === 'stopped') && pushes
        );
      },
      30_000,
      100,
    );
    expect((performance.now() - started) / 1000).toBeLessThan(LIMITS.pushTimeoutMs / 1000 + 10);
    for (const push of ended) {
      expect(push.url).toBe(`rtmp://127.0.0.1:${(silent.address() as { port: number }).port}/live/…`);
      expect(push.ffmpeg.last_error).toMatch(/^ended: not up for 4 s/);
      // The stream key stays a secret.
      expect(push.ffmpeg.last_error).not.toMatch(/key-\d/);
    }
    expect((await view(b)).dump).toMatch(/push rtmp:\/\/127\.0\.0\.1:\d+\/live\/…: ended: not up for 4 s/);
    await eventually('the push processes gone', async () => (await ffmpegLines(/ -f flv /)).length === 0);

    // Their slots are free again.
    const again = await ailive(b, { bitrate, rtmp: silentUrl('again') });
    expect(again.body.code).toBe(0);
    await release(b, (again.body.data as { stream: string }).stream);

    // The viewers whose push ended are held like push-less ones: once nobody fetches their HLS, they
    // are released with the others, and the encoders stop.
    t.advance(61_000);
    await eventually(
      'every viewer released, only the source left',
      async () => (await videos(b)).length === 0 && ffmpegs() === 1,
    );
  }, 120_000);
});
