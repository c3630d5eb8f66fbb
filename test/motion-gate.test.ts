import { describe, expect, it } from 'vitest';
import { MotionDetector } from '../engine/inference/motion';
import {
  FULL_REFRESH_MS,
  type GateDecision,
  type LiveTrack,
  MotionGate,
  QUIET_REFRESH_MS,
  REST_AFTER_MS,
  STATIONARY_AFTER_MS,
} from '../engine/pipeline/motion-gate';
import { tileDetectionsInFrame, tileFrame } from '../engine/pipeline/region-crops';
import { MAX_REGIONS, mergeRegions, padRegion, planTiles, TILE_GAP_PX } from '../engine/pipeline/region-plan';
import { ByteTracker } from '../engine/tracking/byte-tracker';
import type { Box, Detection, Frame } from '../engine/vision/types';

/**
 * The motion gate's pure parts, each decision and plan compared as a whole value: region padding,
 * merging and tiling, crops and the way back to frame pixels, the gate's decisions over a scripted
 * scene (real MotionDetector on drawn frames, times passed in), and the tracker carrying what the
 * detector did not look at.
 */

const INPUT = { width: 416, height: 416 };
const W = 320;
const H = 240;

/** A grey frame with a dark 30x40 square at x (none when x is null). */
function scene(x: number | null): Frame {
  const data = new Uint8Array(W * H * 3).fill(128);
  if (x !== null) {
    for (let row = 100; row < 140; row++) data.fill(20, (row * W + x) * 3, (row * W + x + 30) * 3);
  }
  return { width: W, height: H, data };
}

describe('region planning', () => {
  it('pads a region by a quarter of its size, at least 2% of the frame width, inside the frame', () => {
    expect(padRegion({ x1: 100, y1: 100, x2: 140, y2: 180 }, { width: 1280, height: 720 })).toEqual({
      x1: 74,
      y1: 74,
      x2: 166,
      y2: 206,
    });
    expect(padRegion({ x1: 0, y1: 600, x2: 400, y2: 720 }, { width: 1280, height: 720 })).toEqual({
      x1: 0,
      y1: 570,
      x2: 500,
      y2: 720,
    });
  });

  it('merges overlapping regions until none overlap, a join reaching a third, largest first', () => {
    const a = { x1: 0, y1: 0, x2: 50, y2: 50 };
    const b = { x1: 40, y1: 40, x2: 100, y2: 100 };
    // Overlaps the union of a and b only.
    const c = { x1: 90, y1: 0, x2: 120, y2: 30 };
    const far = { x1: 300, y1: 300, x2: 310, y2: 310 };
    expect(mergeRegions([far, c, a, b])).toEqual([{ x1: 0, y1: 0, x2: 120, y2: 100 }, far]);
    // Touching edges are not an overlap.
    expect(mergeRegions([a, { x1: 50, y1: 0, x2: 60, y2: 10 }])).toEqual([
      a,
      { x1: 50, y1: 0, x2: 60, y2: 10 },
    ]);
  });

  it('packs small regions at their own scale on input-sized tiles in shelves; a larger one is a tile of its own', () => {
    const tall = { x1: 10, y1: 10, x2: 110, y2: 210 };
    const wide = { x1: 500, y1: 0, x2: 800, y2: 100 };
    const small = { x1: 900, y1: 500, x2: 950, y2: 580 };
    const big = { x1: 0, y1: 300, x2: 500, y2: 600 };
    expect(planTiles([big, wide, small, tall], INPUT)).toEqual([
      { width: 500, height: 300, placements: [{ region: big, x: 0, y: 0 }] },
      {
        width: 416,
        height: 416,
        placements: [
          { region: tall, x: 0, y: 0 },
          { region: wide, x: 100 + TILE_GAP_PX, y: 0 },
          // No room beside them: the next shelf, below the tallest.
          { region: small, x: 0, y: 200 + TILE_GAP_PX },
        ],
      },
    ]);
    // A shelf that does not fit below opens a second canvas.
    const tower = { x1: 0, y1: 0, x2: 300, y2: 400 };
    expect(planTiles([tower, tower], INPUT).map((tile) => tile.placements.length)).toEqual([1, 1]);
  });
});

