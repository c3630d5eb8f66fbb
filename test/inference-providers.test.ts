import { afterAll, describe, expect, it } from 'vitest';
import type { SystemInfo } from '../engine/contract/health';
import { openOnProvider, providerCandidates } from '../engine/inference/providers';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';

/**
 * Where models run. The GPU providers cannot run on this machine (no GPU, and onnxruntime-node's CUDA
 * libraries are an install-time download): what is tested here is the choice of providers and the
 * fallback to the CPU, with the real onnxruntime refusing the missing CUDA provider.
 */

describe('which providers a setting tries', () => {
  it('auto is the GPU path each platform has, then the CPU; a named one falls back to the CPU', () => {
    expect(providerCandidates('auto', 'win32', 'x64', false)).toEqual(['directml', 'cpu']);
    expect(providerCandidates('auto', 'darwin', 'arm64', false)).toEqual(['coreml', 'cpu']);
    expect(providerCandidates('auto', 'linux', 'x64', true)).toEqual(['cuda', 'cpu']);
    expect(providerCandidates('auto', 'linux', 'x64', false)).toEqual(['cpu']);
    expect(providerCandidates('auto', 'linux', 'arm64', true)).toEqual(['cpu']);
    expect(providerCandidates('cpu', 'win32', 'x64', true)).toEqual(['cpu']);
    expect(providerCandidates('tensorrt', 'linux', 'x64', false)).toEqual(['tensorrt', 'cuda', 'cpu']);
    expect(providerCandidates('directml', 'linux', 'x64', false)).toEqual(['directml', 'cpu']);
  });

  it('opens on the first provider that takes the model, and says why the better ones did not', async () => {
    const tried: string[] = [];
    const create = async (name: string) => {
      tried.push(name);
      if (name !== 'cpu') throw new Error(`${name}: Failed to load shared library\nmore detail`);
      return 'session';
    };
    expect(await openOnProvider(['tensorrt', 'cuda', 'cpu'], create)).toEqual({
      session: 'session',
      provider: 'cpu',
      fallback:
        'tensorrt unavailable: tensorrt: Failed to load shared library; cuda unavailable: cuda: Failed to load shared library',
    });
    expect(tried).toEqual(['tensorrt', 'cuda', 'cpu']);
    expect(await openOnProvider(['directml', 'cpu'], async (name) => name)).toEqual({
      session: 'dml',
      provider: 'directml',
      fallback: null,
    });
  });

  it('a model the CPU refuses is the model’s fault, said as onnxruntime says it', async () => {
    const broken = async () => {
      throw new Error('protobuf parsing failed');
    };
    await expect(openOnProvider(['cuda', 'cpu'], broken)).rejects.toThrow('protobuf parsing failed');
  });
});

describe('an engine asked for CUDA on a machine without it', () => {
  let t: TestEngine;
  afterAll(async () => t?.stop());

  it('analyses on the CPU, and GET /api/system says where the model runs and why', async () => {
    t = await startTestEngine(undefined, undefined, { inference: { provider: 'cuda' } });
    expect(await installExamplePackage(t)).toBe(200);
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
    });
    const taskId = (started.body.data as { task_id: string }).task_id;
    await eventually(
      'frames analysed',
      async () =>
        ((await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView).health.frames_analysed >= 3,
      60_000,
    );
    const system = (await t.call('GET', '/api/system')).body.data as SystemInfo;
    expect(system.models).toEqual([
      {
        model: 'coco-yolox-nano/yolox-nano',
        inference_ms: expect.any(Number),
        queue: expect.any(Number),
        provider: 'cpu',
        provider_fallback: expect.stringMatching(/^cuda unavailable: .*Failed to load shared library/),
      },
    ]);
  }, 90_000);
});
