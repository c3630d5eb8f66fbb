import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackBody } from '../engine/events/schema';
import { buildZapk } from '../engine/packages/zapk';
import { compileCheck } from '../engine/schema/ajv';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { BUILTIN_PACKAGE_DIR } from './helpers/fixtures';
import { Receiver } from './helpers/receiver';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * Speed on a synthetic clip: a white 30x60 box slides right at 50 px/s (its foot on row 310) over a
 * grey 640x360 scene at 10 fps, seen by the built-in motion app. The scene is calibrated as a 16 m
 * wide road, 30 m deep, seen in perspective: its bottom edge spans the frame (y 360), its far edge
 * x 220..420 at y 120. Rows of the image are lines across the road, and the road's width in pixels
 * falls linearly with the row, so on row 310 the 16 m span 640 - 2 * 50 * 220 / 240 = 548.3 px: the
 * box moves 50 * 16 / 548.3 = 1.459 m/s, along the road's +x (heading 0).
 */

type Message = Extract<CallbackBody, { event: 'message' }>;
const checkBody = compileCheck(CallbackBody, 'callback');
/** Pixels the road's 16 m span on row 310. */
const TRUE_SPEED_ROW_PX = 640 - (2 * 50 * 220) / 240;
const TRUE_SPEED = (50 * 16) / TRUE_SPEED_ROW_PX;
const CALIBRATION = {
  image: [
    [0, 360],
    [640, 360],
    [420, 120],
    [220, 120],
  ],
  ground: [
    [0, 0],
    [16, 0],
    [16, 30],
    [0, 30],
  ],
};

let t: TestEngine;
let receiver: Receiver;
let dir: string;
let clip: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-speed-'));
  clip = join(dir, 'slide.mp4');
  slidingBoxClip(clip, '20+50*t');
  t = await startTestEngine();
  receiver = await Receiver.start();
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const motion = {
  class_id: '0',
  name: 'motion',
  color: '#ffcc00',
  threshold: 0.5,
  min_pixel: 16,
  max_pixel: 0,
};
/** Fires on every frame for objects over 0.5 m/s. */
const RULE = { interval: 0, classes: [motion], speed: [{ class_id: '0', min_speed: 0.5, max_speed: 0 }] };

/** The settled speeds and headings of the box on the clip, from the speed rule's events. */
async function measure(
  zapkId: string,
  appConfigs: unknown[],
  engine = t,
): Promise<{ speeds: number[]; headings: number[] }> {
  const started = await engine.call('POST', '/api/task', {
    json: {
      zapk_id: zapkId,
      app_ids: ['motion'],
      video_url: clip,
      report_url: receiver.url,
      app_configs: appConfigs,
    },
  });
  expect(started.body.code).toBe(0);
  const taskId = (started.body.data as { task_id: string }).task_id;
  const messages = () =>
    receiver.accepted
      .map((r) => r.body as CallbackBody)
      .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);
  const speeding = () => messages().flatMap((m) => m.data.rules.filter((r) => r.id === 'motion:speed:0'));
  await receiver.waitFor('6 s of the box over its minimum speed', () => speeding().length >= 60, 60_000);
  await engine.call('DELETE', `/api/task/${taskId}`);
  for (const message of messages()) {
    const checked = checkBody(message);
    expect(checked.ok ? 'valid' : checked.error).toBe('valid');
  }
  // The first 2 s of the track hold the motion detector settling on the box; then every report.
  const settled = speeding()
    .flatMap((r) => r.objects)
    .slice(20);
  return { speeds: settled.map((o) => o.speed ?? -1), headings: settled.map((o) => o.heading ?? -1) };
}

/**
 * The median within 5% of the true speed, and most readings within `spread` of it. Speeds are on the
 * media clock, so load does not scale them; it drops frames (the pipeline sheds what the cores cannot
 * take), which bends single readings: the spread is the test's judgement of that.
 */
