import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { InferencePool } from '../engine/inference/pool';
import type { HostRequest } from '../engine/inference/protocol';
import { RequestReader, requestHead } from '../engine/inference/request-stream';
import type { Frame } from '../engine/vision/types';
import { FIXTURE_MODEL } from './helpers/example-package';
import { FIXTURES } from './helpers/fixtures';

const MODEL = FIXTURE_MODEL;

async function basketball(): Promise<Frame> {
  const { data, info } = await sharp(join(FIXTURES, 'media', 'basketball1.png'))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  // A view into a larger buffer, as frames cut from a pipe are: the pool must cope.
  const padded = new Uint8Array(data.length + 16);
  padded.set(data, 8);
  return { data: padded.subarray(8, 8 + data.length), width: info.width, height: info.height };
}

describe('inference pool (host processes, real onnxruntime)', () => {
  const pool = new InferencePool({ workers: 2, intraOpThreads: 1 });
  afterAll(() => pool.close());

  it('finds the two players of basketball1.png off the main thread and hands the pixels back', async () => {
    const frame = await basketball();
    const copy = Buffer.from(frame.data);
    const result = await pool.detect(MODEL, frame);
    const persons = result.detections.filter((d) => d.classIndex === 0);
    expect(persons).toHaveLength(2);
    for (const person of persons) expect(person.score).toBeGreaterThan(0.8);
    expect(result.frame.width).toBe(640);
    expect(Buffer.from(result.frame.data).equals(copy)).toBe(true);
    expect(result.timing.inferenceMs).toBeGreaterThan(0);
  });

  it('takes a frame in shared memory and hands back the same frame, with the same detections', async () => {
    const plain = await basketball();
    const shared = { ...plain, data: new Uint8Array(new SharedArrayBuffer(plain.data.byteLength)) };
    shared.data.set(plain.data);
    const [fromShared, fromPlain] = await Promise.all([
      pool.detect(MODEL, shared),
      pool.detect(MODEL, plain),
    ]);
    expect(fromShared.frame).toBe(shared);
    expect(shared.data.byteLength).toBe(640 * plain.height * 3);
    expect(JSON.stringify(fromShared.detections)).toBe(JSON.stringify(fromPlain.detections));
    expect(fromShared.detections.filter((d) => d.classIndex === 0)).toHaveLength(2);
  });

  it('serves concurrent frames on both hosts with identical results, and says when a host is idle', async () => {
    const frames = await Promise.all([basketball(), basketball(), basketball(), basketball()]);
    expect(pool.idle).toBe(true);
    const first = pool.detect(MODEL, frames[0] as Frame);
    // One host busy, the other free.
    expect(pool.idle).toBe(true);
    const rest = frames.slice(1).map((frame) => pool.detect(MODEL, frame));
    expect([pool.idle, pool.queued]).toEqual([false, 2]);
    const results = await Promise.all([first, ...rest]);
    expect(pool.idle).toBe(true);
    const boxes = results.map((r) => JSON.stringify(r.detections));
    expect(new Set(boxes).size).toBe(1);
    expect(pool.completed).toBeGreaterThanOrEqual(5);
  });

  it('serves waiting frames by when they arrived, not by when they were sent, equal ones in turn', async () => {
    const one = new InferencePool({ workers: 1, intraOpThreads: 1 });
    try {
      const frame = await basketball();
      await one.detect(MODEL, frame);
      const served: string[] = [];
      const send = (name: string, due?: number) =>
        one.detect(MODEL, frame, due).then(() => served.push(name));
      const now = performance.now();
      // The first takes the only host; the rest wait, sent in this order.
      const all = [
        send('running'),
        send('sent now'),
        send('arrived 400 ms ago', now - 400),
        send('sent now, second'),
        send('arrived 900 ms ago', now - 900),
        send('arrived 400 ms ago, second', now - 400),
      ];
      expect(one.queued).toBe(5);
      await Promise.all(all);
      expect(served).toEqual([
        'running',
        'arrived 900 ms ago',
        'arrived 400 ms ago',
        'arrived 400 ms ago, second',
        'sent now',
        'sent now, second',
      ]);
    } finally {
      await one.close();
    }
  });

  it('checks a model against its manifest entry and labels before a package is accepted', async () => {
    const input = MODEL.spec.input;
    if (!input) throw new Error('the example model has an input spec');
    expect(await pool.checkModel(MODEL, 80)).toBeNull();
    expect(await pool.checkModel(MODEL, 3)).toBe('scores 80 classes, but the package lists 3 labels for it');
    const smaller = { ...MODEL, spec: { ...MODEL.spec, input: { ...input, width: 320, height: 320 } } };
    expect(await pool.checkModel(smaller, 80)).toMatch(/invalid dimensions.*Got: 320 Expected: 416/is);
    const yolov5 = { ...MODEL, spec: { ...MODEL.spec, family: 'yolov5' as const } };
    expect(await pool.checkModel(yolov5, 80)).toBeNull();
    const yolov8 = { ...MODEL, spec: { ...MODEL.spec, family: 'yolov8' as const } };
    expect(await pool.checkModel(yolov8, 80)).toBe(
      'scores 81 classes, but the package lists 80 labels for it',
    );
    const missing = { ...MODEL, file: join(FIXTURES, 'models', 'no-such-model.onnx') };
    expect(await pool.checkModel(missing, 80)).toMatch(/no-such-model|No such file|Load model/i);
  });

  it('a model that cannot load fails its frames with the reason, and the pool keeps working', async () => {
    const broken = { ...MODEL, key: 'missing', file: join(FIXTURES, 'models', 'no-such-model.onnx') };
    await expect(pool.detect(broken, await basketball())).rejects.toThrow(
      /no-such-model|No such file|Load model/i,
    );
    const result = await pool.detect(MODEL, await basketball());
    expect(result.detections.filter((d) => d.classIndex === 0)).toHaveLength(2);
  });

  it('closing with frames in flight lets them finish and ends every host cleanly', async () => {
    const busy = new InferencePool({ workers: 2 });
    const frames = await Promise.all([basketball(), basketball(), basketball()]);
    // Both hosts started and loaded the model, so the frames in flight take milliseconds.
    await Promise.all([busy.detect(MODEL, frames[0] as Frame), busy.detect(MODEL, frames[1] as Frame)]);
    const settled = Promise.allSettled(frames.map((frame) => busy.detect(MODEL, frame)));
    await busy.close();
    const outcomes = await settled;
    // What was running completed; what still waited was refused; none was lost silently.
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') expect(outcome.value.detections.length).toBeGreaterThan(0);
      else expect(String(outcome.reason)).toMatch(/closed/);
    }
  });

  it('a closed pool refuses work', async () => {
    const closed = new InferencePool({ workers: 1 });
    await closed.close();
    await expect(closed.detect(MODEL, await basketball())).rejects.toThrow(/closed/);
  });
});

