import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encode as encodeBmp } from 'bmp-ts';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../engine/contract/errors';
import { CallbackBody, type ImageResult } from '../engine/events/schema';
import { InferencePool } from '../engine/inference/pool';
import { compileCheck } from '../engine/schema/ajv';
import { type Answer, FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { FIXTURE_MODEL, installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';

/**
 * Image tasks (4.8) over real HTTP: real fixture images decoded by sharp, the fixture YOLOX model in
 * onnxruntime, rules, snapshots, the outbox and a callback receiver on loopback; part 3's timers on
 * the engine's manual clock.
 */

const BASKETBALL = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));
/** The person app's class threshold in the example package. */
const PERSON_THRESHOLD = 0.55;
const checkBody = compileCheck(CallbackBody, 'callback');

type Message = Extract<CallbackBody, { event: 'message' }>;
type Obj = ImageResult['rules'][number]['objects'][number];

let t: TestEngine;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
});

function expectError(answer: Answer, kind: keyof typeof ERRORS, msgPart?: string | RegExp) {
  expect({ status: answer.status, code: answer.body.code }, answer.body.msg).toEqual({
    status: ERRORS[kind].status,
    code: ERRORS[kind].code,
  });
  if (msgPart) expect(answer.body.msg).toMatch(msgPart);
}

function result(answer: Answer): ImageResult {
  expect(answer.body.msg, JSON.stringify(answer.body).slice(0, 300)).toBe('success');
  expect(answer.status).toBe(200);
  return answer.body.data as ImageResult;
}

async function startTask(body: Record<string, unknown>): Promise<string> {
  const answer = await t.call('POST', '/api/task', {
    json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'], ...body },
  });
  expect(answer.body.code, answer.body.msg).toBe(0);
  return (answer.body.data as { task_id: string }).task_id;
}

const raw = (bytes: Uint8Array, type = 'image/png') => ({ raw: { type, body: new Uint8Array(bytes) } });

const upload = (taskId: string, bytes: Uint8Array, query = '', type = 'image/png') =>
  t.call('POST', `/api/task/${taskId}/image${query}`, raw(bytes, type));

const objectsOf = (data: ImageResult, ruleId: string): Obj[] =>
  data.rules.find((rule) => rule.id === ruleId)?.objects ?? [];

const byX = <T extends { x: number }>(objects: readonly T[]) => [...objects].sort((a, b) => a.x - b.x);

async function rgbOf(bytes: Uint8Array) {
  const { data, info } = await sharp(bytes).toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  return { data: new Uint8Array(data), width: info.width, height: info.height };
}

/** The fixture's persons as the model itself finds them on the same pixels, as reported objects. */
async function referencePersons(bytes: Uint8Array) {
  const pool = new InferencePool({ workers: 1 });
  try {
    const { detections } = await pool.detect(FIXTURE_MODEL, await rgbOf(bytes));
    return byX(
      detections
        .filter((d) => d.classIndex === 0 && d.score >= PERSON_THRESHOLD)
        .map((d) => ({
          x: Math.round((d.x1 + d.x2) / 2),
          y: Math.round((d.y1 + d.y2) / 2),
          w: Math.round(d.x2 - d.x1),
          h: Math.round(d.y2 - d.y1),
          score: Math.round(d.score * 1000) / 1000,
        })),
    );
  } finally {
    await pool.close();
  }
}

