// Over 400 lines on purpose: tracking scenarios on hand-made detections, each compared whole.
import { describe, expect, it } from 'vitest';
import { iou } from '../engine/inference/nms';
import { assign } from '../engine/tracking/assignment';
import { ByteTracker } from '../engine/tracking/byte-tracker';
import { KalmanBoxFilter } from '../engine/tracking/kalman';
import type { Box, Detection, TrackedObject } from '../engine/vision/types';

/** mulberry32: a tiny seeded PRNG so the simulations are the same on every run. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Counter ids as the task runner makes them, recording what it handed out. */
function counterIds(): { next: () => string; issued: string[] } {
  const issued: string[] = [];
  return {
    issued,
    next: () => {
      const id = String(issued.length + 1);
      issued.push(id);
      return id;
    },
  };
}

const box = (cx: number, cy: number, w: number, h: number): Box => ({
  x1: cx - w / 2,
  y1: cy - h / 2,
  x2: cx + w / 2,
  y2: cy + h / 2,
});

const detection = (cx: number, cy: number, w: number, h: number, score = 0.9, classIndex = 0): Detection => ({
  ...box(cx, cy, w, h),
  score,
  classIndex,
});

const centre = (b: Box) => [(b.x1 + b.x2) / 2, (b.y1 + b.y2) / 2] as const;

/** True when the symmetric n x n matrix has a Cholesky factor, i.e. is positive definite. */
function isPositiveDefinite(m: Float64Array, n: number): boolean {
  const l = new Float64Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = m[i * n + j] as number;
      for (let k = 0; k < j; k++) sum -= (l[i * n + k] as number) * (l[j * n + k] as number);
      if (i === j) {
        if (!(sum > 0)) return false;
        l[i * n + i] = Math.sqrt(sum);
      } else l[i * n + j] = sum / (l[j * n + j] as number);
    }
  }
  return true;
}

describe('KalmanBoxFilter', () => {
  it('converts a box to its state and back', () => {
    const filter = new KalmanBoxFilter({ x1: 10, y1: 20, x2: 50, y2: 120 });
    expect(Array.from(filter.mean)).toEqual([30, 70, 0.4, 100, 0, 0, 0, 0]);
    const back = filter.toBox();
    expect(back.x1).toBeCloseTo(10, 10);
    expect(back.y1).toBeCloseTo(20, 10);
    expect(back.x2).toBeCloseTo(50, 10);
    expect(back.y2).toBeCloseTo(120, 10);
  });

  it('learns a constant velocity and predicts the box ahead by it', () => {
    const filter = new KalmanBoxFilter(box(100, 200, 40, 80));
    const steps = 25;
    for (let t = 1; t <= steps; t++) {
      filter.predict();
      filter.update(box(100 + 6 * t, 200 - 3 * t, 40, 80));
    }
    // ByteTrack's small velocity noise makes the estimate converge over tens of frames, not at once.
    expect(Math.abs((filter.mean[4] as number) - 6)).toBeLessThan(0.1);
    expect(Math.abs((filter.mean[5] as number) + 3)).toBeLessThan(0.05);
    filter.predict();
    const [cx, cy] = centre(filter.toBox());
    expect(Math.abs(cx - (100 + 6 * (steps + 1)))).toBeLessThan(0.2);
    expect(Math.abs(cy - (200 - 3 * (steps + 1)))).toBeLessThan(0.1);
    // Coasting without measurements keeps the pace.
    filter.predict();
    filter.predict();
    const [cx2, cy2] = centre(filter.toBox());
    expect(Math.abs(cx2 - (100 + 6 * (steps + 3)))).toBeLessThan(0.5);
    expect(Math.abs(cy2 - (200 - 3 * (steps + 3)))).toBeLessThan(0.25);
  });

  it('pulls the estimate toward a measurement, partly', () => {
    const filter = new KalmanBoxFilter(box(100, 100, 50, 100));
    filter.predict();
    filter.update(box(110, 100, 50, 100));
    const cx = filter.mean[0] as number;
    expect(cx).toBeGreaterThan(100);
    expect(cx).toBeLessThan(110);
  });

  it('holdHeight freezes the height of a growing box while the centre still moves', () => {
    const grow = (filter: KalmanBoxFilter) => {
      for (let t = 1; t <= 10; t++) {
        filter.predict();
        filter.update(box(100 + 5 * t, 100, 50 + t, 100 + 2 * t));
      }
    };
    const held = new KalmanBoxFilter(box(100, 100, 50, 100));
    const free = new KalmanBoxFilter(box(100, 100, 50, 100));
    grow(held);
    grow(free);
    const h = held.mean[3] as number;
    held.predict(true);
    free.predict(false);
    expect(held.mean[3]).toBe(h);
    expect(free.mean[3] as number).toBeGreaterThan(h + 1);
    expect(held.mean[0] as number).toBeGreaterThan(150);
  });

  it('keeps the covariance exactly symmetric and positive definite over a long noisy run', () => {
    const random = prng(7);
    const filter = new KalmanBoxFilter(box(500, 400, 60, 120));
    for (let t = 1; t <= 2000; t++) {
      filter.predict(t % 50 > 45);
      if (t % 50 > 45) continue; // stretches of coasting, as a lost track does
      const jitter = () => (random() - 0.5) * 6;
      filter.update(box(500 + 2 * t + jitter(), 400 + jitter(), 60 + jitter(), 120 + jitter()));
    }
    const p = filter.covariance;
    for (let r = 0; r < 8; r++) for (let c = 0; c < 8; c++) expect(p[r * 8 + c]).toBe(p[c * 8 + r]);
    expect(isPositiveDefinite(p, 8)).toBe(true);
    expect(filter.mean[4]).toBeCloseTo(2, 0);
  });
});

