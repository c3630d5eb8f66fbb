import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { OnnxModelRef } from '../../engine/inference/protocol';
import type { Manifest, ModelSpec } from '../../engine/packages/manifest';
import { buildZapk } from '../../engine/packages/zapk';
import type { TestEngine } from './engine';
import { FIXTURES } from './fixtures';

/** The example package for the fixture model (examples/coco-yolox-nano), as tests install and run it. */
export const EXAMPLE_MANIFEST = resolve(import.meta.dirname, '../../examples/coco-yolox-nano/manifest.json');

const manifest = JSON.parse(readFileSync(EXAMPLE_MANIFEST, 'utf8')) as Manifest;

/** The fixture model with the manifest's own pre- and post-processing, for running it directly. */
export const FIXTURE_MODEL: OnnxModelRef = {
  key: 'fixture#yolox-nano',
  file: join(FIXTURES, 'models', 'yolox_nano.onnx'),
  spec: manifest.models['yolox-nano'] as ModelSpec,
};

/** Builds the example .zapk and installs it through POST /api/zapk; resolves to the HTTP status. */
export function installExamplePackage(t: TestEngine): Promise<number> {
  return installPackage(t, EXAMPLE_MANIFEST);
}

/** Builds the .zapk of the manifest at `manifestPath` and installs it through POST /api/zapk; resolves to the HTTP status. */
export async function installPackage(t: TestEngine, manifestPath: string): Promise<number> {
  const zapk = join(mkdtempSync(join(tmpdir(), 'vc-example-')), 'example.zapk');
  await buildZapk(manifestPath, zapk);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(zapk)]), 'example.zapk');
  return (await t.call('POST', '/api/zapk', { raw: { type: '', body: form } })).status;
}