describe('crops', () => {
  it('copies each region row by row onto the grey canvas and maps boxes back to frame pixels, clipped to their crop', () => {
    const frame: Frame = { width: 8, height: 6, data: new Uint8Array(8 * 6 * 3) };
    for (let i = 0; i < 8 * 6; i++) frame.data.fill(i, i * 3, i * 3 + 3);
    const tile = {
      width: 6,
      height: 4,
      placements: [
        { region: { x1: 1, y1: 1, x2: 3, y2: 3 }, x: 0, y: 0 },
        { region: { x1: 5, y1: 2, x2: 8, y2: 5 }, x: 3, y: 0 },
      ],
    };
    const pixels = tileFrame(frame, tile);
    const gray = Array.from({ length: 24 }, (_, i) => pixels.data[i * 3]);
    // prettier-ignore
    expect(gray).toEqual([
      9, 10, 114, 21, 22, 23, 17, 18, 114, 29, 30, 31, 114, 114, 114, 37, 38, 39, 114, 114, 114, 114, 114,
      114,
    ]);
    const detection = (x1: number, y1: number, x2: number, y2: number): Detection => ({
      x1,
      y1,
      x2,
      y2,
      score: 0.9,
      classIndex: 0,
    });
    expect(
      tileDetectionsInFrame(
        [detection(0, 0, 2, 2), detection(3.5, 0.5, 7, 2.5), detection(0, 3, 2, 4)],
        tile,
      ),
    ).toEqual([
      detection(1, 1, 3, 3),
      // Reaches past its crop on the canvas: clipped to the crop's region.
      detection(5.5, 2.5, 8, 4.5),
      // The third lies on grey between crops: dropped.
    ]);
  });
});