/** basketball1.png times `gain` plus seeded Gaussian noise: a low-light shot of the same scene. */
async function darkened(gain: number, noise: number, seed: number): Promise<Buffer> {
  const { data, width, height } = await rgbOf(BASKETBALL);
  let state = seed;
  const uniform = () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
  const gauss = () => Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i += 3) {
    const v = Math.max(0, Math.min(255, Math.round((data[i] as number) * gain + gauss() * noise)));
    out[i] = v;
    out[i + 1] = v;
    out[i + 2] = v;
  }
  return sharp(out, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

describe('image task with the COCO person app', () => {
  it('finds the persons of basketball1.png, echoes device_id and image_id, and calls back the same result', async () => {
    const taskId = await startTask({ report_url: receiver.url, business_id: 'court-1' });
    const data = result(await upload(taskId, BASKETBALL, '?device_id=cam-02&image_id=17'));

    expect(data.image_id).toBe(17);
    expect(data.device_id).toBe('cam-02');
    expect(data.frame).toEqual({ height: 480, width: 640, id: 17 });
    expect(data.rules.map((rule) => rule.id)).toEqual(['person:0']);
    const persons = byX(objectsOf(data, 'person:0'));
    // Exactly what the model finds on the decoded pixels: the player on the left and the one on the right.
    const reference = await referencePersons(BASKETBALL);
    expect(reference).toHaveLength(2);
    expect(persons.map(({ x, y, w, h, score }) => ({ x, y, w, h, score }))).toEqual(reference);
    expect(persons.map((p) => p.class_id)).toEqual(['0', '0']);
    expect(persons.map((p) => p.name)).toEqual(['person', 'person']);
    expect(persons[0]?.x).toBeLessThan(200);
    expect(persons[1]?.x).toBeGreaterThan(420);
    // Per image, no tracker: the objects are numbered within the image.
    expect(persons.map((p) => p.track_id).sort()).toEqual(['1', '2']);
    const snapshot = await sharp(Buffer.from(data.rules[0]?.image ?? '', 'base64')).metadata();
    expect({ format: snapshot.format, width: snapshot.width, height: snapshot.height }).toEqual({
      format: 'jpeg',
      width: 640,
      height: 480,
    });

    await receiver.waitFor('the image callback', () =>
      receiver.accepted.some((r) => r.body?.task_id === taskId && r.body.event === 'message'),
    );
    const message = receiver.accepted.find((r) => r.body?.task_id === taskId)?.body as Message;
    expect(checkBody(message).ok).toBe(true);
    expect(message).toMatchObject({ app_id: 'person', business_id: 'court-1', timestamp: t.clock.now() });
    expect(message.data).toEqual(data);
  });

  it('takes multipart, raw and base64 JSON bodies, and PNG, JPEG, BMP and WebP images alike', async () => {
    const taskId = await startTask({});
    const { data, width, height } = await rgbOf(BASKETBALL);
    const abgr = Buffer.alloc(width * height * 4);
    for (let i = 0, j = 0; i < data.length; i += 3, j += 4) {
      abgr[j + 1] = data[i + 2] as number;
      abgr[j + 2] = data[i + 1] as number;
      abgr[j + 3] = data[i] as number;
    }
    const bmp = encodeBmp({ data: abgr, width, height, bitPP: 24 } as Parameters<typeof encodeBmp>[0]).data;
    const webp = await sharp(BASKETBALL).webp({ lossless: true }).toBuffer();
    const jpeg = await sharp(BASKETBALL).jpeg({ quality: 95 }).toBuffer();
    const form = new FormData();
    form.append('image', new Blob([new Uint8Array(jpeg)]), 'frame.jpg');

    const answers = [
      await upload(taskId, bmp, '', 'image/bmp'),
      await t.call('POST', `/api/task/${taskId}/image`, { json: { image: webp.toString('base64') } }),
      await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: '', body: form } }),
    ];
    // Sent at once, only the first passes the 1 s rule; each form again a second apart.
    expect(result(answers[0] as Answer).image_id).toBe(1);
    expectError(answers[1] as Answer, 'IMAGE_TOO_SOON');
    expectError(answers[2] as Answer, 'IMAGE_TOO_SOON');
    await setPersonInterval(0);
    try {
      const counts = [objectsOf(result(answers[0] as Answer), 'person:0').length];
      t.advance(1000);
      counts.push(
        objectsOf(
          result(
            await t.call('POST', `/api/task/${taskId}/image`, { json: { image: webp.toString('base64') } }),
          ),
          'person:0',
        ).length,
      );
      t.advance(1000);
      const multipart = result(
        await t.call('POST', `/api/task/${taskId}/image`, { raw: { type: '', body: form } }),
      );
      counts.push(objectsOf(multipart, 'person:0').length);
      expect(counts).toEqual([2, 2, 2]);
      expect(multipart.image_id).toBe(3);
    } finally {
      await setPersonInterval(5);
    }
  });

  it('honours EXIF orientation', async () => {
    const taskId = await startTask({});
    const rotated = await sharp(BASKETBALL).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const data = result(await upload(taskId, rotated, '', 'image/jpeg'));
    expect(data.frame).toEqual({ height: 640, width: 480, id: 1 });
  });

  it('counts only the objects whose foot point lies in the polygon', async () => {
    const left = [
      [0, 0],
      [320, 0],
      [320, 480],
      [0, 480],
    ];
    const taskId = await startTask({ app_configs: [{ app_id: 'person', polygon: left }] });
    const persons = objectsOf(result(await upload(taskId, BASKETBALL)), 'person:0');
    expect(persons).toHaveLength(1);
    expect(persons[0]?.x).toBeLessThan(200);
  });

  it('keeps the rule interval across images by the task clock, and sends no callback for an empty result', async () => {
    const taskId = await startTask({ report_url: receiver.url });
    const fired = async () => result(await upload(taskId, BASKETBALL)).rules.length > 0;
    const history = [await fired()];
    t.advance(1000);
    history.push(await fired());
    t.advance(3999);
    history.push(await fired());
    t.advance(1000);
    history.push(await fired());
    // interval 5 s: fires at 0 and 5.999 s, not at 1 s or 4.999 s.
    expect(history).toEqual([true, false, false, true]);
    await receiver.waitFor('two callbacks', () => messagesOf(taskId).length >= 2);
    await new Promise((done) => setTimeout(done, 300));
    expect(messagesOf(taskId).map((m) => m.data.image_id)).toEqual([1, 4]);
  });

  it('enhance=1 recovers persons a low-light image hides from the plain run', async () => {
    const taskId = await startTask({});
    const dark = await darkened(0.05, 1, 7919);
    const plain = objectsOf(result(await upload(taskId, dark)), 'person:0');
    t.advance(1000);
    const enhanced = objectsOf(result(await upload(taskId, dark, '?enhance=1')), 'person:0');
    expect(plain).toHaveLength(0);
    expect(enhanced.length).toBeGreaterThanOrEqual(1);
    for (const person of enhanced) expect(person.score).toBeGreaterThanOrEqual(PERSON_THRESHOLD);
  });
});

