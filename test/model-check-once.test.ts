import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { CheckCancelledError, ChecksBusyError } from '../engine/inference/checker';
import { InferencePool } from '../engine/inference/pool';
import type { OnnxModelRef } from '../engine/inference/protocol';
import type { Manifest, ModelSpec } from '../engine/packages/manifest';
import { PackagesRepository } from '../engine/packages/packages-repository';
import { PackageRegistry } from '../engine/packages/registry';
import { openDb } from '../engine/store/db';
import { inferenceChildren, isAlive } from './helpers/child';
import { FIXTURES, startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { FIXTURE_MODEL, installExamplePackage } from './helpers/example-package';
import { endlessLoopModel } from './helpers/onnx-models';
import { onnxManifest, rawZip } from './helpers/zip-fixtures';

/**
 * Issue 31, item 6: a package whose manifest lists one model file many times costs one model check,
 * and an install whose client goes away gives its check up (the check's process killed, its place
 * in the check queue freed), so abandoned uploads cannot shut every other install out with 50303.
 * Real checks throughout: the fixture YOLOX model and an endless ONNX Loop, each loaded and run in
 * the check's own process.
 */

const work = mkdtempSync(join(tmpdir(), 'vc-check-once-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const NANO = readFileSync(join(FIXTURES, 'models', 'yolox_nano.onnx'));
const COCO_LABELS = readFileSync(join(FIXTURES, 'models', 'coco-labels.txt'));
const LOOP_LABELS = Buffer.from('person\ncar\ntruck\n');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * A package whose models are `entries` (model id -> file in the archive, RGB input or not), all YOLOX with
 * the same labels, the app running the first; `files` are the archive's model files.
 */
function zapkOf(
  zapkId: string,
  entries: Record<string, { file: string; rgb?: boolean }>,
  files: Record<string, Buffer>,
  labels: Buffer,
): string {
  const manifest: Manifest = onnxManifest();
  manifest.zapk_id = zapkId;
  const base = manifest.models.detector as ModelSpec;
  manifest.models = Object.fromEntries(
    Object.entries(entries).map(([id, { file, rgb }]) => {
      const input = { ...(base.input as NonNullable<ModelSpec['input']>) };
      if (rgb) input.channel_order = 'RGB';
      return [id, { ...base, file, sha256: sha256(files[file] as Buffer), input }];
    }),
  );
  const app = manifest.apps[0] as Manifest['apps'][number];
  app.model = Object.keys(entries)[0] as string;
  const path = join(work, `${zapkId}.zapk`);
  writeFileSync(
    path,
    rawZip([
      { name: 'manifest.json', data: JSON.stringify(manifest), deflate: true },
      ...Object.entries(files).map(([name, data]) => ({ name, data, deflate: true })),
      { name: 'labels/labels.txt', data: labels },
    ]),
  );
  return path;
}

describe('one check per distinct model', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vc-check-once-data-'));
  const db = openDb(dataDir);
  const pool = new InferencePool({ workers: 1 });
  /** Every check the registry asked for, by model name: the counter the test reads. */
  const checked: string[] = [];
  const registry = new PackageRegistry(
    new PackagesRepository(db),
    new ManualClock(),
    dataDir,
    () => false,
    (model, labels, signal) => {
      checked.push(model.name);
      return pool.checkModel(model, labels, signal);
    },
  );
  afterAll(async () => {
    await pool.close();
    db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('checks eight entries of one file, and a copy of it, once; another input spec is another check', async () => {
    const entries: Record<string, { file: string; rgb?: boolean }> = {};
    for (let i = 0; i < 8; i++) entries[`same-${i}`] = { file: 'models/nano.onnx' };
    entries.copy = { file: 'models/copy.onnx' };
    entries.rgb = { file: 'models/nano.onnx', rgb: true };
    const path = zapkOf(
      'many-entries',
      entries,
      { 'models/nano.onnx': NANO, 'models/copy.onnx': NANO },
      COCO_LABELS,
    );
    const change = await registry.installZapk(path);
    expect(change).toMatchObject({ zapk_id: 'many-entries', change: 'installed' });
    expect(checked).toEqual(['many-entries/same-0', 'many-entries/rgb']);
  }, 120_000);

  it('refuses every entry of a shared file with the problem of its one check', async () => {
    checked.length = 0;
    const entries = { first: { file: 'models/nano.onnx' }, second: { file: 'models/nano.onnx' } };
    // 3 labels for an 80-class model: the check's problem, found once.
    const path = zapkOf('wrong-labels', entries, { 'models/nano.onnx': NANO }, LOOP_LABELS);
    await expect(registry.installZapk(path)).rejects.toThrow(
      'manifest.models.first: the model scores 80 classes, but the package lists 3 labels for it',
    );
    expect(checked).toEqual(['wrong-labels/first']);
  }, 60_000);
});

describe('cancelling a check', () => {
  it('an aborted check leaves the queue or has its process killed, and the next check runs at once', async () => {
    const pool = new InferencePool({ workers: 1, checkDeadlineMs: 120_000, maxWaitingChecks: 1 });
    try {
      const file = join(work, 'endless.onnx');
      writeFileSync(file, endlessLoopModel());
      const endless: OnnxModelRef = {
        key: 'endless',
        file,
        spec: onnxManifest().models.detector as ModelSpec,
      };
      const running = new AbortController();
      const waiting = new AbortController();
      const first = pool.checkModel(endless, 3, running.signal);
      const second = pool.checkModel(endless, 3, waiting.signal);
      first.catch(() => undefined);
      second.catch(() => undefined);
      await expect(pool.checkModel(endless, 3)).rejects.toBeInstanceOf(ChecksBusyError);
      const [checker] = await eventually('the check process', () => {
        const pids = inferenceChildren(process.pid);
        return pids.length > 0 && pids;
      });

      waiting.abort();
      await expect(second).rejects.toBeInstanceOf(CheckCancelledError);
      // Its place is free: another check may wait behind the running one.
      const third = pool.checkModel(FIXTURE_MODEL, 80);
      running.abort();
      await expect(first).rejects.toBeInstanceOf(CheckCancelledError);
      await eventually('the endless check killed', () => !isAlive(checker));
      expect(await third).toBeNull();
      // An install already abandoned asks for no check at all.
      await expect(pool.checkModel(FIXTURE_MODEL, 80, AbortSignal.abort())).rejects.toBeInstanceOf(
        CheckCancelledError,
      );
    } finally {
      await pool.close();
    }
    expect(inferenceChildren(process.pid)).toEqual([]);
  }, 60_000);
});

describe('POST /api/zapk abandoned during its model checks', () => {
  let t: TestEngine;
  beforeAll(async () => {
    // Checks that would run for a minute each: only a cancelled one ends in time for this test.
    t = await startTestEngine(undefined, undefined, { inference: { workers: 1, checkDeadlineMs: 60_000 } });
  });
  afterAll(() => t?.stop());

  function upload(path: string, signal: AbortSignal): Promise<Response> {
    const form = new FormData();
    form.append('file', new Blob([readFileSync(path)]), 'package.zapk');
    return fetch(`${t.engine.url}/api/zapk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}` },
      body: form,
      signal,
    });
  }

  it('three uploads of many endless entries, abandoned at once, leave the next install free to succeed', async () => {
    const endless = endlessLoopModel();
    const entries = Object.fromEntries(
      Array.from({ length: 4 }, (_, i) => [`loop-${i}`, { file: 'models/loop.onnx' }]),
    );
    const clients = ['a', 'b', 'c'].map((name) => ({
      path: zapkOf(`abandoned-${name}`, entries, { 'models/loop.onnx': endless }, LOOP_LABELS),
      client: new AbortController(),
    }));
    const sent = clients.map(({ path, client }) => upload(path, client.signal).catch(() => 'aborted'));
    // The first check runs (its process is there); the other two uploads wait behind it.
    await eventually('the first check process', () => inferenceChildren(process.pid).length > 0);
    await new Promise((done) => setTimeout(done, 1_500));
    for (const { client } of clients) client.abort();
    expect(await Promise.all(sent)).toEqual(['aborted', 'aborted', 'aborted']);

    await eventually('every check process gone', () => inferenceChildren(process.pid).length === 0, 15_000);
    expect(await installExamplePackage(t)).toBe(200);
    // Nothing of the abandoned packages installed or left on disk.
    const listed = (await t.call('GET', '/api/zapk')).body.data as Array<{ zapk_id: string }>;
    expect(listed.map((pkg) => pkg.zapk_id).sort()).toEqual(['builtin', 'coco-yolox-nano']);
    expect(readdirSync(join(t.dataDir, 'packages')).filter((name) => name.startsWith('abandoned'))).toEqual(
      [],
    );
    await eventually('the uploads removed', () => readdirSync(join(t.dataDir, 'tmp')).length === 0);
  }, 90_000);
});
