import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { SystemInfo } from '../engine/contract/health';
import { findFfmpeg } from '../engine/media/ffmpeg';
import {
  autoCandidates,
  DecodePath,
  type Hwaccel,
  isHwaccelFailure,
  probeHwaccel,
  resolveHwaccel,
} from '../engine/media/hwaccel';
import { StreamWatchdog } from '../engine/media/stream-watchdog';
import type { TaskView } from '../engine/tasks/schema';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';

/**
 * Hardware decoding (issue 17): the setting resolved at start, and each stream falling back to
 * software when its hardware path fails. This machine has no GPU: CUDA cannot load here (checked
 * below), so the real ffmpeg fails on it the way it fails on a workstation without the driver.
 */

const FFMPEG = findFfmpeg();
/** libcuda comes with NVIDIA's driver; without it ffmpeg's cuda hwaccel cannot open a device. */
const NO_CUDA = !['/usr/lib/x86_64-linux-gnu/libcuda.so.1', '/usr/lib/aarch64-linux-gnu/libcuda.so.1'].some(
  existsSync,
);

describe('hardware decode setting', () => {
  it('auto takes the first hwaccel of the platform whose device opens', async () => {
    const tried: Hwaccel[] = [];
    const probe = async (hwaccel: Hwaccel) => {
      tried.push(hwaccel);
      return hwaccel === 'vaapi' ? null : `no ${hwaccel} device`;
    };
    expect(await resolveHwaccel('auto', FFMPEG, 'linux', probe)).toEqual({
      setting: 'auto',
      hwaccel: 'vaapi',
      fallback: null,
    });
    expect(tried).toEqual(['cuda', 'vaapi']);
    expect(autoCandidates('darwin')).toEqual(['videotoolbox']);
    expect(autoCandidates('win32')).toEqual(['d3d11va', 'cuda', 'qsv']);
  });

  it('falls back to software saying why, and does not probe for none', async () => {
    const probe = async (hwaccel: Hwaccel) => `no ${hwaccel} device`;
    expect(await resolveHwaccel('auto', FFMPEG, 'darwin', probe)).toEqual({
      setting: 'auto',
      hwaccel: 'none',
      fallback: 'software decoding (videotoolbox: no videotoolbox device)',
    });
    expect(await resolveHwaccel('qsv', FFMPEG, 'linux', probe)).toEqual({
      setting: 'qsv',
      hwaccel: 'none',
      fallback: 'software decoding (qsv: no qsv device)',
    });
    const never = async (): Promise<string | null> => {
      throw new Error('probed');
    };
    expect(await resolveHwaccel('none', FFMPEG, 'linux', never)).toEqual({
      setting: 'none',
      hwaccel: 'none',
      fallback: null,
    });
  });

  it.runIf(NO_CUDA)('probes the device with the real ffmpeg: no CUDA driver here', async () => {
    expect(await probeHwaccel(FFMPEG, 'cuda')).toMatch(/Device creation failed|CUDA|device/i);
  });

  it("recognises ffmpeg's device failures and nothing else", () => {
    for (const line of [
      '[AVHWDeviceContext @ 0x1] Could not dynamically load CUDA',
      'Device creation failed: -542398533.',
      '[h264 @ 0x1] No device available for decoder: device type vaapi needed for codec h264.',
      'Device setup failed for decoder on input stream #0:0 : Generic error in an external library',
    ])
      expect(isHwaccelFailure(line), line).toBe(true);
    for (const line of [
      'Connection refused',
      'Invalid data found when processing input',
      'Stream ends prematurely',
    ])
      expect(isHwaccelFailure(line), line).toBe(false);
  });
});

describe('a stream whose hardware path fails', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  it.runIf(NO_CUDA)('decodes in software at once, and says so', async () => {
    const decoder = new DecodePath({ setting: 'cuda', hwaccel: 'cuda', fallback: null });
    const watchdog = new StreamWatchdog({ kind: 'file', input: VIDEO }, { decoder });
    cleanups.push(() => watchdog.close());
    // A file is not retried when it fails to open: only the fallback lets it start.
    const info = await watchdog.start(20_000);
    expect([info.width, info.height]).toEqual([768, 576]);
    expect(decoder.hwaccel).toBe('none');
    expect(decoder.fallback).toMatch(/^cuda failed \(.+\); software decoding$/);
    expect(watchdog.reconnects).toBe(0);
  });
});

describe('an engine asked for a hardware path this machine lacks', () => {
  let t: TestEngine | undefined;
  afterAll(async () => {
    await t?.stop();
  });

  it.runIf(NO_CUDA)(
    'shows the fallback in GET /api/system and in the task health, and still analyses',
    async () => {
      t = await startTestEngine(undefined, undefined, { hwaccel: 'cuda' });
      const engine = t;
      expect(await installExamplePackage(engine)).toBe(200);
      const system = await eventually('the decode path found', async () => {
        const info = (await engine.call('GET', '/api/system')).body.data as SystemInfo;
        return info.decoding.fallback?.startsWith('software') ? info : undefined;
      });
      expect(system.decoding).toMatchObject({ setting: 'cuda', hwaccel: 'none' });
      expect(system.decoding.fallback).toMatch(/^software decoding \(cuda: .+\)$/);

      const started = await engine.call('POST', '/api/task', {
        json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO },
      });
      expect(started.body.code).toBe(0);
      const taskId = (started.body.data as { task_id: string }).task_id;
      const view = async () => (await engine.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
      await eventually('frames analysed', async () => (await view()).health.frames_analysed >= 3, 60_000);
      expect((await view()).health.stream?.decoder).toEqual({
        hwaccel: 'none',
        fallback: system.decoding.fallback,
      });
    },
  );
});
