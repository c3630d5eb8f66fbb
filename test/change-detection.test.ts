import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChangedRegion, changeImage, detectChanges } from '../engine/change/detect';
import { loadOpenCv, type OpenCv } from '../engine/change/opencv';
import { apply, type Homography, NotRegisteredError, register } from '../engine/change/register';
import { ERRORS } from '../engine/contract/errors';
import { CallbackBody, type ImageResult } from '../engine/events/schema';
import { iou } from '../engine/inference/nms';
import { compileCheck } from '../engine/schema/ajv';
import type { Box, Frame } from '../engine/vision/types';
import { changePairs } from './helpers/change-pairs';
import { type Answer, FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { Receiver } from './helpers/receiver';

/**
 * Change detection (4.9): the algorithm on synthetic and fixture images, then diff tasks over real
 * HTTP with the built-in weight-free change app.
 */

const LEUVEN = readFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'));
const BASKETBALL = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));
/** Where the object is pasted into the "after" image, in its pixels. */
const PASTED: Box = { x1: 380, y1: 240, x2: 490, y2: 330 };

async function frameOf(image: Sharp | Buffer): Promise<Frame> {
  const { data, info } = await (Buffer.isBuffer(image) ? sharp(image) : image)
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

/**
 * The "after" shot of a fixture: the camera moved by (dx, dy) pixels, the exposure changed
 * (v * gain + offset), and an object (a patch of the other fixture) now stands at PASTED; saved as
 * JPEG like a camera would.
 */
async function afterShot(
  before: Buffer,
  dx: number,
  dy: number,
  gain: number,
  offset: number,
): Promise<Buffer> {
  const object = await sharp(before === LEUVEN ? BASKETBALL : LEUVEN)
    .extract({ left: 100, top: 80, width: PASTED.x2 - PASTED.x1, height: PASTED.y2 - PASTED.y1 })
    .toColourspace('srgb')
    .png()
    .toBuffer();
  return sharp(await moved(before, dx, dy))
    .linear(gain, offset)
    .composite([{ input: object, left: PASTED.x1, top: PASTED.y1 }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** The image as a camera moved by (dx, dy) pixels sees it; the edge it uncovers repeats the border. */
async function moved(image: Buffer, dx: number, dy: number): Promise<Buffer> {
  const { width = 0, height = 0 } = await sharp(image).metadata();
  const extended = await sharp(image)
    .extend({
      left: Math.max(0, dx),
      top: Math.max(0, dy),
      right: Math.max(0, -dx),
      bottom: Math.max(0, -dy),
      extendWith: 'copy',
    })
    .toBuffer();
  return sharp(extended)
    .extract({ left: Math.max(0, -dx), top: Math.max(0, -dy), width, height })
    .png()
    .toBuffer();
}

/** A flat grey synthetic image with filled rectangles. */
function synthetic(
  width: number,
  height: number,
  grey: number,
  boxes: Array<Box & { value: number }> = [],
): Frame {
  const data = new Uint8Array(width * height * 3).fill(grey);
  for (const box of boxes) {
    for (let y = box.y1; y < box.y2; y++)
      data.fill(box.value, (y * width + box.x1) * 3, (y * width + box.x2) * 3);
  }
  return { data, width, height };
}

describe('the change algorithm', () => {
  let cv: OpenCv;

  beforeAll(async () => {
    cv = await loadOpenCv();
  });

  it('finds a new rectangle on a flat synthetic scene exactly, and nothing in an identical pair', () => {
    const before = synthetic(320, 240, 90);
    const after = synthetic(320, 240, 90, [{ x1: 100, y1: 60, x2: 160, y2: 140, value: 200 }]);
    const regions = detectChanges(cv, before, after);
    expect(regions.map(({ x1, y1, x2, y2 }) => ({ x1, y1, x2, y2 }))).toEqual([
      { x1: 100, y1: 60, x2: 160, y2: 140 },
    ]);
    expect(regions[0]?.area).toBe(60 * 80);
    expect(regions[0]?.score).toBeGreaterThan(0.9);
    expect(detectChanges(cv, after, after)).toEqual([]);
  });

  it('registers a rotated, zoomed and shifted camera to a fraction of a pixel, exposure changed and objects pasted', async () => {
    const pairs = await changePairs({ seed: 7, changed: 4, unchanged: 2 });
    for (const pair of pairs) {
      const before = changeImage(pair.before);
      const after = changeImage(pair.after);
      const registration = register(cv, before, after);
      expect(registration.method, pair.name).toBe('features');
      expect(registration.correlation).toBeGreaterThan(0.7);
      for (const [x, y] of [
        [0, 0],
        [after.cols, 0],
        [0, after.rows],
        [after.cols, after.rows],
      ] as const) {
        const [u, v] = apply(registration.homography, x, y);
        const [tu, tv] = apply(pair.motion as Homography, x, y);
        expect(Math.hypot(u - tu, v - tv), `${pair.name}, corner (${x}, ${y})`).toBeLessThan(1);
      }
    }
  });

  it('compares images of different sizes: image_a a downscaled shot of the same view', async () => {
    const after = await afterShot(LEUVEN, 0, 0, 1, 0);
    const small = await frameOf(sharp(LEUVEN).resize(500, 375));
    const regions = detectChanges(cv, small, await frameOf(after));
    expect(regions).toHaveLength(1);
    expect(iou(regions[0] as ChangedRegion, PASTED)).toBeGreaterThanOrEqual(0.7);
  });

  it('refuses to compare two shots that do not show one scene', async () => {
    const left = await frameOf(sharp(LEUVEN).extract({ left: 0, top: 0, width: 300, height: 400 }));
    const right = await frameOf(sharp(LEUVEN).extract({ left: 451, top: 0, width: 300, height: 400 }));
    expect(() => detectChanges(cv, left, right)).toThrow(NotRegisteredError);
    // Registered, but they share only a third of the view.
    const west = await frameOf(sharp(LEUVEN).extract({ left: 0, top: 0, width: 400, height: 400 }));
    const east = await frameOf(sharp(LEUVEN).extract({ left: 260, top: 0, width: 400, height: 400 }));
    expect(() => detectChanges(cv, west, east)).toThrow(/image_a covers 3\d% of image_b once registered/);
    const [leuven, basketball] = [await frameOf(LEUVEN), await frameOf(BASKETBALL)];
    expect(() => detectChanges(cv, leuven, basketball)).toThrow('cannot be registered');
  });

  for (const [name, fixture] of [
    ['leuvenB.jpg', LEUVEN],
    ['basketball1.png', BASKETBALL],
  ] as const) {
    it(`reports exactly the pasted object on ${name}, nothing of a 3-pixel shift or an exposure change`, async () => {
      const before = await frameOf(fixture);
      for (const [dx, dy, gain, offset] of [
        [3, 2, 1.2, 15],
        [-3, 0, 0.8, -10],
        [0, 3, 1, 30],
      ] as const) {
        const regions = detectChanges(
          cv,
          before,
          await frameOf(await afterShot(fixture, dx, dy, gain, offset)),
        );
        expect(regions, `shift (${dx}, ${dy}), exposure x${gain} + ${offset}`).toHaveLength(1);
        const [region] = regions as [ChangedRegion];
        expect(iou(region, PASTED)).toBeGreaterThanOrEqual(0.7);
        expect(region.area).toBeGreaterThan(0.6 * (PASTED.x2 - PASTED.x1) * (PASTED.y2 - PASTED.y1));
        expect(region.score).toBeGreaterThan(0.5);
      }
    });
  }

  it('reports nothing for the same shot with only a shift, a gain or a gamma change', async () => {
    for (const fixture of [LEUVEN, BASKETBALL]) {
      const before = await frameOf(fixture);
      const shiftedOnly = await sharp(await moved(fixture, 3, 2))
        .jpeg({ quality: 90 })
        .toBuffer();
      expect(detectChanges(cv, before, await frameOf(shiftedOnly))).toEqual([]);
      expect(detectChanges(cv, before, await frameOf(sharp(fixture).linear(1.3, -20)))).toEqual([]);
      expect(detectChanges(cv, before, await frameOf(sharp(fixture).gamma(1, 1.8)))).toEqual([]);
      expect(detectChanges(cv, before, before)).toEqual([]);
    }
  });

  it('reports an object that went away as well as one that came', async () => {
    const withObject = await frameOf(await afterShot(BASKETBALL, 0, 0, 1, 0));
    const regions = detectChanges(cv, withObject, await frameOf(BASKETBALL));
    expect(regions).toHaveLength(1);
    expect(iou(regions[0] as ChangedRegion, PASTED)).toBeGreaterThanOrEqual(0.7);
  });
});

describe('diff tasks over HTTP with the built-in change app', () => {
  let t: TestEngine;
  let receiver: Receiver;
  const checkBody = compileCheck(CallbackBody, 'callback');

  beforeAll(async () => {
    t = await startTestEngine();
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await t?.stop();
    await receiver?.close();
  });

  async function startDiffTask(): Promise<string> {
    const answer = await t.call('POST', '/api/task', {
      json: { mode: 'diff', zapk_id: 'builtin', app_ids: ['change'], report_url: receiver.url },
    });
    expect(answer.body.code, answer.body.msg).toBe(0);
    return (answer.body.data as { task_id: string }).task_id;
  }

  const pair = (parts: Record<string, Buffer>) => {
    const form = new FormData();
    for (const [name, bytes] of Object.entries(parts))
      form.append(name, new Blob([new Uint8Array(bytes)]), `${name}.jpg`);
    return { raw: { type: '', body: form } };
  };

  function result(answer: Answer): ImageResult {
    expect(answer.body.msg, JSON.stringify(answer.body).slice(0, 300)).toBe('success');
    return answer.body.data as ImageResult;
  }

  function expectError(answer: Answer, kind: keyof typeof ERRORS, msgPart: string) {
    expect({ status: answer.status, code: answer.body.code }).toEqual({
      status: ERRORS[kind].status,
      code: ERRORS[kind].code,
    });
    expect(answer.body.msg).toContain(msgPart);
  }

  it('answers the changed region of a pair and calls back the same result', async () => {
    const taskId = await startDiffTask();
    const after = await afterShot(LEUVEN, 3, 2, 1.2, 15);
    const data = result(
      await t.call(
        'POST',
        `/api/task/${taskId}/diff_image?image_id=5&device_id=roof`,
        pair({ image_a: LEUVEN, image_b: after }),
      ),
    );
    expect(data).toMatchObject({ image_id: 5, device_id: 'roof', frame: { width: 751, height: 563, id: 5 } });
    expect(data.rules.map((rule) => rule.id)).toEqual(['change:0']);
    const objects = data.rules[0]?.objects ?? [];
    expect(objects).toHaveLength(1);
    const [region] = objects as [ImageResult['rules'][number]['objects'][number]];
    const box = {
      x1: region.x - region.w / 2,
      y1: region.y - region.h / 2,
      x2: region.x + region.w / 2,
      y2: region.y + region.h / 2,
    };
    expect(iou(box, PASTED)).toBeGreaterThanOrEqual(0.7);
    expect(region).toMatchObject({ track_id: '1', class_id: '0', name: 'change' });
    expect(region.area).toBeGreaterThan(5000);
    expect(region.score).toBeGreaterThanOrEqual(0.5);

    await receiver.waitFor('the diff callback', () =>
      receiver.accepted.some((r) => r.body?.task_id === taskId),
    );
    const message = receiver.accepted.find((r) => r.body?.task_id === taskId)?.body as CallbackBody;
    expect(checkBody(message).ok).toBe(true);
    expect(message).toMatchObject({ event: 'message', app_id: 'change' });
    expect(message.data).toEqual(data);
  });

  it('answers no region for an identical pair, and compares image_b alone with the previous image_b', async () => {
    const taskId = await startDiffTask();
    const jpeg = await sharp(BASKETBALL).jpeg({ quality: 90 }).toBuffer();
    expect(
      result(await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_a: jpeg, image_b: jpeg })))
        .rules,
    ).toEqual([]);
    t.advance(1000);
    // The same shot again, now as base64 JSON: nothing changed since the previous image_b.
    const again = result(
      await t.call('POST', `/api/task/${taskId}/diff_image`, { json: { image_b: jpeg.toString('base64') } }),
    );
    expect(again).toMatchObject({ image_id: 2, rules: [] });
    t.advance(1000);
    const changed = await afterShot(BASKETBALL, 0, 0, 1, 0);
    const found = result(await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_b: changed })));
    expect(found.rules[0]?.objects).toHaveLength(1);
  });

  it('refuses image_b alone without an earlier one, pairs that cannot be registered and broken images', async () => {
    const taskId = await startDiffTask();
    expectError(
      await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_b: LEUVEN })),
      'NO_REFERENCE_IMAGE',
      'body.image_a: is required',
    );
    expectError(
      await t.call(
        'POST',
        `/api/task/${taskId}/diff_image`,
        pair({ image_a: LEUVEN.subarray(0, 9000), image_b: LEUVEN }),
      ),
      'INVALID_IMAGE',
      'body.image_a: the JPEG image cannot be decoded',
    );
    // Nothing was admitted or kept: image_b alone is still refused, and a pair passes at once.
    expectError(
      await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_b: LEUVEN })),
      'NO_REFERENCE_IMAGE',
      'image_a',
    );
    expect(
      result(
        await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_a: LEUVEN, image_b: LEUVEN })),
      ).image_id,
    ).toBe(1);
    expectError(
      await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_a: LEUVEN, image_b: LEUVEN })),
      'IMAGE_TOO_SOON',
      '1 s apart',
    );
    // A pair that cannot be registered is admitted, compared and refused; its image_b is the next reference.
    t.advance(1000);
    expectError(
      await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_a: LEUVEN, image_b: BASKETBALL })),
      'IMAGES_NOT_REGISTERED',
      'body.image_b: image_a and image_b cannot be registered',
    );
    t.advance(1000);
    expect(
      result(await t.call('POST', `/api/task/${taskId}/diff_image`, pair({ image_b: BASKETBALL }))),
    ).toMatchObject({ image_id: 3, rules: [] });
  });
});
