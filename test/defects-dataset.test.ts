import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetZip } from '../engine/optimization/dataset';
import type { RunRow, SampleRow } from '../engine/optimization/optimization-repository';
import type { Annotation } from '../engine/optimization/schema';
import { readZip } from './helpers/coco';
import { FIXTURES } from './helpers/fixtures';

/*
 * Defect 11 of issue 16, the exported dataset: samples of the same frame are one image (by content),
 * and data.yaml names a train and a val folder holding different images, split the same way each time.
 */

const dir = mkdtempSync(join(tmpdir(), 'vc-defects-dataset-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = {
  optimization_id: 'run-1',
  task_id: 'task-1',
  app_ids: ['person'],
  created_at: Date.UTC(2026, 0, 1),
} as RunRow;

const box = (x: number, hard: boolean): Annotation => ({
  class_id: '0',
  label: 'person',
  score: 0.5,
  bbox: [x, 10, 20, 40],
  track_id: null,
  hard,
  verdict: 'none',
});

const sample = (id: number, annotations: Annotation[]): SampleRow =>
  ({
    sample_id: id,
    app_id: 'person',
    frame_id: id,
    timestamp: run.created_at + id,
    width: 768,
    height: 576,
    annotations,
    missed: [],
    verdict: 'none',
  }) as unknown as SampleRow;

const imagePath = (id: number) => join(dir, `${id}.jpg`);

async function exported(samples: SampleRow[]): Promise<Map<string, Buffer>> {
  return readZip(await buffer(datasetZip(run, samples, imagePath, () => ['person'])));
}

describe('exported dataset', () => {
  it('holds each frame once, with the detections of every sample of it, split into train and val', async () => {
    // Samples 1 and 2 are the same frame (two hard detections of it); 3 to 12 are other frames.
    copyFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'), imagePath(1));
    copyFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'), imagePath(2));
    for (let id = 3; id <= 12; id += 1) writeFileSync(imagePath(id), `frame ${id}`);
    const samples = [sample(1, [box(1, true), box(50, false)]), sample(2, [box(1, false), box(50, true)])];
    for (let id = 3; id <= 12; id += 1) samples.push(sample(id, [box(id, true)]));

    const files = await exported(samples);
    const images = [...files.keys()].filter((name) => name.startsWith('images/')).sort();
    expect(images).toHaveLength(11);
    expect(images.some((name) => name.endsWith('/000002.jpg'))).toBe(false);
    const train = images.filter((name) => name.startsWith('images/train/'));
    const val = images.filter((name) => name.startsWith('images/val/'));
    expect(train.length + val.length).toBe(11);
    expect(train.length).toBeGreaterThan(0);
    expect(val.length).toBeGreaterThan(0);
    const yaml = (files.get('data.yaml') as Buffer).toString('utf8');
    expect(yaml).toContain('\ntrain: images/train\nval: images/val\n');

    const coco = JSON.parse((files.get('annotations.json') as Buffer).toString('utf8')) as {
      images: Array<{ id: number; file_name: string }>;
      annotations: Array<{ image_id: number; bbox: number[] }>;
    };
    expect(coco.images.map((image) => `images/${image.file_name}`).sort()).toEqual(images);
    expect(coco.annotations.filter((a) => a.image_id === 1).map((a) => a.bbox)).toEqual([
      [1, 10, 20, 40],
      [50, 10, 20, 40],
    ]);
    const labelsOf1 = [...files.keys()].find((name) => name.endsWith('/000001.txt')) as string;
    expect((files.get(labelsOf1) as Buffer).toString('utf8').trim().split('\n')).toHaveLength(2);

    // The same frames split the same way again.
    const again = [...(await exported(samples)).keys()].filter((name) => name.startsWith('images/')).sort();
    expect(again).toEqual(images);
  });

  it('leaves out the detections judged wrong and adds the objects marked missed', async () => {
    copyFileSync(join(FIXTURES, 'media', 'leuvenB.jpg'), imagePath(20));
    const judged = {
      ...sample(20, [
        { ...box(1, true), verdict: 'wrong' },
        { ...box(50, true), verdict: 'right' },
      ]),
      missed: [{ class_id: '0', label: 'person', bbox: [300, 200, 30, 60] }],
    } as SampleRow;
    const coco = JSON.parse(
      ((await exported([judged])).get('annotations.json') as Buffer).toString('utf8'),
    ) as { annotations: Array<{ bbox: number[]; attributes: { source: string } }> };
    expect(coco.annotations.map((a) => [a.bbox, a.attributes.source])).toEqual([
      [[50, 10, 20, 40], 'model'],
      [[300, 200, 30, 60], 'operator'],
    ]);
  });
});
