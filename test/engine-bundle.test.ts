import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildZapk } from '../engine/packages/zapk';
import {
  BUILT_ENGINE,
  callApi,
  type EngineProcess,
  signIn,
  spawnEngine,
  stopEngine,
} from './helpers/engine-process';
import { eventually } from './helpers/eventually';
import { EXAMPLE_MANIFEST } from './helpers/example-package';
import { VIDEO } from './helpers/fixtures';

/**
 * The engine users start (`npm run engine`, scripts/start.sh) is the bundle of `npm run build`, not
 * tsx over the sources: it finds the built-in package, its inference host and the console from where
 * it is, and --install sets up a package at start once (checked by a model-check process of the bundle).
 */

const PASSWORD = 'bundle-admin-password';
const work = mkdtempSync(join(tmpdir(), 'vc-bundle-'));
let engine: EngineProcess | undefined;

afterAll(async () => {
  await stopEngine(engine);
  rmSync(work, { recursive: true, force: true });
});

interface Listed {
  zapk_id: string;
  version: string;
}

describe('the bundled engine', () => {
  it('starts with the built-in and an --install package, runs a video task, and installs the package once', async () => {
    expect(
      existsSync(resolve(import.meta.dirname, '..', BUILT_ENGINE)),
      'npm run build before this test',
    ).toBe(true);
    const zapk = join(work, 'example.zapk');
    await buildZapk(EXAMPLE_MANIFEST, zapk);
    const dataDir = join(work, 'data');
    const start = () => spawnEngine(dataDir, PASSWORD, ['--install', zapk], [], BUILT_ENGINE);

    engine = await start();
    const token = await signIn(engine.url, PASSWORD);
    const packages = await callApi<Listed[]>(engine.url, token, 'GET', '/api/zapk');
    expect(packages.map(({ zapk_id, version }) => ({ zapk_id, version }))).toEqual([
      { zapk_id: 'builtin', version: '1.0.0' },
      { zapk_id: 'coco-yolox-nano', version: '1.0.0' },
    ]);
    expect(engine.output()).toContain('installed package coco-yolox-nano 1.0.0');
    // The inference host of the bundle analyses the first video task.
    const { task_id } = await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      video_url: VIDEO,
    });
    await eventually('frames analysed by the bundled inference host', async () => {
      const { dump } = await callApi<{ dump: string }>(
        engine?.url ?? '',
        token,
        'GET',
        `/api/task/${task_id}`,
      );
      return Number(/(\d+) frames analysed/.exec(dump)?.[1] ?? 0) > 0;
    });
    await callApi(engine.url, token, 'DELETE', `/api/task/${task_id}`);
    await stopEngine(engine);

    // Started again with the same file: nothing to install.
    engine = await start();
    await eventually('the listing', () => engine?.output().includes('engine listening on'));
    expect(engine.output()).not.toContain('installed package');
  }, 120_000);
});