function expectTrueSpeed(
  what: string,
  { speeds, headings }: { speeds: number[]; headings: number[] },
  spread = 0.05,
): void {
  const median = [...speeds].sort((a, b) => a - b)[Math.floor(speeds.length / 2)] ?? -1;
  console.log(
    `${what}: true ${TRUE_SPEED.toFixed(3)} m/s; measured ${Math.min(...speeds)} to ${Math.max(...speeds)}, median ${median}`,
  );
  expect(speeds.length).toBeGreaterThanOrEqual(40);
  expect(Math.abs(median - TRUE_SPEED) / TRUE_SPEED).toBeLessThan(0.05);
  const off = speeds.filter((speed) => Math.abs(speed - TRUE_SPEED) / TRUE_SPEED > spread);
  expect(off.length).toBeLessThanOrEqual(speeds.length / 10);
  expect(new Set(headings)).toEqual(new Set([0]));
}

describe('speed on a file read faster or slower than real time', () => {
  // Rules time frames by the media's clock: timed by arrival, 2x would read 2.92 m/s and 0.5x 0.73,
  // the true speed times the rate. A file read at 2x loads the cores twice as much, so a loaded
  // machine drops more of its frames; each reading is judged as a ratio to the true speed, within
  // 25%: far from what arrival time would give, wide of the frames that load drops.
  for (const rate of [2, 0.5]) {
    it(`reports the true speed, not ${rate} times it, when the file plays at ${rate} times real time`, async () => {
      const other = await startTestEngine(undefined, undefined, { fileReadRate: rate });
      try {
        const updated = await other.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule: RULE } });
        expect(updated.body.code).toBe(0);
        expectTrueSpeed(
          `calibration, read at ${rate}x`,
          await measure('builtin', [{ app_id: 'motion', polygon: [], calibration: CALIBRATION }], other),
          0.25,
        );
      } finally {
        await other.stop();
      }
    }, 120_000);
  }
});

describe('speed on a calibrated scene', () => {
  it('reports the sliding box at its true speed within 5% through the calibration, and the speed rule fires', async () => {
    const updated = await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule: RULE } });
    expect(updated.body.code).toBe(0);
    expectTrueSpeed(
      'calibration',
      await measure('builtin', [{ app_id: 'motion', polygon: [], calibration: CALIBRATION }]),
    );
  }, 120_000);

  it("takes the package's length_reference when the task gives no calibration", async () => {
    // The built-in package again, as "measured", its motion app with the scale of row 310.
    const manifest = JSON.parse(readFileSync(join(BUILTIN_PACKAGE_DIR, 'manifest.json'), 'utf8'));
    manifest.zapk_id = 'measured';
    manifest.apps = manifest.apps
      .filter((app: { app_id: string }) => app.app_id === 'motion')
      .map((app: object) => ({
        ...app,
        rule: RULE,
        length_reference: { pixels: TRUE_SPEED_ROW_PX, meters: 16 },
      }));
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    await buildZapk(join(dir, 'manifest.json'), join(dir, 'measured.zapk'));
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(dir, 'measured.zapk'))]), 'measured.zapk');
    const installed = await fetch(`${t.engine.url}/api/zapk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
      body: form,
    });
    expect(((await installed.json()) as { code: number }).code).toBe(0);
    expectTrueSpeed('length_reference', await measure('measured', []));
  }, 120_000);

  it('refuses a calibration with three points on one line', async () => {
    const answer = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'builtin',
        app_ids: ['motion'],
        video_url: clip,
        app_configs: [
          {
            app_id: 'motion',
            polygon: [],
            calibration: {
              ...CALIBRATION,
              image: [
                [0, 360],
                [320, 240],
                [640, 120],
                [0, 0],
              ],
            },
          },
        ],
      },
    });
    expect(answer.body).toMatchObject({
      code: 40001,
      msg: 'body.app_configs[0].calibration: three of the four points (image or ground) lie on one line',
    });
  });
});
