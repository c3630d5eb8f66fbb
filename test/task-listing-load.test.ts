import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskView } from '../engine/tasks/schema';
import { type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { ADMIN_PASSWORD, VIDEO } from './helpers/fixtures';
import { bodyBytes, heaviestImageTask, issueVideoTask } from './helpers/heavy-task';

/**
 * Issue 31, item 1: 60 image tasks started with the heaviest body the bounds allow and closed,
 * listed over and over, must leave the engine answering /api/health at once and a running camera
 * (the fixture video as a file source, real ffmpeg) without a reconnect or a black frame. The engine
 * runs in a process of its own and the listings come from a thread of their own, so that what this
 * test does with the answers never counts as the engine's time.
 *
 * The listings: the console's (no areas) and a script's (every polygon, 3.8 MB) in turn, 50 ms
 * apart: some 40 times the console's rate, and with areas, which the console never asks for.
 *
 * The margin: the issue's bound is 100 ms. /api/health answers in 1 to 5 ms, and a listing of these
 * tasks costs the engine about 1 ms of CPU, or 5 ms with every polygon (bench/api.ts). But on a
 * loaded 2-core machine (CI runs two test files at once; this one was shared with other builds, at
 * loads of 2 to 60) the machine alone keeps the engine or this process off the cores for 100 to 200
 * ms now and then: with a browser test beside it, 1% of the probes took over 110 ms with no listing
 * at all. So the probes run through six rounds of 2 s without listings and 2 s with, which share
 * the machine's load as it comes and goes, and the listings may add to what the machine alone
 * shows: under 100 ms at the 99th percentile, under 250 ms at the worst. On an idle machine that is
 * the issue's 100 ms (the quiet rounds' p99 is under 10 ms). The code before the bounds spent about
 * 140 ms of CPU on each of these listings: in this test its probes' p99 was 160 to 890 ms (idle to
 * loaded machine) where the rounds without listings had 8 to 77 ms; the issue's 790 KB tasks
 * blocked it for 7 to 9 s.
 */

const TASKS = 60;
const ROUNDS = 6;
const ROUND_MS = 2_000;
const LISTING_PAUSE_MS = 50;
const PROBE_EVERY_MS = 25;
const HEALTH_LIMIT_MS = 100;
const WORST_LIMIT_MS = 250;

let engine: EngineProcess;
let token: string;
const dataDir = mkdtempSync(join(tmpdir(), 'vc-listing-load-'));

beforeAll(async () => {
  engine = await spawnEngine(dataDir, ADMIN_PASSWORD);
  token = await signIn(engine.url, ADMIN_PASSWORD);
}, 60_000);

afterAll(async () => {
  await stopEngine(engine);
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown) {
  const answer = await fetch(`${engine.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: answer.status, headers: answer.headers, body: (await answer.json()) as Envelope };
}
type Envelope = { code: number; msg: string; data?: unknown };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * A thread of its own that lists while told to (`listing(true)`), the console's listing (no areas)
 * and a script's (every polygon) in turn, 50 ms apart: reading megabytes of answers must not delay
 * this thread's health probes, which would count the client's time as the engine's.
 */
function listerThread(url: string, token: string) {
  const code = `
    const { parentPort, workerData: { url, token, pauseMs } } = require('node:worker_threads');
    const sizes = { plain: 0, areas: 0 };
    let listings = 0;
    let on = false;
    let stop = false;
    parentPort.on('message', (message) => {
      if (message === 'stop') stop = true;
      else on = message;
    });
    (async () => {
      while (!stop) {
        if (!on) {
          await new Promise((done) => setTimeout(done, 10));
          continue;
        }
        for (const [kind, path] of [['plain', '/api/tasks'], ['areas', '/api/tasks?with_areas=true']]) {
          const answer = await fetch(url + path, { headers: { authorization: 'Bearer ' + token } });
          if (answer.status !== 200) throw new Error(path + ' answered ' + answer.status);
          sizes[kind] = (await answer.arrayBuffer()).byteLength;
          listings += 1;
        }
        await new Promise((done) => setTimeout(done, pauseMs));
      }
      parentPort.postMessage({ listings, sizes });
    })();
  `;
  const worker = new Worker(code, { eval: true, workerData: { url, token, pauseMs: LISTING_PAUSE_MS } });
  const failed = new Promise<never>((_, fail) => worker.once('error', fail));
  return {
    listing: (on: boolean) => worker.postMessage(on),
    /** Stops it; what it listed. */
    stop: async (): Promise<{ listings: number; sizes: { plain: number; areas: number } }> => {
      const result = new Promise<{ listings: number; sizes: { plain: number; areas: number } }>((done) =>
        worker.once('message', done),
      );
      worker.postMessage('stop');
      const answer = await Promise.race([result, failed]);
      await worker.terminate();
      return answer;
    },
  };
}

async function cameraHealth(taskId: string): Promise<TaskView> {
  return (await call('GET', `/api/task/${taskId}`)).body.data as TaskView;
}

describe('the task listing under 60 closed heavy tasks', () => {
  it("refuses the issue's 790 KB body and starts nothing", async () => {
    const body = issueVideoTask(VIDEO);
    expect(bodyBytes(body)).toBeGreaterThan(790_000);
    const answer = await call('POST', '/api/task', body);
    expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 413, code: 41301 });
    expect(answer.body.msg).toMatch(/64 KiB/);
    expect((await call('GET', '/api/tasks')).body.data).toEqual([]);
  });

  it('leaves /api/health fast and a camera without a reconnect while they are listed', async () => {
    const camera = await call('POST', '/api/task', {
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    });
    expect(camera.body.msg).toBe('success');
    const cameraId = (camera.body.data as { task_id: string }).task_id;
    await eventually(
      'the camera analysing frames',
      async () => (await cameraHealth(cameraId)).health.frames_analysed > 10,
    );

    const heavy = heaviestImageTask();
    expect(bodyBytes(heavy)).toBeGreaterThan(60_000);
    for (let i = 0; i < TASKS; i++) {
      const started = await call('POST', '/api/task', heavy);
      expect(started.body.msg).toBe('success');
      const taskId = (started.body.data as { task_id: string }).task_id;
      expect((await call('DELETE', `/api/task/${taskId}`)).body.msg).toBe('success');
    }
    const closed = await call('GET', '/api/tasks?state=closed&with_areas=true');
    expect(closed.headers.get('x-total-count')).toBe(String(TASKS));
    expect((closed.body.data as TaskView[]).map((task) => task.app_configs)).toEqual(
      Array(TASKS).fill(heavy.app_configs),
    );

    // Health probes every 25 ms through rounds without and with listings.
    const probe = async (ms: number, into: number[]) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        const sent = performance.now();
        const answer = await fetch(`${engine.url}/api/health`);
        await answer.arrayBuffer();
        into.push(performance.now() - sent);
        await sleep(PROBE_EVERY_MS);
      }
    };
    const quiet: number[] = [];
    const busy: number[] = [];
    const framesBefore = (await cameraHealth(cameraId)).health.frames_analysed;
    const lister = listerThread(engine.url, token);
    for (let round = 0; round < ROUNDS; round++) {
      await probe(ROUND_MS, quiet);
      lister.listing(true);
      await probe(ROUND_MS, busy);
      lister.listing(false);
    }
    const { listings, sizes } = await lister.stop();

    const at = (latencies: number[], share: number) => {
      const sorted = [...latencies].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] ?? Number.NaN;
    };
    const figures = (latencies: number[]) =>
      `${latencies.length} probes, median ${at(latencies, 0.5).toFixed(1)} ms, p99 ${at(latencies, 0.99).toFixed(1)} ms, ` +
      `worst ${at(latencies, 1).toFixed(1)} ms`;
    console.log(
      `/api/health without listings: ${figures(quiet)}; during ${listings} listings (${sizes.plain} B each, ` +
        `${sizes.areas} B with areas): ${figures(busy)}`,
    );
    expect(at(busy, 0.99)).toBeLessThan(at(quiet, 0.99) + HEALTH_LIMIT_MS);
    expect(at(busy, 1)).toBeLessThan(at(quiet, 1) + WORST_LIMIT_MS);
    expect(listings).toBeGreaterThan((ROUNDS * ROUND_MS) / 1000);
    expect(sizes.plain).toBeLessThan(TASKS * 3_000);
    expect(sizes.areas).toBeGreaterThan(TASKS * 60_000);

    const after = await cameraHealth(cameraId);
    expect(after.status).toBe('running');
    expect(after.health.stream).toMatchObject({ state: 'running', reconnects: 0, black_frames: 0 });
    // It went on analysing (10 fps asked; at least 1 a second however loaded the machine).
    expect(after.health.frames_analysed - framesBefore).toBeGreaterThan((2 * ROUNDS * ROUND_MS) / 1000);
  }, 180_000);
});
