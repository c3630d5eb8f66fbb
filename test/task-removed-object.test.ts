import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackBody } from '../engine/events/schema';
import { compileCheck } from '../engine/schema/ajv';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';
import { drawnClip } from './helpers/synthetic-clip';

/**
 * Removed objects end to end on a synthetic clip: a grey 640x360 scene at 10 fps where a white box
 * stands in zone "taken" until 3 s and is gone after, and another appears in zone "placed" at 6 s and
 * stays. The example package's time-series app watches both zones with a 3 s wait, so "taken" fires
 * at 6 s and "placed" at 9 s of the clip.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;
const checkBody = compileCheck(CallbackBody, 'callback');
const FPS = 10;
const square = (x: number, y: number, side: number) => [
  [x, y],
  [x + side, y],
  [x + side, y + side],
  [x, y + side],
];

let t: TestEngine;
let receiver: Receiver;
let dir: string;
let clip: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-removed-'));
  clip = join(dir, 'shelf.mp4');
  drawnClip(
    clip,
    14,
    FPS,
    "drawbox=x=100:y=100:w=120:h=120:color=white:t=fill:enable='lt(t,3)'," +
      "drawbox=x=400:y=100:w=120:h=120:color=white:t=fill:enable='gte(t,6)'",
  );
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('removed objects on a video', () => {
  it('fires once per zone 3 s after a box is taken away or put down, within 1 s of the clip time', async () => {
    const updated = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/loiter', {
      json: { rule: { removed_object: { seconds: 3, fraction: 0.5 } } },
    });
    expect(updated.body.code).toBe(0);
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['loiter'],
        video_url: clip,
        report_url: receiver.url,
        app_configs: [
          {
            app_id: 'loiter',
            polygon: [],
            zones: [
              { name: 'taken', polygon: square(90, 90, 140) },
              { name: 'placed', polygon: square(390, 90, 140) },
            ],
          },
        ],
      },
    });
    expect(started.body.code).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const removals = () =>
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .filter((b): b is Message => b.event === 'message' && b.task_id === taskId)
        .filter((m) => m.data.frame.id <= 14 * FPS)
        .flatMap((m) =>
          m.data.rules
            .filter((r) => r.id === 'loiter:removed')
            .flatMap((r) =>
              r.objects.map((o) => ({
                zone: o.name,
                at: (m.data.frame.id - 1) / FPS,
                o,
                image: r.image,
              })),
            ),
        );
    await receiver.waitFor('both zones', () => removals().length >= 2, 60_000);
    // The clip's first pass ends 5 s after "placed" fires: nothing else of it may fire meanwhile.
    await new Promise((done) => setTimeout(done, 6_000));
    await t.call('DELETE', `/api/task/${taskId}`);
    for (const message of receiver.accepted.map((r) => r.body)) {
      const checked = checkBody(message);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
    }
    const found = removals();
    console.log(found.map(({ zone, at }) => `${zone} at ${at.toFixed(1)} s`).join(', '));
    expect(found.map(({ zone }) => zone)).toEqual(['taken', 'placed']);
    const [taken, placed] = found;
    expect(Math.abs((taken?.at ?? -1) - 6)).toBeLessThanOrEqual(1);
    expect(Math.abs((placed?.at ?? -1) - 9)).toBeLessThanOrEqual(1);
    // Where the box was, as the rule found it on the analysed frame's thumbnail (4 px cells).
    expect(taken?.o).toEqual({
      track_id: '',
      x: expect.closeTo(160, -1),
      y: expect.closeTo(160, -1),
      w: expect.closeTo(120, -1),
      h: expect.closeTo(120, -1),
      score: expect.any(Number),
      class_id: 'removed',
      name: 'taken',
      area: expect.any(Number),
      zones: ['taken'],
      removed: expect.closeTo(3, 0),
    });
    // The snapshot draws the area where the box was: a dashed magenta border (REMOVED_COLOR), half
    // of its top row or more, on a frame that is grey there.
    const o = taken?.o as { x: number; y: number; w: number; h: number };
    const { data, info } = await sharp(Buffer.from(taken?.image ?? '', 'base64'))
      .raw()
      .toBuffer({ resolveWithObject: true });
    const magentaOnRow = (y: number) => {
      let count = 0;
      for (let x = o.x - o.w / 2; x < o.x + o.w / 2; x++) {
        const i = (y * info.width + Math.round(x)) * info.channels;
        const [r = 0, g = 0, b = 0] = [data[i], data[i + 1], data[i + 2]];
        if (r > 190 && g < 80 && b > 190) count++;
      }
      return count / o.w;
    };
    const top = Math.round(o.y - o.h / 2);
    expect([magentaOnRow(top) >= 0.5, magentaOnRow(top + 10) < 0.1]).toEqual([true, true]);
  }, 120_000);
});
