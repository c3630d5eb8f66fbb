import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { FramePacer } from '../engine/live/frame-pacer';
import { withToken } from '../engine/live/hls-files';
import { LINGER_FRAMES, LiveOverlay } from '../engine/live/live-overlay';
import { redacted } from '../engine/live/push';
import { FrameSource } from '../engine/media/frame-source';
import { StreamWatchdog, type WatchdogFrame } from '../engine/media/stream-watchdog';
import { buildOverlay } from '../engine/osd/overlay';
import { blend, rasterise } from '../engine/osd/raster';
import { renderOverlay } from '../engine/osd/render';
import type { AnalysedFrame } from '../engine/pipeline/task-pipeline';
import { REMOVED_COLOR } from '../engine/rules/removed-object';
import { DEFAULT_OSD } from '../engine/tasks/schema';
import { VIDEO } from './helpers/fixtures';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('FramePacer', () => {
  it('writes each frame of a steady source once', () => {
    const pacer = new FramePacer(25);
    const copies = Array.from({ length: 50 }, (_, i) => pacer.onFrame(1000 + i * 40 + (i % 3)));
    expect(copies).toEqual(Array(50).fill(1));
    expect(pacer.onTick(1000 + 49 * 40 + 10)).toBe(0);
  });

  it('skips a burst that runs ahead of the clock and fills a silent gap with repeats', () => {
    const pacer = new FramePacer(10);
    expect(pacer.onFrame(0)).toBe(1);
    // Ten frames at once (a network source catching up): two may run ahead, the rest go.
    const burst = Array.from({ length: 10 }, () => pacer.onFrame(100));
    expect(burst).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 0, 0]);
    // Then nothing for 1 s: the ticks keep the count two frames behind the clock.
    expect(pacer.onTick(500)).toBe(0);
    expect(pacer.onTick(1000)).toBe(5);
    expect(pacer.count).toBe(9);
    // A frame after the gap brings the count to the clock.
    expect(pacer.onFrame(1100)).toBe(3);
    expect(pacer.count).toBe(12);
  });

  it('restarts its clock instead of bursting after the process itself stalled', () => {
    const pacer = new FramePacer(10);
    pacer.onFrame(0);
    expect(pacer.onFrame(5_000)).toBe(1);
    expect(pacer.onFrame(5_100)).toBe(1);
    expect(pacer.count).toBe(3);
  });
});

describe('HLS playlist for players on ?token=', () => {
  it('adds the token to every segment URI and to nothing else', () => {
    const playlist =
      '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.000000,\nseg00007.ts\n#EXTINF:1.000000,\nseg00008.ts\n';
    expect(withToken(playlist, 'a+b/c')).toBe(
      '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.000000,\nseg00007.ts?token=a%2Bb%2Fc\n#EXTINF:1.000000,\nseg00008.ts?token=a%2Bb%2Fc\n',
    );
  });

  it('never shows a push URL with its stream key in the dump', () => {
    expect(redacted('rtmp://cdn.example:1935/live/secret-key')).toBe('rtmp://cdn.example:1935/live/…');
  });
});