describe('MotionGate', () => {
  const decide = (gate: MotionGate, x: number | null, at: number, tracks: LiveTrack[] = []) =>
    gate.decide(scene(x), tracks, INPUT, at, true);

  it('detects whole frames while motion warms up and at each refresh, regions on motion, and rests once nothing happens', () => {
    const gate = new MotionGate();
    const twin = new MotionDetector();
    const decisions: GateDecision[] = [];
    // 10 fps: 10 warm-up frames, still frames, a square moving for 1 s, then still for 25 s.
    const xs: Array<number | null> = [];
    for (let i = 0; i < 30; i++) xs.push(null);
    for (let i = 0; i < 10; i++) xs.push(40 + 20 * i);
    for (let i = 0; i < 250; i++) xs.push(null);
    const expected: GateDecision[] = [];
    let lastFull = Number.NEGATIVE_INFINITY;
    let lastActive = 0;
    let refreshMs = FULL_REFRESH_MS;
    xs.forEach((x, i) => {
      const at = i * 100;
      decisions.push(decide(gate, x, at));
      const blobs = twin.detect(scene(x));
      if (blobs.length > 0) {
        lastActive = at;
        refreshMs = FULL_REFRESH_MS;
      }
      if (i < 10) {
        expected.push({ kind: 'full', reason: 'warmup' });
        lastFull = at;
      } else if (at - lastFull >= refreshMs) {
        expected.push({ kind: 'full', reason: 'refresh' });
        lastFull = at;
        // Resting on an empty scene: each refresh doubles the next interval, up to QUIET_REFRESH_MS.
        refreshMs =
          at - lastActive >= REST_AFTER_MS ? Math.min(2 * refreshMs, QUIET_REFRESH_MS) : FULL_REFRESH_MS;
      } else if (blobs.length > 0) {
        expected.push({ kind: 'regions', regions: mergeRegions(blobs.map((b) => padRegion(b, scene(x)))) });
      } else if (at - lastActive >= REST_AFTER_MS) {
        expected.push({ kind: 'skip' });
      } else {
        expected.push({ kind: 'regions', regions: [] });
      }
    });
    expect(decisions).toEqual(expected);
    // The script holds every kind: the moving square gave regions, the quiet end skipped frames.
    const kinds = decisions.map((d) => d.kind);
    expect(kinds.slice(30, 40).filter((k) => k === 'regions').length).toBeGreaterThanOrEqual(8);
    expect(kinds.slice(-40).filter((k) => k === 'skip').length).toBeGreaterThanOrEqual(30);
    // After the square: refreshes 2 s apart while it may still move, then 4 s and 8 s once resting.
    const refreshes = decisions.flatMap((d, i) => (i >= 40 && d.kind === 'full' ? [i * 100] : []));
    const gaps = refreshes.slice(1).map((at, k) => at - (refreshes[k] as number));
    expect(gaps).toEqual([FULL_REFRESH_MS, 2 * FULL_REFRESH_MS, QUIET_REFRESH_MS, QUIET_REFRESH_MS]);
  });

  it('without crops, detects whole every frame it does not skip, and skips the frames it would skip with them', () => {
    const withCrops = new MotionGate();
    const whole = new MotionGate();
    const xs: Array<number | null> = [];
    for (let i = 0; i < 30; i++) xs.push(null);
    for (let i = 0; i < 10; i++) xs.push(40 + 20 * i);
    for (let i = 0; i < 150; i++) xs.push(null);
    const walker: LiveTrack = { trackId: '1', box: { x1: 10, y1: 50, x2: 30, y2: 110 } };
    const seen = xs.map((x, i) => {
      const at = i * 100;
      // A track lives (standing still) for the first 2 s after the square stops.
      const tracks = i >= 40 && i < 60 ? [walker] : [];
      return {
        cropped: withCrops.decide(scene(x), tracks, INPUT, at, true),
        decided: whole.decide(scene(x), tracks, INPUT, at, false),
      };
    });
    // The 2 s refreshes fall elsewhere (a whole frame restarts their clock): compare the other frames.
    const refresh = (d: GateDecision) => d.kind === 'full' && d.reason === 'refresh';
    const compared = seen.filter(({ cropped, decided }) => !refresh(cropped) && !refresh(decided));
    const skipped = (d: GateDecision) => (d.kind === 'skip' ? 'skip' : 'whole');
    expect(compared.map(({ decided }) => skipped(decided))).toEqual(
      compared.map(({ cropped }) => skipped(cropped)),
    );
    const kinds = new Set(
      seen.map(({ decided }) => (decided.kind === 'full' ? decided.reason : decided.kind)),
    );
    expect([...kinds].sort()).toEqual(['motion', 'refresh', 'skip', 'warmup']);
    expect(seen.filter(({ decided }) => decided.kind === 'skip').length).toBeGreaterThanOrEqual(25);
    // While the track moves every frame is whole and the motion stage only learns (a frame a
    // second); when it goes, the stage judges at once, with no warm-up, until the task rests.
    expect(seen.slice(40, 60).map(({ decided }) => decided)).toEqual(
      Array.from({ length: 20 }, () => ({ kind: 'full', reason: 'motion' })),
    );
    expect(seen.slice(60).some(({ decided }) => decided.kind === 'full' && decided.reason === 'warmup')).toBe(
      false,
    );
  });

  it('rests while a track only coasts (its object left), never while one is seen moving', () => {
    const gate = new MotionGate();
    const track = (lost: boolean): LiveTrack => ({
      trackId: '1',
      box: { x1: 10, y1: 50, x2: 30, y2: 110 },
      lost,
    });
    const kinds = (from: number, to: number, lost: boolean) => {
      const seen: string[] = [];
      for (let at = from; at < to; at += 100)
        seen.push(gate.decide(scene(null), [track(lost)], INPUT, at, false).kind);
      return seen;
    };
    const awake = kinds(0, REST_AFTER_MS + 2_000, false);
    expect(awake.every((kind) => kind === 'full')).toBe(true);
    // Coasting from here: the motion stage learns the background again, then the task rests.
    const coasting = kinds(REST_AFTER_MS + 2_000, 3 * REST_AFTER_MS + 2_000, true);
    expect(coasting.filter((kind) => kind === 'skip').length).toBeGreaterThan(coasting.length / 3);
    expect(gate.health(true, 3 * REST_AFTER_MS + 2_000).resting).toBe(true);
  });

  it('without crops, rests around still tracks (a parked car): carries them on no regions where it would skip, and wakes on the first frame one moves', () => {
    const gate = new MotionGate();
    const parked = (x1: number): LiveTrack => ({ trackId: '1', box: { x1, y1: 50, x2: x1 + 40, y2: 110 } });
    const decided: Array<{ at: number; decision: GateDecision }> = [];
    for (let at = 0; at < 15_000; at += 100)
      decided.push({ at, decision: gate.decide(scene(null), [parked(10)], INPUT, at, false) });
    // Moving until it has stood STATIONARY_AFTER_MS; then the motion stage warms up (10 frames) and
    // the task rests REST_AFTER_MS after the last frame the track counted as moving.
    const stillSince = STATIONARY_AFTER_MS;
    const restsAt = stillSince - 100 + REST_AFTER_MS;
    expect(decided.filter(({ at }) => at < stillSince).map(({ decision }) => decision)).toEqual(
      Array.from({ length: stillSince / 100 }, () => ({ kind: 'full', reason: 'motion' })),
    );
    expect(
      decided.filter(({ at }) => at >= stillSince && at < stillSince + 1_000).map(({ decision }) => decision),
    ).toEqual(Array.from({ length: 10 }, () => ({ kind: 'full', reason: 'warmup' })));
    const resting = decided.filter(({ at }) => at >= restsAt).map(({ decision }) => decision);
    // Never skipped while a track is seen: the rules go on timing it on every frame.
    expect(decided.some(({ decision }) => decision.kind === 'skip')).toBe(false);
    expect(
      resting.filter((d) => d.kind === 'full').every((d) => d.kind === 'full' && d.reason === 'refresh'),
    ).toBe(true);
    expect(resting.filter((d) => d.kind === 'regions')).toEqual(
      Array.from({ length: resting.length - resting.filter((d) => d.kind === 'full').length }, () => ({
        kind: 'regions',
        regions: [],
      })),
    );
    // The whole frame every FULL_REFRESH_MS sees it still there.
    const refreshes = resting.flatMap((d, i) => (d.kind === 'full' ? [i] : []));
    expect(refreshes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(refreshes.slice(1).map((i, k) => i - (refreshes[k] as number)))).toEqual(
      new Set([FULL_REFRESH_MS / 100]),
    );
    expect(gate.health(true, 15_000).resting).toBe(true);
    // It drives off: the first frame its box moved is detected whole, and the task is awake again.
    expect(gate.decide(scene(null), [parked(40)], INPUT, 15_000, false)).toEqual({
      kind: 'full',
      reason: 'motion',
    });
    expect(gate.health(true, 15_000).resting).toBe(false);
  });

  it('looks around moving tracks, leaves stationary ones to the refresh, and goes whole when regions would cost more', () => {
    const gate = new MotionGate();
    for (let i = 0; i < 10; i++) decide(gate, null, i * 100);
    const walker = (x: number): LiveTrack => ({ trackId: '1', box: { x1: x, y1: 50, x2: x + 20, y2: 110 } });
    // Moving: its padded box is the region.
    expect(decide(gate, null, 1000, [walker(10)])).toEqual({
      kind: 'regions',
      regions: [padRegion(walker(10).box, scene(null))],
    });
    // It stops and stands: a region while it may still move, none once it stood STATIONARY_AFTER_MS.
    const times = [1100, 1500, 1000 + STATIONARY_AFTER_MS - 100, 1000 + STATIONARY_AFTER_MS];
    const stood = times.map((at) => {
      const decision = decide(gate, null, at, [walker(12)]);
      return decision.kind === 'regions' ? decision.regions.length : decision;
    });
    // 2900 and 4900 were full refreshes (2 s apart); 6000 leaves the stationary track out.
    expect(stood).toEqual([1, 1, { kind: 'full', reason: 'refresh' }, 0]);
    // Never resting while a track lives.
    expect(gate.health(true, 6000).resting).toBe(false);

    // More separate regions than MAX_REGIONS, or two that need a tile each: the whole frame.
    const many = Array.from({ length: MAX_REGIONS + 1 }, (_, i) => ({
      trackId: `m${i}`,
      box: { x1: 2 + 35 * i, y1: 5, x2: 8 + 35 * i, y2: 15 },
    }));
    expect(decide(gate, null, 6100, many)).toEqual({ kind: 'full', reason: 'busy' });
  });

  it('takes one crop larger than the input (one inference), and the whole frame when regions need two', () => {
    const gate = new MotionGate();
    const hd: Frame = { width: 1280, height: 720, data: new Uint8Array(1280 * 720 * 3).fill(128) };
    for (let i = 0; i < 10; i++) gate.decide(hd, [], INPUT, i * 100, true);
    const near = (trackId: string, x: number): LiveTrack => ({
      trackId,
      box: { x1: x, y1: 100, x2: x + 300, y2: 500 },
    });
    expect(gate.decide(hd, [near('a', 0)], INPUT, 1000, true)).toEqual({
      kind: 'regions',
      regions: [{ x1: 0, y1: 0, x2: 375, y2: 600 }],
    });
    expect(gate.decide(hd, [near('a', 0), near('b', 700)], INPUT, 1100, true)).toEqual({
      kind: 'full',
      reason: 'busy',
    });
  });

  it('counts its decisions and the last 5 s of rates and area for health', () => {
    const gate = new MotionGate();
    gate.record('full', 1, 1, 0);
    gate.record('regions', 1, 0.25, 2000);
    gate.record('regions', 0, 0, 3000);
    gate.record('skip', 0, 0, 4000);
    gate.record('skip', 0, 0, 6500);
    // At 6500 the full frame at 0 left the 5 s window; the counts keep it.
    expect(gate.health(true, 6500)).toEqual({
      enabled: true,
      resting: false,
      rate_fps: 2 / 5,
      frames_skipped: 2,
      frames_regions: 2,
      frames_full: 1,
      detector_runs_per_s: 1 / 5,
      refresh_s: FULL_REFRESH_MS / 1000,
      area_fraction: 0.25 / 4,
    });
  });
});

