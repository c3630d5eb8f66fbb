import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallbackBody } from '../engine/events/schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { compileCheck } from '../engine/schema/ajv';
import { FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { installExamplePackage } from './helpers/example-package';
import { Receiver } from './helpers/receiver';

/**
 * A left object end to end on a synthetic clip the fixture model really sees: a grey 640x480 scene
 * at 10 fps where, at 2 s, a bicycle cropped from leuvenB.jpg (doubled to 140x150, which the model
 * finds at 0.87 on a still frame) appears at x 250..390 with a person cropped from basketball1.png
 * (260 px tall, found at 0.87) standing beside it at x 400; at 4 s the person walks off to the right at
 * 120 px/s and leaves the frame by 6 s; the bicycle stays to the end (14 s).
 *
 * The rule: bicycles left for 4 s with nobody within 1 person height. The person's foot point is 127
 * px from the bicycle's at first, so they are near until their foot is a height (about 255 px) away:
 * 127 + 120 (t - 4) = 255 at t = 5.07 s. The bicycle is therefore left from 5.1 s and fires at 9.1 s of
 * the clip, with `left` 4.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;
const checkBody = compileCheck(CallbackBody, 'callback');
const FPS = 10;
const SECONDS = 4;
const FIRES_AT = 9.1;

let t: TestEngine;
let receiver: Receiver;
let dir: string;
let clip: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-left-'));
  clip = join(dir, 'left.mp4');
  execFileSync(findFfmpeg(), [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', `color=c=0x707070:s=640x480:r=${FPS}:d=14`],
    ...['-i', join(FIXTURES, 'media', 'leuvenB.jpg')],
    ...['-i', join(FIXTURES, 'media', 'basketball1.png')],
    ...[
      '-filter_complex',
      '[1:v]crop=70:75:132:395,scale=140:150[bike];' +
        '[2:v]crop=145:400:30:80,scale=-2:260[person];' +
        "[0:v][bike]overlay=x=250:y=250:enable='gte(t,2)'[scene];" +
        "[scene][person]overlay=x='if(lt(t,4),400,400+120*(t-4))':y=140:enable='between(t,2,7)'",
    ],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '10', clip],
  ]);
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('left objects on a video', () => {
  it('fires once for the bicycle the person walked away from, within 1 s of the time stated, left 4 s', async () => {
    const bicycle = {
      class_id: '1',
      name: 'bicycle',
      color: '#ff9500',
      threshold: 0.5,
      min_pixel: 0,
      max_pixel: 0,
    };
    const updated = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/loiter', {
      json: { rule: { classes: [bicycle], left_object: { seconds: SECONDS, radius: 1 } } },
    });
    expect(updated.body.code).toBe(0);
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['loiter'], video_url: clip, report_url: receiver.url },
    });
    expect(started.body.code).toBe(0);
    const taskId = (started.body.data as { task_id: string }).task_id;
    const left = () =>
      receiver.accepted
        .map((r) => r.body as CallbackBody)
        .filter((b): b is Message => b.event === 'message' && b.task_id === taskId)
        .filter((m) => m.data.frame.id <= 14 * FPS)
        .flatMap((m) =>
          m.data.rules
            .filter((r) => r.id === 'loiter:1')
            .flatMap((r) => r.objects.map((o) => ({ at: (m.data.frame.id - 1) / FPS, o }))),
        );
    await receiver.waitFor('the left bicycle', () => left().length >= 1, 60_000);
    // The clip's first pass ends 5 s after it fires: nothing else of it may fire meanwhile.
    await new Promise((done) => setTimeout(done, 6_000));
    await t.call('DELETE', `/api/task/${taskId}`);
    for (const message of receiver.accepted.map((r) => r.body)) {
      const checked = checkBody(message);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
    }
    const found = left();
    console.log(
      found.map(({ at, o }) => `${o.name} #${o.track_id} at ${at.toFixed(1)} s, left ${o.left} s`).join(', '),
    );
    expect(found).toHaveLength(1);
    const [{ at, o }] = found as [(typeof found)[number]];
    expect(Math.abs(at - FIRES_AT)).toBeLessThanOrEqual(1);
    expect(o).toEqual({
      track_id: expect.any(String),
      // The crop's bicycle, as the model boxes it: x 250..390, the lower part of y 250..400.
      x: expect.closeTo(320, -1.5),
      y: expect.closeTo(340, -1.5),
      w: expect.any(Number),
      h: expect.any(Number),
      score: expect.any(Number),
      class_id: '1',
      name: 'bicycle',
      dwell: expect.any(Number),
      state: 'stationary',
      // Fired on the first frame left for 4 s or more: 4.0, or 4.1 after a frame dropped.
      left: expect.closeTo(SECONDS, 0.5),
    });
  }, 120_000);
});