describe('live overlay', () => {
  const frame = { data: new Uint8Array(randomBytes(320 * 240 * 3)), width: 320, height: 240 };
  const zone = {
    points: [
      [20, 20],
      [300, 30],
      [280, 220],
      [30, 200],
    ] as [number, number][],
    color: '#00c8ff',
  };
  const objects = [
    { x1: 40, y1: 50, x2: 120, y2: 200, color: '#ff3b30', name: 'person', trackId: '7' },
    { x1: 200, y1: 10, x2: 310, y2: 90, color: '#007aff', name: '汽车', trackId: '12' },
  ];

  it('blends exactly as the shared OSD renderer draws', async () => {
    for (const osd of [DEFAULT_OSD, { ...DEFAULT_OSD, border_size: 6, font_size: 22 }]) {
      const overlay = buildOverlay({ width: 320, height: 240, osd, zones: [zone], objects });
      if (!overlay) throw new Error('nothing drawn');
      const expected = await renderOverlay(frame, overlay);
      const pixels = new Uint8Array(frame.data);
      blend(pixels, await rasterise(overlay, 320, 240));
      expect(Buffer.compare(Buffer.from(pixels), expected)).toBe(0);
    }
  });

  it('keeps a box that one or two analyses missed, then drops it; honours osd changes', async () => {
    const overlay = new LiveOverlay(['person'], DEFAULT_OSD);
    const shown = {
      track_id: '7',
      x: 80,
      y: 125,
      w: 80,
      h: 150,
      score: 0.9,
      class_id: '0',
      name: 'person',
      color: '#ff3b30',
    };
    const analysed = (withPerson: boolean): AnalysedFrame => ({
      frameId: 1,
      timestampMs: 0,
      size: { width: 320, height: 240 },
      frameSize: { width: 320, height: 240 },
      frame: null,
      models: new Map(),
      results: [],
      overlays: [
        {
          appId: 'person',
          zone: { points: [], color: '#ff3b30' },
          areas: [],
          objects: withPerson ? [shown] : [],
        },
        // Another app of the task, not in this video: never drawn.
        {
          appId: 'vehicle',
          zone: { points: [], color: '#007aff' },
          areas: [],
          objects: [{ ...shown, track_id: '9', x: 250, color: '#007aff' }],
        },
      ],
    });
    /** Whether the red box's left edge is drawn, once the rasterisation settled. */
    const boxDrawn = async () => {
      await sleep(100);
      const pixels = new Uint8Array(320 * 240 * 3);
      overlay.draw(pixels, 320, 240, performance.now());
      const at = (120 * 320 + 41) * 3;
      const blue = (120 * 320 + 211) * 3;
      expect([pixels[blue], pixels[blue + 1], pixels[blue + 2]]).toEqual([0, 0, 0]);
      return pixels[at] === 0xff && pixels[at + 1] === 0x3b && pixels[at + 2] === 0x30;
    };
    overlay.onAnalysed(analysed(true));
    expect(await boxDrawn()).toBe(true);
    for (let missed = 1; missed <= LINGER_FRAMES; missed++) {
      overlay.onAnalysed(analysed(false));
      expect(await boxDrawn(), `missed ${missed}`).toBe(true);
    }
    overlay.onAnalysed(analysed(false));
    expect(await boxDrawn()).toBe(false);
    overlay.onAnalysed(analysed(true));
    expect(await boxDrawn()).toBe(true);
    overlay.setOsd({ ...DEFAULT_OSD, display_box: false, display_name: false, display_track: false });
    expect(await boxDrawn()).toBe(false);
    const other = new Uint8Array(640 * 480 * 3);
    overlay.draw(other, 640, 480, performance.now());
    expect(other.every((value) => value === 0)).toBe(true);
  });

  it("draws each zone's removed area, which has no track, dashed in its own colour (issue 18)", async () => {
    const overlay = new LiveOverlay(['watch'], DEFAULT_OSD);
    const area = (name: string, x: number) => ({
      track_id: '',
      x,
      y: 120,
      w: 60,
      h: 60,
      score: 0.6,
      class_id: 'removed',
      name,
      zones: [name],
      removed: 3,
      color: REMOVED_COLOR,
    });
    overlay.onAnalysed({
      frameId: 1,
      timestampMs: 0,
      size: { width: 320, height: 240 },
      frameSize: { width: 320, height: 240 },
      frame: null,
      models: new Map(),
      results: [],
      overlays: [
        {
          appId: 'watch',
          zone: { points: [], color: '#ff3b30' },
          areas: [],
          objects: [area('shelf', 80), area('door', 240)],
        },
      ],
    });
    await sleep(100);
    const pixels = new Uint8Array(320 * 240 * 3);
    overlay.draw(pixels, 320, 240, performance.now());
    // The first dash of each box's left side (x 50 and 210), and the gap after it.
    const rgb = (x: number, y: number) => [...pixels.subarray((y * 320 + x) * 3, (y * 320 + x) * 3 + 3)];
    expect([rgb(51, 95), rgb(51, 100), rgb(211, 95), rgb(211, 100)]).toEqual([
      [255, 0, 255],
      [0, 0, 0],
      [255, 0, 255],
      [0, 0, 0],
    ]);
  });

  it('draws results given in source pixels on the video’s frames, which are the source bounded smaller', async () => {
    const overlay = new LiveOverlay(['person'], DEFAULT_OSD);
    const person = {
      track_id: '7',
      x: 160,
      y: 250,
      w: 160,
      h: 300,
      score: 0.9,
      class_id: '0',
      name: 'person',
    };
    overlay.onAnalysed({
      frameId: 1,
      timestampMs: 0,
      size: { width: 640, height: 480 },
      frameSize: { width: 320, height: 240 },
      frame: null,
      models: new Map(),
      results: [],
      overlays: [
        {
          appId: 'person',
          zone: { points: [], color: '#ff3b30' },
          areas: [],
          objects: [{ ...person, color: '#ff3b30' }],
        },
      ],
    });
    await sleep(100);
    const other = new Uint8Array(640 * 480 * 3);
    overlay.draw(other, 640, 480, performance.now());
    expect(other.every((value) => value === 0)).toBe(true);
    const pixels = new Uint8Array(320 * 240 * 3);
    overlay.draw(pixels, 320, 240, performance.now());
    // The box is x 80..240 in the source: its left edge is at x 40 on the frame.
    const at = (120 * 320 + 41) * 3;
    expect([pixels[at], pixels[at + 1], pixels[at + 2]]).toEqual([0xff, 0x3b, 0x30]);
  });
});