describe('ByteTracker with a covered area', () => {
  const person = (x: number): Detection => ({ x1: x, y1: 0, x2: x + 20, y2: 50, score: 0.9, classIndex: 0 });
  const ids = () => {
    let next = 1;
    return () => String(next++);
  };

  it('carries a followed track outside the covered area at its last box, unaged, for as long as it is not looked at', () => {
    const tracker = new ByteTracker({}, ids());
    for (let i = 0; i < 3; i++) tracker.update([person(100 + i)]);
    const elsewhere = (box: Box) => box.x1 > 500;
    for (let i = 0; i < 100; i++) {
      expect(tracker.update([], elsewhere)).toEqual([
        { ...person(102), trackId: '1', hits: 3, confirmed: true },
      ]);
    }
    // Looked at again (a full frame) and found: the same track.
    expect(tracker.update([person(103)])).toEqual([
      { ...person(103), trackId: '1', hits: 4, confirmed: true },
    ]);
  });

  it('ages a track inside the covered area (or on a whole frame) as not seen, and drops it', () => {
    const covered = new ByteTracker({ maxLostFrames: 5 }, ids());
    const whole = new ByteTracker({ maxLostFrames: 5 }, ids());
    for (let i = 0; i < 3; i++) {
      covered.update([person(100 + i)]);
      whole.update([person(100 + i)]);
    }
    for (let i = 0; i < 5; i++) {
      expect(covered.update([], () => true)).toEqual([]);
      expect(whole.update([])).toEqual([]);
    }
    expect([covered.activeTracks, whole.activeTracks]).toEqual([1, 1]);
    covered.update([], () => true);
    whole.update([]);
    expect([covered.activeTracks, whole.activeTracks]).toEqual([0, 0]);
  });
});
