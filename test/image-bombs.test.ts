import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import { DECODE_BUDGET_PIXELS } from '../engine/images/budget';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { ADMIN_PASSWORD } from './helpers/fixtures';
import { killAbove, MB, memoryOf } from './helpers/process-memory';

/**
 * Decompression bombs (finding 5) against the engine in a process of its own, its memory read from
 * /proc: a 12 KB 1-bit PNG that decodes to 10000x10000, 300 MB of RGB. A flood of them to many tasks
 * must stay within the engine's decode budget while the engine keeps answering, and a burst to one
 * task must decode one of them: the 1 s rule refuses the others before their pixels are decoded.
 */

const SIDE = 10_000;
/** One bomb decoded: its RGB frame. */
const DECODED = SIDE * SIDE * 3;
/**
 * What all uploads may hold together: the decode budget's pixels at the 10 bytes per pixel an upload
 * takes at its peak (engine/images/budget.ts), about 1 GB, and one decoded frame more: V8 does not
 * see sharp's buffers, so a frame already given back may wait a while to be collected.
 */
const BOUND = DECODE_BUDGET_PIXELS * 10 + DECODED;
/** Kills an engine that grows past any sensible bound (on code without the budget: 15 x 600 MB). */
const GUARD = 4096 * MB;
const FLOOD = 15;
const BURST = 10;

const work = mkdtempSync(join(tmpdir(), 'vc-bombs-'));
let engine: EngineProcess;
let pid: number;
let token: string;
let bomb: Buffer;
let guard: ReturnType<typeof killAbove>;
let baseline: number;

beforeAll(async () => {
  bomb = await sharp({ create: { width: SIDE, height: SIDE, channels: 3, background: '#000' } })
    .png({ palette: true, colours: 2, compressionLevel: 9, effort: 1 })
    .toBuffer();
  engine = await spawnEngine(join(work, 'data'), ADMIN_PASSWORD);
  pid = engine.child.pid as number;
  guard = killAbove(engine.child, GUARD);
  token = await signIn(engine.url, ADMIN_PASSWORD);
  // sharp and the image path loaded: the baseline is the engine at work, not at rest.
  const small = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#888' } })
    .png()
    .toBuffer();
  expect((await upload(await imageTask(), small)).code).toBe(0);
  baseline = memoryOf(pid).peak;
}, 120_000);

afterAll(async () => {
  guard?.stop();
  await stopEngine(engine);
  rmSync(work, { recursive: true, force: true });
});

const imageTask = async () =>
  (
    await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      mode: 'image',
      zapk_id: 'builtin',
      app_ids: ['motion'],
    })
  ).task_id;

/** An upload's answer and when it came (ms after `since`). */
async function upload(taskId: string, png: Buffer, since = performance.now()) {
  const answer = await fetch(`${engine.url}/api/task/${taskId}/image`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
    body: new Uint8Array(png),
  }).catch((error: Error) => {
    throw new Error(`${error.message}: the engine was ${guard.killed ?? 'not killed by the guard'}`);
  });
  const body = (await answer.json()) as { code: number; msg: string };
  return { status: answer.status, code: body.code, msg: body.msg, at: performance.now() - since };
}

/** Growth of the engine's peak memory over its peak before the first bomb, once `run` is done. */
async function peakGrowth(run: () => Promise<void>): Promise<number> {
  await run();
  return memoryOf(pid).peak - baseline;
}

describe('PNG decompression bombs', () => {
  it('is a 12 KB file of 100 megapixels', async () => {
    expect(bomb.length).toBeLessThan(16 * 1024);
    expect(await sharp(bomb).metadata()).toMatchObject({ width: SIDE, height: SIDE });
  });

  // First, while the engine's peak is that of a small image: the peak says how many were decoded.
  it(`refuses ${BURST - 1} of ${BURST} sent at once to one task with 42901, without decoding them`, async () => {
    const taskId = await imageTask();
    let answers: Awaited<ReturnType<typeof upload>>[] = [];
    const growth = await peakGrowth(async () => {
      const since = performance.now();
      answers = await Promise.all(Array.from({ length: BURST }, () => upload(taskId, bomb, since)));
    });
    const decoded = answers.filter((answer) => answer.code === 0);
    const refused = answers.filter((answer) => answer.code === ERRORS.IMAGE_TOO_SOON.code);
    expect(decoded, JSON.stringify(answers)).toHaveLength(1);
    expect(refused, JSON.stringify(answers)).toHaveLength(BURST - 1);
    expect(refused.every((answer) => answer.status === 429)).toBe(true);
    // One decoded image at most: two would have taken the engine's peak up by 600 MB.
    expect(growth / MB).toBeLessThan((2 * DECODED) / MB);
    // Refused on arrival, not after a decode: every refusal came before the decoded image's answer.
    expect(Math.max(...refused.map((answer) => answer.at))).toBeLessThan(decoded[0]?.at ?? 0);
  }, 120_000);

  it(`keeps a flood of ${FLOOD} to as many tasks within the decode budget, answering throughout`, async () => {
    const tasks = await Promise.all(Array.from({ length: FLOOD }, () => imageTask()));
    const health: number[] = [];
    let flooding = true;
    const watchHealth = (async () => {
      while (flooding) {
        const asked = performance.now();
        const answer = await fetch(`${engine.url}/api/health`);
        expect(answer.status).toBe(200);
        health.push(performance.now() - asked);
        await new Promise((done) => setTimeout(done, 200));
      }
    })();
    let answers: Awaited<ReturnType<typeof upload>>[] = [];
    const growth = await peakGrowth(async () => {
      answers = await Promise.all(tasks.map((taskId) => upload(taskId, bomb)));
    });
    flooding = false;
    await watchHealth;

    // Each was analysed, or refused after waiting its turn for a while: never a broken answer.
    const codes = answers.map((answer) => answer.code);
    expect(
      codes.every((code) => code === 0 || code === ERRORS.IMAGES_BUSY.code),
      codes.join(),
    ).toBe(true);
    expect(codes.filter((code) => code === 0).length).toBeGreaterThan(0);
    expect(growth / MB).toBeLessThan(BOUND / MB);
    // The engine answered all along: not one health check waited seconds.
    expect(health.length).toBeGreaterThan(3);
    expect(Math.max(...health)).toBeLessThan(5_000);
  }, 180_000);

  it('refuses a change-detection pair that could never fit the budget from its headers', async () => {
    const taskId = (
      await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
        mode: 'diff',
        zapk_id: 'builtin',
        app_ids: ['change'],
      })
    ).task_id;
    const pixel = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const answer = await fetch(`${engine.url}/api/task/${taskId}/diff_image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image_a: bomb.toString('base64'), image_b: pixel.toString('base64') }),
    });
    const body = (await answer.json()) as { code: number; msg: string };
    expect({ status: answer.status, code: body.code }).toEqual({
      status: 413,
      code: ERRORS.IMAGE_TOO_LARGE.code,
    });
    expect(body.msg).toMatch(/100\.0 megapixels together; at most 100\.0 megapixels/);
  });
});