describe('assign', () => {
  const matrix = (rows: number[][]) => new Float64Array(rows.flat());

  it('finds the optimum where picking the cheapest pair first would not', () => {
    // Greedy takes (1,1)=0, then (2,2)=2 and (0,0)=4: total 6. The optimum is 1 + 2 + 2 = 5.
    const cost = matrix([
      [4, 1, 3],
      [2, 0, 5],
      [3, 2, 2],
    ]);
    const result = assign(cost, 3, 3, 100);
    expect(result.matches).toEqual([
      [0, 1],
      [1, 0],
      [2, 2],
    ]);
    expect(result.unmatchedRows).toEqual([]);
    expect(result.unmatchedCols).toEqual([]);
  });

  it('handles more columns than rows', () => {
    const cost = matrix([
      [9, 9, 1, 9],
      [9, 2, 1.5, 9],
    ]);
    const result = assign(cost, 2, 4, 100);
    expect(result.matches).toEqual([
      [0, 2],
      [1, 1],
    ]);
    expect(result.unmatchedRows).toEqual([]);
    expect(result.unmatchedCols).toEqual([0, 3]);
  });

  it('handles more rows than columns', () => {
    const cost = matrix([
      [9, 9],
      [9, 2],
      [1, 9],
      [3, 1.5],
    ]);
    const result = assign(cost, 4, 2, 100);
    expect(result.matches).toEqual([
      [2, 0],
      [3, 1],
    ]);
    expect(result.unmatchedRows).toEqual([0, 1]);
    expect(result.unmatchedCols).toEqual([]);
  });

  it('never matches a pair above the threshold, and keeps one at it', () => {
    const result = assign(matrix([[0.81, 0.8]]), 1, 2, 0.8);
    expect(result.matches).toEqual([[0, 1]]);
    expect(assign(matrix([[0.81]]), 1, 1, 0.8).matches).toEqual([]);
  });

  it('counts an unmatched row and column as the threshold, like lapjv with cost_limit', () => {
    const cost = matrix([
      [0, 0.7],
      [0.7, 2],
    ]);
    // Two pairs at 0.7 + 0.7 cost more than one pair at 0 plus a row and a column left over (0.8).
    expect(assign(cost, 2, 2, 0.8)).toEqual({ matches: [[0, 0]], unmatchedRows: [1], unmatchedCols: [1] });
    // With a looser limit, (1,1) at 2 is still worse than crossing.
    expect(assign(cost, 2, 2, 3).matches).toEqual([
      [0, 1],
      [1, 0],
    ]);
  });

  it('treats infinite and NaN costs as forbidden pairs', () => {
    const result = assign(
      matrix([
        [Number.POSITIVE_INFINITY, 0.5],
        [Number.NaN, Number.POSITIVE_INFINITY],
      ]),
      2,
      2,
      0.9,
    );
    expect(result).toEqual({ matches: [[0, 1]], unmatchedRows: [1], unmatchedCols: [0] });
  });

  it('returns everything unmatched for an empty side', () => {
    expect(assign(new Float64Array(0), 0, 3, 1)).toEqual({
      matches: [],
      unmatchedRows: [],
      unmatchedCols: [0, 1, 2],
    });
    expect(assign(new Float64Array(0), 2, 0, 1)).toEqual({
      matches: [],
      unmatchedRows: [0, 1],
      unmatchedCols: [],
    });
  });

  it('rejects a non-finite threshold', () => {
    expect(() => assign(matrix([[1]]), 1, 1, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });

  it('agrees with exhaustive search on random rectangular matrices', () => {
    const random = prng(42);
    const objective = (
      cost: Float64Array,
      rows: number,
      cols: number,
      pairs: readonly (readonly number[])[],
      limit: number,
    ) =>
      pairs.reduce((sum, [r, c]) => sum + (cost[(r as number) * cols + (c as number)] as number), 0) +
      (limit / 2) * (rows + cols - 2 * pairs.length);
    const best = (cost: Float64Array, rows: number, cols: number, limit: number): number => {
      let optimum = Number.POSITIVE_INFINITY;
      const taken = new Uint8Array(cols);
      const walk = (r: number, sum: number, matched: number) => {
        if (r === rows) {
          optimum = Math.min(optimum, sum + (limit / 2) * (rows + cols - 2 * matched));
          return;
        }
        walk(r + 1, sum, matched);
        for (let c = 0; c < cols; c++) {
          const value = cost[r * cols + c] as number;
          if (taken[c] === 1 || !(value <= limit)) continue;
          taken[c] = 1;
          walk(r + 1, sum + value, matched + 1);
          taken[c] = 0;
        }
      };
      walk(0, 0, 0);
      return optimum;
    };
    for (let trial = 0; trial < 300; trial++) {
      const rows = 1 + Math.floor(random() * 5);
      const cols = 1 + Math.floor(random() * 5);
      const cost = new Float64Array(rows * cols).map(() =>
        random() < 0.15 ? Number.POSITIVE_INFINITY : Math.round(random() * 100) / 100,
      );
      const limit = 0.2 + random() * 0.8;
      const result = assign(cost, rows, cols, limit);
      for (const [r, c] of result.matches) expect(cost[r * cols + c] as number).toBeLessThanOrEqual(limit);
      expect(result.matches.length + result.unmatchedRows.length).toBe(rows);
      expect(result.matches.length + result.unmatchedCols.length).toBe(cols);
      expect(objective(cost, rows, cols, result.matches, limit)).toBeCloseTo(
        best(cost, rows, cols, limit),
        6,
      );
    }
  });
});

describe('ByteTracker', () => {
  const only = (objects: TrackedObject[]): TrackedObject => {
    expect(objects).toHaveLength(1);
    return objects[0] as TrackedObject;
  };

  it('keeps the ids of two objects that walk toward each other and cross', () => {
    const ids = counterIds();
    const tracker = new ByteTracker({}, ids.next);
    // A walks right, B walks left, 30 px lower; at frame 20 both are centred at x = 340 and overlap by 3/4.
    const a = (t: number) => detection(100 + 12 * t, 300, 60, 120, 0.9);
    const b = (t: number) => detection(580 - 12 * t, 330, 60, 120, 0.85);
    expect(iou(a(20), b(20))).toBeCloseTo(0.6, 5);
    const seenA = new Set<string>();
    const seenB = new Set<string>();
    for (let t = 0; t <= 40; t++) {
      const out = tracker.update([a(t), b(t)]);
      expect(out).toHaveLength(2);
      const [outA, outB] = out as [TrackedObject, TrackedObject];
      expect(outA.x1).toBe(a(t).x1);
      expect(outB.x1).toBe(b(t).x1);
      seenA.add(outA.trackId);
      seenB.add(outB.trackId);
    }
    expect([...seenA]).toEqual(['1']);
    expect([...seenB]).toEqual(['2']);
  });

  it('gives an object missing for 5 frames its id back when it reappears on its course', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    const at = (t: number) => detection(100 + 8 * t, 200 + 3 * t, 50, 100);
    for (let t = 0; t < 10; t++) expect(only(tracker.update([at(t)])).trackId).toBe('1');
    for (let t = 10; t < 15; t++) expect(tracker.update([])).toEqual([]);
    expect(tracker.activeTracks).toBe(1);
    const back = only(tracker.update([at(15)]));
    expect(back.trackId).toBe('1');
    expect(back.hits).toBe(11);
  });

  it('freezes the size of a lost track, so an object that was shrinking is re-found at its last size', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    // Walking away from the camera: 4 px smaller every frame, then hidden for 25 frames.
    for (let t = 0; t < 15; t++) tracker.update([detection(500, 400, 100 - 2 * t, 200 - 4 * t)]);
    for (let t = 0; t < 25; t++) tracker.update([]);
    expect(only(tracker.update([detection(500, 400, 72, 144)])).trackId).toBe('1');
  });

  it('follows an occluded object through low-score detections in the second pass', () => {
    const run = (lowThreshold: number) => {
      const tracker = new ByteTracker({ lowThreshold }, counterIds().next);
      const at = (t: number, score: number) => detection(100 + 5 * t, 200, 50, 100, score);
      for (let t = 0; t < 6; t++) tracker.update([at(t, 0.9)]);
      const occluded = [6, 7, 8, 9].map((t) => tracker.update([at(t, 0.3)]));
      const after = tracker.update([at(10, 0.9)]);
      return { occluded, after };
    };
    const { occluded, after } = run(0.1);
    for (const [k, out] of occluded.entries()) {
      const object = only(out);
      expect(object.trackId).toBe('1');
      expect(object.score).toBe(0.3);
      expect(object.hits).toBe(7 + k);
    }
    expect(only(after).trackId).toBe('1');
    // Control: with the low band closed the same frames return nothing.
    expect(run(0.4).occluded.every((out) => out.length === 0)).toBe(true);
  });

  it('never starts a track from a detection below the new-track threshold', () => {
    const ids = counterIds();
    const tracker = new ByteTracker({}, ids.next);
    for (let t = 0; t < 20; t++) {
      expect(tracker.update([detection(300, 300, 50, 100, 0.3), detection(600, 300, 50, 100, 0.55)])).toEqual(
        [],
      );
    }
    expect(tracker.activeTracks).toBe(0);
    expect(ids.issued).toEqual([]);
  });

  it('keeps classes apart: a car and a person at the same place get their own ids', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    const ids = new Map<number, Set<string>>([
      [0, new Set()],
      [2, new Set()],
    ]);
    for (let t = 0; t < 15; t++) {
      const person = detection(200 + 4 * t, 300, 60, 120, 0.9, 0);
      const car = detection(200 + 4 * t, 300, 60, 120, 0.8, 2);
      // Alternating order, so a tracker matching by position only would swap them.
      const out = tracker.update(t % 2 === 0 ? [person, car] : [car, person]);
      expect(out).toHaveLength(2);
      for (const object of out) ids.get(object.classIndex)?.add(object.trackId);
    }
    expect([...(ids.get(0) ?? [])]).toEqual(['1']);
    expect([...(ids.get(2) ?? [])]).toEqual(['2']);
  });

  it('does not hand a track of one class to a detection of another', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    for (let t = 0; t < 5; t++) tracker.update([detection(200, 300, 60, 120, 0.9, 0)]);
    const car = only(tracker.update([detection(200, 300, 60, 120, 0.9, 2)]));
    expect(car.trackId).toBe('2');
    expect(car.classIndex).toBe(2);
  });

  it('confirms a track from its third hit and keeps it confirmed', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    const at = (t: number) => detection(100 + 3 * t, 100, 40, 80);
    const states = [0, 1, 2, 3].map((t) => only(tracker.update([at(t)])));
    expect(states.map((o) => [o.hits, o.confirmed])).toEqual([
      [1, false],
      [2, false],
      [3, true],
      [4, true],
    ]);
    tracker.update([]);
    tracker.update([]);
    const back = only(tracker.update([at(6)]));
    expect([back.trackId, back.hits, back.confirmed]).toEqual(['1', 5, true]);
  });

  it('drops a one-frame sighting that is not seen again', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    expect(only(tracker.update([detection(300, 300, 50, 100)])).trackId).toBe('1');
    tracker.update([]);
    expect(tracker.activeTracks).toBe(0);
    expect(only(tracker.update([detection(300, 300, 50, 100)])).trackId).toBe('2');
  });

  it('forgets a track lost for more than maxLostFrames', () => {
    const afterGap = (gap: number) => {
      const tracker = new ByteTracker({}, counterIds().next);
      for (let t = 0; t < 3; t++) tracker.update([detection(400, 300, 50, 100)]);
      for (let t = 0; t < gap; t++) tracker.update([]);
      return only(tracker.update([detection(400, 300, 50, 100)])).trackId;
    };
    expect(afterGap(30)).toBe('1');
    expect(afterGap(31)).toBe('2');

    const short = new ByteTracker({ maxLostFrames: 3 }, counterIds().next);
    for (let t = 0; t < 3; t++) short.update([detection(400, 300, 50, 100)]);
    for (let t = 0; t < 4; t++) short.update([]);
    expect(short.activeTracks).toBe(0);
  });

  it('ignores boxes without area instead of tracking them', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    const flat: Detection = { x1: 10, y1: 50, x2: 80, y2: 50, score: 0.9, classIndex: 0 };
    expect(tracker.update([flat, detection(300, 300, 50, 100)]).map((o) => o.trackId)).toEqual(['1']);
    expect(tracker.activeTracks).toBe(1);
  });

  it('takes ids only from nextId, each once, also across reset()', () => {
    const ids = counterIds();
    const tracker = new ByteTracker({}, ids.next);
    const objects = [
      detection(100, 100, 50, 100),
      detection(400, 100, 50, 100),
      detection(700, 100, 50, 100),
    ];
    for (let t = 0; t < 4; t++) tracker.update(objects);
    expect(ids.issued).toEqual(['1', '2', '3']);
    tracker.reset();
    expect(tracker.activeTracks).toBe(0);
    expect(tracker.update(objects).map((o) => o.trackId)).toEqual(['4', '5', '6']);
  });

  /**
   * Objects random-walking in a 1920x1080 frame at up to 20 px per frame, which for the smaller boxes is
   * half their width, so following them needs the motion model; detections with pixel noise, 5% misses and
   * 5% low scores.
   */
  function simulate(objectCount: number, frames: number, seed: number) {
    const random = prng(seed);
    const objects = Array.from({ length: objectCount }, (_, i) => ({
      cx: 100 + random() * 1720,
      cy: 100 + random() * 880,
      vx: (random() - 0.5) * 24,
      vy: (random() - 0.5) * 24,
      w: 30 + random() * 50,
      h: 60 + random() * 100,
      classIndex: i % 2,
    }));
    const video: { truth: number[]; detections: Detection[] }[] = [];
    for (let f = 0; f < frames; f++) {
      const truth: number[] = [];
      const detections: Detection[] = [];
      for (const [i, o] of objects.entries()) {
        o.vx = Math.max(-20, Math.min(20, o.vx + (random() - 0.5) * 3));
        o.vy = Math.max(-20, Math.min(20, o.vy + (random() - 0.5) * 3));
        o.cx += o.vx;
        o.cy += o.vy;
        if (o.cx < o.w || o.cx > 1920 - o.w) o.vx = -o.vx;
        if (o.cy < o.h || o.cy > 1080 - o.h) o.vy = -o.vy;
        const roll = random();
        if (roll < 0.05) continue; // missed by the detector
        const score = roll < 0.1 ? 0.2 + random() * 0.25 : 0.6 + random() * 0.39;
        const noise = () => (random() - 0.5) * 3;
        truth.push(i);
        detections.push({
          x1: o.cx - o.w / 2 + noise(),
          y1: o.cy - o.h / 2 + noise(),
          x2: o.cx + o.w / 2 + noise(),
          y2: o.cy + o.h / 2 + noise(),
          score,
          classIndex: o.classIndex,
        });
      }
      video.push({ truth, detections });
    }
    return video;
  }

  it('keeps at least 95% id continuity for 30 random-walking objects over 200 frames', () => {
    const ids = counterIds();
    const tracker = new ByteTracker({}, ids.next);
    const video = simulate(30, 200, 2024);
    const lastId = new Map<number, string>();
    let transitions = 0;
    let switches = 0;
    let detected = 0;
    let returned = 0;
    let overlaps = 0;
    for (const frame of video) {
      for (const [k, a] of frame.detections.entries()) {
        for (const b of frame.detections.slice(k + 1))
          if (a.classIndex === b.classIndex && iou(a, b) > 0) overlaps++;
      }
      const out = tracker.update(frame.detections);
      const byBox = new Map(out.map((o) => [`${o.x1},${o.y1}`, o]));
      for (const [k, d] of frame.detections.entries()) {
        detected++;
        const object = byBox.get(`${d.x1},${d.y1}`);
        if (object === undefined) continue;
        returned++;
        const truth = frame.truth[k] as number;
        const previous = lastId.get(truth);
        if (previous !== undefined) {
          transitions++;
          if (previous !== object.trackId) switches++;
        }
        lastId.set(truth, object.trackId);
      }
    }
    const continuity = 1 - switches / transitions;
    expect(returned / detected).toBeGreaterThan(0.9);
    expect(transitions).toBeGreaterThan(5000);
    // The scene is crowded enough for objects to cross: same-class boxes overlap hundreds of times.
    expect(overlaps).toBeGreaterThan(300);
    expect(continuity).toBeGreaterThanOrEqual(0.95);
    expect(new Set(ids.issued).size).toBe(ids.issued.length);
    console.log(
      `tracking continuity: ${(continuity * 100).toFixed(2)}% (${switches} switches in ${transitions}), ` +
        `${ids.issued.length} ids for 30 objects, ${overlaps} overlapping same-class pairs`,
    );
  });

  it('performance sanity: 50 detections per frame over 500 frames', () => {
    const tracker = new ByteTracker({}, counterIds().next);
    const video = simulate(50, 500, 99);
    const times = video.map((frame) => {
      const start = performance.now();
      tracker.update(frame.detections);
      return performance.now() - start;
    });
    const mean = times.reduce((sum, t) => sum + t, 0) / times.length;
    // The median too, because on a shared machine the mean carries scheduling stalls.
    const median = [...times].sort((a, b) => a - b)[times.length >> 1] as number;
    console.log(
      `ByteTracker.update, 50 detections: mean ${mean.toFixed(3)} ms, median ${median.toFixed(3)} ms`,
    );
    expect(tracker.activeTracks).toBeGreaterThanOrEqual(45);
  });
});
