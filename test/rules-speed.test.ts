import { describe, expect, it } from 'vitest';
import { AppRuleState } from '../engine/rules/evaluate';
import { applyHomography, groundMap, homography } from '../engine/rules/ground';
import type { FrameInfo } from '../engine/rules/rule-kind';
import type { Rule } from '../engine/rules/schema';
import { TrackSpeeds } from '../engine/rules/speed';
import { ruleProblems } from '../engine/rules/validate';
import type { Point as Pt } from '../engine/vision/types';
import { standing } from './helpers/rule-tracks';

const near = (a: readonly number[], b: readonly number[], eps = 1e-6) =>
  a.every((v, i) => Math.abs(v - (b[i] ?? NaN)) < eps);

describe('ground calibration', () => {
  // A perspective map (it has a horizon: g and h are not 0).
  const TRUE = [0.02, 0.005, -1, 0.001, 0.05, -2, 0.0001, 0.002, 1];
  const IMAGE: Pt[] = [
    [100, 500],
    [700, 520],
    [600, 200],
    [150, 180],
  ];

  it('recovers the homography from four points: a fifth maps as the true one', () => {
    const h = homography(
      IMAGE,
      IMAGE.map((p) => applyHomography(TRUE, p)),
    );
    const fifth: Pt = [400, 350];
    expect(h && near(applyHomography(h, fifth), applyHomography(TRUE, fifth))).toBe(true);
  });

  it('has none when three points lie on one line, in the image or on the ground', () => {
    const square: Pt[] = [
      [0, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ];
    const collinear: Pt[] = [
      [0, 0],
      [5, 5],
      [10, 10],
      [0, 10],
    ];
    expect([homography(collinear, square), homography(square, collinear)]).toEqual([null, null]);
  });

  it('falls back to the length_reference scale, and to nothing', () => {
    const scale = groundMap(undefined, { pixels: 200, meters: 5 });
    expect(scale?.([40, 80])).toEqual([1, 2]);
    expect(groundMap(undefined, undefined)).toBeNull();
  });
});

describe('TrackSpeeds', () => {
  /** Speed and heading of track a, 100 ms apart on the given ground positions; '-' while unknown. */
  const run = (path: Pt[]) => {
    const speeds = new TrackSpeeds();
    return path.map((ground, i) => {
      const v = speeds.update(i * 100, [{ trackId: 'a', ground }]).get('a');
      return v ? [Math.round(v.speed * 1000) / 1000, Math.round(v.heading)] : '-';
    });
  };

  it('fits the ground track of the last 2 s, from half a second on, with the heading', () => {
    // 1.5 m/s along +x for 0.8 s, then along +y.
    const path: Pt[] = Array.from({ length: 30 }, (_, i) => (i <= 8 ? [0.15 * i, 0] : [1.2, 0.15 * (i - 8)]));
    const result = run(path);
    expect(result.slice(0, 7)).toEqual(['-', '-', '-', '-', '-', [1.5, 0], [1.5, 0]]);
    // Once the whole window lies on the second leg: 1.5 m/s at 90 degrees.
    expect(result.at(-1)).toEqual([1.5, 90]);
  });
});

describe('speed on reported objects and the speed rule', () => {
  const obj = standing;
  const entry = (classId: string) => ({
    class_id: classId,
    name: classId === '0' ? 'person' : 'car',
    color: '#00ff00',
    threshold: 0.5,
    min_pixel: 0,
    max_pixel: 0,
  });
  const frame = (n: number): FrameInfo => ({ id: n, timestampMs: n * 100, width: 1000, height: 1000 });
  const rule: Rule = {
    interval: 1,
    inertia: { hits: 1, frames: 1 },
    classes: [entry('0'), entry('2')],
    speed: [{ class_id: '2', min_speed: 8, max_speed: 0 }],
  };
  // 10 px per metre: the car drives 10 m/s (10 px a frame) rightward, the person walks 1.4 m/s down.
  const scene = (n: number) => [obj('p', [100, 100 + 1.4 * n], 0), obj('c', [200 + 10 * n, 500], 2)];

  it('fires for the car over its minimum under the interval, with speed and heading on the objects', () => {
    const state = new AppRuleState({
      appId: 'app',
      appType: 1,
      rule,
      polygon: [],
      ground: groundMap(undefined, { pixels: 10, meters: 1 }) ?? undefined,
    });
    const frames = Array.from({ length: 31 }, (_, n) => state.evaluate(frame(n), scene(n)).firings);
    const speeding = frames
      .map((firings, n) => [n, firings.filter((f) => f.id === 'app:speed:2')] as const)
      .filter(([, firings]) => firings.length > 0)
      .map(([n, [firing]]) => [n, firing?.objects.map((o) => [o.track_id, o.speed, o.heading])]);
    expect(speeding).toEqual([
      [5, [['c', 10, 0]]],
      [15, [['c', 10, 0]]],
      [25, [['c', 10, 0]]],
    ]);
    // The class rule (interval 1 s) fires at 0, 10, 20, 30: the person's speed from frame 5 on.
    const people = frames.map((firings) => firings.find((f) => f.id === 'app:0')?.objects[0]);
    expect(people.flatMap((o) => (o ? [[o.speed, o.heading]] : []))).toEqual([
      [undefined, undefined],
      [1.4, 90],
      [1.4, 90],
      [1.4, 90],
    ]);
  });

  it('times speed and dwell by the media clock and the interval by arrival, for frames delivered at twice their rate', () => {
    const state = new AppRuleState({
      appId: 'app',
      appType: 1,
      rule,
      polygon: [],
      ground: groundMap(undefined, { pixels: 10, meters: 1 }) ?? undefined,
    });
    // The same scene, its frames 100 ms apart in the media but arriving 50 ms apart.
    const doubled = (n: number): FrameInfo => ({ ...frame(n), timestampMs: n * 50, mediaMs: n * 100 });
    const frames = Array.from({ length: 41 }, (_, n) => state.evaluate(doubled(n), scene(n)).firings);
    const people = frames.flatMap((firings, n) => {
      const person = firings.find((f) => f.id === 'app:0')?.objects[0];
      return person ? [[n, person.speed, person.dwell]] : [];
    });
    // The class rule fires a second of arrival apart (20 frames), the person walking 1.4 m/s.
    expect(people).toEqual([
      [0, undefined, 0],
      [20, 1.4, 2],
      [40, 1.4, 4],
    ]);
  });

  it('gives no speed and never fires without a calibration or length_reference', () => {
    const state = new AppRuleState({ appId: 'app', appType: 1, rule, polygon: [] });
    const firings = Array.from({ length: 21 }, (_, n) => state.evaluate(frame(n), scene(n)).firings).flat();
    expect(firings.some((f) => f.id === 'app:speed:2')).toBe(false);
    expect(firings.flatMap((f) => f.objects).some((o) => 'speed' in o || 'heading' in o)).toBe(false);
  });

  it('refuses a limit of an unknown or repeated class, and bounds out of order', () => {
    const limit = (classId: string, min: number, max: number) => ({
      class_id: classId,
      min_speed: min,
      max_speed: max,
    });
    expect(
      ruleProblems({ speed: [limit('0', 1, 0), limit('0', 3, 2), limit('9', 0, 0)] }, new Set(['0'])),
    ).toEqual([
      'rule.speed[1].class_id: duplicate class_id "0"',
      'rule.speed[1]: min_speed 3 is greater than max_speed 2',
      'rule.speed[2].class_id: the model has no class "9"',
    ]);
  });
});