describe('request stream to an inference host', () => {
  it('reads requests split at any byte whole and in order, pixels in place', () => {
    const pixels = Uint8Array.from({ length: 2 * 3 * 3 }, (_, i) => i + 1);
    const detect: HostRequest = {
      id: 1,
      kind: 'detect',
      model: MODEL,
      width: 3,
      height: 2,
      bytes: pixels.length,
    };
    const check: HostRequest = { id: 2, kind: 'check', model: MODEL, labels: 80 };
    const stream = Buffer.concat([
      requestHead(detect),
      pixels,
      requestHead(check),
      requestHead(detect),
      pixels,
    ]);
    for (const readSize of [1, 3, 7, 64, stream.length]) {
      const received: Array<[HostRequest, number[]]> = [];
      const reader = new RequestReader((request, bytes) => received.push([request, [...bytes]]));
      for (let at = 0; at < stream.length; ) {
        const target = reader.target();
        const count = Math.min(target.length, readSize, stream.length - at);
        target.set(stream.subarray(at, at + count));
        reader.advance(count);
        at += count;
      }
      expect(received).toEqual([
        [detect, [...pixels]],
        [check, []],
        [detect, [...pixels]],
      ]);
    }
  });

  it('refuses a stream out of step', () => {
    const reader = new RequestReader(() => undefined);
    reader.target().set([0xff, 0xff, 0xff, 0x7f]);
    expect(() => reader.advance(4)).toThrow(/request head of \d+ bytes/);
  });
});