describe('StreamWatchdog rate switch', () => {
  it('switches a running file source to every frame and back without losing the stream or rewinding', async () => {
    const capped: boolean[] = [];
    const watchdog = new StreamWatchdog(
      { kind: 'file', input: VIDEO },
      {
        createSource: (url, transport, mode) => {
          capped.push(!mode.fullRate);
          return new FrameSource(url, {
            ffmpeg: '/usr/bin/ffmpeg',
            transport,
            outputFps: mode.fullRate ? undefined : 5,
            seekS: mode.seekS,
          });
        },
      },
    );
    cleanups.push(() => watchdog.close());
    const frames: WatchdogFrame[] = [];
    const states: string[] = [];
    watchdog.on('frame', (frame) => frames.push(frame));
    watchdog.on('state', (state) => states.push(state));
    watchdog.on('lost', () => states.push('lost'));

    expect((await watchdog.start()).fps).toBe(5);
    await sleep(3_000);
    await watchdog.setFullRate(true);
    expect([watchdog.fullRate, watchdog.info?.fps, watchdog.rateSwitchFailure]).toEqual([true, 10, '']);
    // The new ffmpeg's first frame is the newest one (emitted as the switch completed). It continues
    // from where the old one was: it is not the file's first frame again.
    const first = frames.at(-1) as WatchdogFrame;
    const last = frames.at(-2) as WatchdogFrame;
    const fileStart = frames[0] as WatchdogFrame;
    const rewound = meanDifference(first, fileStart);
    expect(rewound).toBeGreaterThan(0);
    expect(meanDifference(first, last)).toBeLessThan(rewound);

    await watchdog.setFullRate(false);
    expect([watchdog.fullRate, watchdog.info?.fps]).toEqual([false, 5]);
    expect(capped).toEqual([true, false, true]);
    expect(states).toEqual(['connecting', 'running']);
    expect(frames.every((frame) => !frame.synthetic)).toBe(true);
    expect(frames.map((frame) => frame.index)).toEqual(frames.map((_, i) => i));
  });
});

function meanDifference(a: WatchdogFrame, b: WatchdogFrame): number {
  let sum = 0;
  for (let i = 0; i < a.data.length; i += 97) sum += Math.abs((a.data[i] as number) - (b.data[i] as number));
  return sum / (a.data.length / 97);
}