describe('part 3 timing of image tasks', () => {
  it('refuses an image less than 1 s after the previous one (42901), not queued', async () => {
    const taskId = await startTask({});
    result(await upload(taskId, BASKETBALL));
    t.advance(999);
    expectError(await upload(taskId, BASKETBALL), 'IMAGE_TOO_SOON', 'at least 1 s apart');
    t.advance(1);
    expect(result(await upload(taskId, BASKETBALL)).image_id).toBe(2);
  });

  it('closes after 5 min without an image (close_code 3); every image restarts the idle timer', async () => {
    const taskId = await startTask({});
    t.advance(4 * 60_000);
    result(await upload(taskId, BASKETBALL));
    t.advance(5 * 60_000 - 1);
    expect((await t.call('GET', `/api/task/${taskId}`)).body.data).toMatchObject({ close_code: 0 });
    t.advance(1);
    expect((await t.call('GET', `/api/task/${taskId}`)).body.data).toMatchObject({
      status: 'closed',
      close_code: 3,
    });
    expectError(await upload(taskId, BASKETBALL), 'TASK_CLOSED');
  });

  it('refuses broken and unwanted images clearly and without any effect, not even on the 1 s timer', async () => {
    const taskId = await startTask({});
    result(await upload(taskId, BASKETBALL));
    // 1 s later: each image is looked at (the 1 s rule comes before decoding).
    t.advance(1000);
    const jpeg = await sharp(BASKETBALL).jpeg().toBuffer();
    const bomb = await sharp({ create: { width: 12_000, height: 9_000, channels: 3, background: '#000' } })
      .png({ compressionLevel: 9 })
      .toBuffer();
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const refusals: Array<[Answer, keyof typeof ERRORS, string]> = [
      [
        await upload(taskId, BASKETBALL.subarray(0, 40_000)),
        'INVALID_IMAGE',
        'body.image: the PNG image cannot be decoded',
      ],
      [await upload(taskId, jpeg.subarray(0, jpeg.length >> 1), '', 'image/jpeg'), 'INVALID_IMAGE', 'JPEG'],
      [
        await upload(
          taskId,
          Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(5000, 0x5a)]),
          '',
          'image/jpeg',
        ),
        'INVALID_IMAGE',
        'JPEG',
      ],
      [await upload(taskId, new Uint8Array(0)), 'INVALID_PARAMETER', 'body.image: is empty'],
      [
        await upload(taskId, await sharp(BASKETBALL).gif().toBuffer()),
        'UNSUPPORTED_IMAGE_TYPE',
        'not a JPEG, PNG, BMP or WebP',
      ],
      [await upload(taskId, bomb), 'IMAGE_TOO_LARGE', '12000x9000 (108.0 megapixels)'],
      [await upload(taskId, new Uint8Array(21 * 1024 * 1024), '', 'image/jpeg'), 'BODY_TOO_LARGE', '20 MiB'],
    ];
    for (const [answer, kind, msg] of refusals) expectError(answer, kind, msg);
    // None of them was admitted, or the next good image would come too soon after it.
    expect(result(await upload(taskId, BASKETBALL)).image_id).toBe(2);
  });
});

