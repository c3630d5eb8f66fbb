import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SystemInfo } from '../engine/contract/health';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import {
  autoCandidates,
  codecDecoding,
  DecodePath,
  decoderDevices,
  defaultDecoder,
  type Hwaccel,
  hwaccelRefusal,
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

describe('which decoder ffmpeg takes for a codec, and its hwaccels', () => {
  it("reads ffmpeg's decoder list and help", () => {
    const decoders = [
      ' V....D 012v                 Uncompressed 4:2:2 10-bit',
      ' V..X.D av1_experiment       an experimental one (codec av1)',
      ' V..... libdav1d             dav1d AV1 decoder by VideoLAN (codec av1)',
      ' V....D av1                  Alliance for Open Media AV1',
      ' VFS..D h264                 H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10',
      ' V....D h264_qsv             H264 video (Intel Quick Sync Video acceleration) (codec h264)',
      ' A....D aac                  AAC (Advanced Audio Coding)',
    ].join('\n');
    expect(
      ['av1', 'h264', 'h264_qsv', 'aac', 'hevc'].map((codec) => defaultDecoder(decoders, codec)),
    ).toEqual(['libdav1d', 'h264', null, null, null]);
    expect(
      decoderDevices('Decoder h264 [H.264]:\n    Supported hardware devices: cuda vaapi vdpau \n'),
    ).toEqual(['cuda', 'vaapi', 'vdpau']);
    expect(decoderDevices('Decoder av1 [AV1]:\n    General capabilities: dr1\n')).toEqual([]);
  });

  it("asks this machine's ffmpeg (Debian's 5.1)", async () => {
    expect(await codecDecoding(FFMPEG, 'h264')).toEqual({
      decoder: 'h264',
      hwaccels: ['cuda', 'vaapi', 'vdpau'],
    });
    // libdav1d is listed before ffmpeg's own AV1 decoder, which alone could use a GPU.
    expect(await codecDecoding(FFMPEG, 'av1')).toEqual({ decoder: 'libdav1d', hwaccels: [] });
    expect(await codecDecoding(FFMPEG, 'no-such-codec')).toEqual({ decoder: null, hwaccels: [] });
    // Not an answer: the stream's decoder is left unjudged.
    expect(await codecDecoding('/nonexistent/ffmpeg', 'h264')).toBeNull();
  });

  it("recognises the hardware's refusal of a stream, in the decoder's own line only", () => {
    // As FrameSource hands lines on: ffmpeg's level tag removed.
    expect(
      hwaccelRefusal(
        '[h264 @ 0x5581c0] Failed setup for format cuda: hwaccel initialisation returned error.',
      ),
    ).toBe('Failed setup for format cuda: hwaccel initialisation returned error');
    for (const line of [
      '[h264 @ 0x5581c0] Error while decoding stream #0:0',
      // A stream's title, as ffmpeg prints its metadata.
      '      title           : [h264 @ 0x1] Failed setup for format cuda: hwaccel initialisation returned error.',
    ])
      expect(hwaccelRefusal(line), line).toBeNull();
  });
});

/**
 * This machine has no GPU, so no hwaccel's device opens and ffmpeg would stop before decoding. The
 * stand-in plays a machine whose device opens: it drops -hwaccel and runs the real ffmpeg, first
 * printing, when made to refuse, the line ffmpeg prints when the hardware refuses the stream.
 */
function deviceThatOpens(dir: string, refuse: boolean): string {
  const script = join(dir, refuse ? 'ffmpeg-refused' : 'ffmpeg-opens');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      'for arg; do shift; if [ -n "$skip" ]; then skip=; continue; fi',
      '  if [ "$arg" = -hwaccel ]; then skip=1; asked=1; continue; fi; set -- "$@" "$arg"; done',
      refuse
        ? '[ -n "$asked" ] && echo "[h264 @ 0x5581] [error] Failed setup for format cuda: hwaccel initialisation returned error." >&2'
        : '',
      `exec ${FFMPEG} "$@"`,
    ].join('\n'),
    { mode: 0o755 },
  );
  return script;
}

describe('a stream that ffmpeg decodes in software although a hwaccel was asked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-hwaccel-'));
  const cleanups: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  async function decodePathAfterFrames(hwaccel: Hwaccel, ffmpeg: string): Promise<DecodePath> {
    const decoder = new DecodePath({ setting: hwaccel, hwaccel, fallback: null });
    const watchdog = new StreamWatchdog(
      { kind: 'file', input: VIDEO },
      {
        decoder,
        createSource: (source, transport, mode) =>
          new FrameSource(source, { ffmpeg, transport, seekS: mode.seekS, hwaccel: mode.hwaccel }),
      },
    );
    cleanups.push(() => watchdog.close());
    let frames = 0;
    watchdog.on('frame', (frame) => {
      frames++;
      frame.release?.();
    });
    await watchdog.start(20_000);
    await eventually(
      'frames after the decoder is judged',
      async () => decoder.hwaccel === 'none' && frames >= 5,
    );
    // ffmpeg went on in software: the stream was neither restarted nor reconnected.
    expect(watchdog.reconnects).toBe(0);
    return decoder;
  }

  it("says so when ffmpeg's decoder for the codec cannot use the hwaccel (the fixture's MS-MPEG-4 v3)", async () => {
    const decoder = await decodePathAfterFrames('qsv', deviceThatOpens(dir, false));
    expect(decoder.fallback).toBe("qsv failed (ffmpeg's msmpeg4 decoder cannot use qsv); software decoding");
  });

  it('says so when the hardware refuses the stream', async () => {
    const decoder = await decodePathAfterFrames('cuda', deviceThatOpens(dir, true));
    expect(decoder.fallback).toBe(
      'cuda failed (Failed setup for format cuda: hwaccel initialisation returned error); software decoding',
    );
  });
});

describe("a stream's decode path", () => {
  it('is software once either the running ffmpeg or its exit says so, and an exit on hardware is retried', () => {
    const path = new DecodePath({ setting: 'cuda', hwaccel: 'cuda', fallback: null });
    const deviceFailure = 'Device setup failed for decoder on input stream #0:0 : Operation not permitted';
    expect(path.fellBack('Invalid data found when processing input', 'Invalid data', 'cuda')).toBe(false);
    expect(path.hwaccel).toBe('cuda');
    // The decoder check of the running ffmpeg came first; its exit on the device still asks a retry.
    path.decodesInSoftware("ffmpeg's mpeg4 decoder cannot use cuda");
    expect(path.fellBack(deviceFailure, deviceFailure, 'cuda')).toBe(true);
    expect([path.hwaccel, path.fallback]).toEqual([
      'none',
      "cuda failed (ffmpeg's mpeg4 decoder cannot use cuda); software decoding",
    ]);
    // An ffmpeg started in software did not fail on a device, whatever its words.
    expect(path.fellBack(deviceFailure, deviceFailure, 'none')).toBe(false);
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