describe('image task with the built-in motion app', () => {
  it('reports what changed since the previous image, nothing on the first', async () => {
    const answer = await t.call('POST', '/api/task', {
      json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] },
    });
    const taskId = (answer.body.data as { task_id: string }).task_id;
    const patch = await sharp(BASKETBALL)
      .extract({ left: 300, top: 150, width: 80, height: 100 })
      .negate()
      .toBuffer();
    const changed = await sharp(BASKETBALL)
      .composite([{ input: patch, left: 200, top: 300 }])
      .png()
      .toBuffer();
    expect(result(await t.call('POST', `/api/task/${taskId}/image`, raw(BASKETBALL))).rules).toEqual([]);
    t.advance(1000);
    const objects = objectsOf(
      result(await t.call('POST', `/api/task/${taskId}/image`, raw(changed))),
      'motion:0',
    );
    expect(objects).toHaveLength(1);
    const [region] = objects as [Obj];
    expect(Math.abs(region.x - 240)).toBeLessThanOrEqual(4);
    expect(Math.abs(region.y - 350)).toBeLessThanOrEqual(4);
    expect(Math.abs(region.w - 80)).toBeLessThanOrEqual(8);
    expect(Math.abs(region.h - 100)).toBeLessThanOrEqual(8);
    expect(region.area).toBeGreaterThan(0.5 * 80 * 100);
  });
});

describe('flow counting on images', () => {
  // Last: a counter cannot be removed from a rule again (4.3).
  it('counts the distinct objects of each image, not a running total', async () => {
    const answer = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
      json: {
        rule: {
          interval: 0,
          counter: { numeric_type: 1, distance: 0, min_count: 2, max_count: 0, class_counts: [] },
        },
      },
    });
    expect(answer.body.code).toBe(0);
    const taskId = await startTask({});
    const counts = [];
    for (let i = 0; i < 3; i++) {
      const data = result(await upload(taskId, BASKETBALL));
      counts.push(data.rules.map((rule) => [rule.id, rule.count, rule.objects.length]));
      t.advance(1000);
    }
    expect(counts).toEqual([
      [['person:counter', 2, 2]],
      [['person:counter', 2, 2]],
      [['person:counter', 2, 2]],
    ]);
  });
});

async function setPersonInterval(seconds: number): Promise<void> {
  const answer = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
    json: { rule: { interval: seconds } },
  });
  expect(answer.body.code).toBe(0);
}

function messagesOf(taskId: string): Message[] {
  return receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);
}
