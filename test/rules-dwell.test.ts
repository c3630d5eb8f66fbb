import { describe, expect, it } from 'vitest';
import { AreaDwell } from '../engine/rules/dwell';
import { type AppRuleContext, AppRuleState } from '../engine/rules/evaluate';
import type { FrameInfo } from '../engine/rules/rule-kind';
import { Rule } from '../engine/rules/schema';
import { STILL_AFTER_MS, TrackMotion } from '../engine/rules/stationary';
import { compileCheck } from '../engine/schema/ajv';
import type { TrackedObject } from '../engine/vision/types';
import { standing } from './helpers/rule-tracks';

/** Frames 100 ms apart (10 fps). */
const frame = (n: number): FrameInfo => ({ id: n, timestampMs: n * 100, width: 1000, height: 1000 });

const obj = standing;

const entry = (classId: string, name: string) => ({
  class_id: classId,
  name,
  color: '#00ff00',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
});

/** Every sighting counts at once: inertia has its own tests. */
const app = (rule: Rule, over: Partial<AppRuleContext> = {}) =>
  new AppRuleState({
    appId: 'app',
    appType: 1,
    rule: { inertia: { hits: 1, frames: 1 }, classes: [entry('0', 'person'), entry('2', 'car')], ...rule },
    polygon: [],
    ...over,
  });

describe('AreaDwell', () => {
  it('counts each stay from the first sighting inside, per area, and starts again after leaving', () => {
    const dwell = new AreaDwell();
    const at = (nowMs: number, areas: string[]) =>
      Object.fromEntries(dwell.update(nowMs, [{ trackId: 'a', areas }]).get('a') ?? []);
    expect([
      at(0, ['x']),
      at(500, ['x', 'y']),
      at(1500, ['x', 'y']),
      at(2000, ['y']),
      at(2500, ['x', 'y']),
    ]).toEqual([{ x: 0 }, { x: 500, y: 0 }, { x: 1500, y: 1000 }, { y: 1500 }, { x: 0, y: 2000 }]);
  });

  it('keeps a stay over a gap of up to 2 s without a sighting, and ends it after a longer one', () => {
    const dwell = new AreaDwell();
    const at = (nowMs: number) =>
      dwell
        .update(nowMs, [{ trackId: 'a', areas: ['x'] }])
        .get('a')
        ?.get('x');
    expect([at(0), at(2000), at(4001)]).toEqual([0, 2000, 0]);
  });
});

describe('TrackMotion', () => {
  /** The state of track a on each foot point, 1 s apart. */
  const states = (feet: [number, number][], size = 100) => {
    const motion = new TrackMotion();
    return feet.map((foot, i) => motion.update(i * 1000, [{ trackId: 'a', foot, size }]).get('a'));
  };

  it('turns stationary after 3 s within 10% of the box size, detection jitter included', () => {
    expect(STILL_AFTER_MS).toBe(3000);
    expect(
      states([
        [100, 100],
        [106, 100],
        [100, 108],
        [94, 96],
        [100, 100],
      ]),
    ).toEqual(['moving', 'moving', 'moving', 'stationary', 'stationary']);
  });

  it('stays moving while the foot point walks on, and counts a new stop from where it stopped', () => {
    expect(
      states([
        [100, 100],
        [120, 100],
        [140, 100],
        [160, 100],
        [160, 100],
        [160, 100],
        [161, 100],
      ]),
    ).toEqual(['moving', 'moving', 'moving', 'moving', 'moving', 'moving', 'stationary']);
  });

  it('scales the bound with the box: 11 px is a move for a 100 px box, not for a 200 px one', () => {
    const still = (size: number) =>
      states(
        [
          [100, 100],
          [111, 100],
          [111, 100],
          [111, 100],
        ],
        size,
      ).at(-1);
    expect([still(100), still(200)]).toEqual(['moving', 'stationary']);
  });
});

describe('dwell and state on reported objects', () => {
  /** x from `left` to `left` + 400, the whole height. */
  const band = (left: number) => [
    [left, 0],
    [left + 400, 0],
    [left + 400, 1000],
    [left, 1000],
  ];

  it('carry the seconds in the region since the foot point entered it, and in each zone', () => {
    const state = app({ interval: 0 }, { polygon: band(200), zones: [{ name: 'east', polygon: band(400) }] });
    // Walks right 100 px a second: enters the region at x = 205 (frame 10), the zone at x = 405 (30).
    const reports = Array.from(
      { length: 41 },
      (_, n) => state.evaluate(frame(n), [obj('a', [105 + n * 10, 500])]).firings[0]?.objects[0],
    );
    expect(reports[9]).toBeUndefined();
    expect(
      [10, 11, 30, 31, 40].map((n) => [reports[n]?.dwell, reports[n]?.zone_dwell, reports[n]?.state]),
    ).toEqual([
      [0, {}, 'moving'],
      [0.1, {}, 'moving'],
      [2, { east: 0 }, 'moving'],
      [2.1, { east: 0.1 }, 'moving'],
      [3, { east: 1 }, 'moving'],
    ]);
  });

  it('leave images without dwell and state: they have no tracks', () => {
    const state = app({}, { perImage: true });
    const [object] = state.evaluate(frame(0), [obj('a', [100, 100])]).firings[0]?.objects ?? [];
    expect([object?.dwell, object?.state]).toEqual([undefined, undefined]);
  });
});

describe('stationary: "once"', () => {
  /** Per second over `seconds` s, the tracks in firings; feet(n) gives the objects of frame n. */
  const firedTracks = (rule: Rule, seconds: number, feet: (n: number) => TrackedObject[]) => {
    const state = app(rule);
    const fired: string[][] = [];
    for (let n = 0; n < seconds * 10; n++) {
      const firings = state.evaluate(frame(n), feet(n)).firings;
      if (n % 10 === 0 || firings.length > 0) {
        if (n % 10 === 0) fired.push([]);
        fired.at(-1)?.push(...firings.flatMap((f) => f.objects.map((o) => o.track_id)));
      }
    }
    return fired;
  };
  /** A car parked at (800, 100) for the whole run; a person walking 100 px a second. */
  const scene = (n: number) => [obj('car', [800, 100], 2), obj('walker', [100 + n * 10, 600])];

  it('lets a parked car alarm once while a walker fires every interval', () => {
    expect(firedTracks({ interval: 1, stationary: 'once' }, 6, scene)).toEqual([
      ['walker', 'car'],
      ['walker'],
      ['walker'],
      ['walker'],
      ['walker'],
      ['walker'],
    ]);
  });

  it('fires the parked car every interval by default ("always")', () => {
    expect(firedTracks({ interval: 1 }, 3, scene)).toEqual([
      ['walker', 'car'],
      ['walker', 'car'],
      ['walker', 'car'],
    ]);
  });

  it('fires again, once, for a car that drives off and parks elsewhere', () => {
    // Parked until 4 s, drives 50 px a second until 6 s, parked again.
    const x = (n: number) => 800 - 5 * Math.min(Math.max(n - 40, 0), 20);
    const fired = firedTracks({ interval: 1, stationary: 'once' }, 10, (n) => [obj('car', [x(n), 100], 2)]);
    expect(fired).toEqual([['car'], [], [], [], ['car'], ['car'], ['car'], [], [], []]);
  });

  it('keeps a counter of objects present now from alarming again for a parked car alone', () => {
    const counter = { numeric_type: 0 as const, distance: 0, min_count: 1, max_count: 0, class_counts: [] };
    expect(
      firedTracks({ interval: 1, stationary: 'once', counter }, 4, (n) => [
        obj('car', [800, 100], 2),
        ...(n >= 20 ? [obj('walker', [100 + n * 10, 600])] : []),
      ]),
    ).toEqual([['car'], [], ['walker'], ['walker']]);
  });

  it('is one of "always" and "once"', () => {
    const check = compileCheck<Rule>(Rule, 'rule');
    expect([check({ stationary: 'once' }).ok, check({ stationary: 'always' }).ok]).toEqual([true, true]);
    expect(check({ stationary: 'never' })).toEqual({
      ok: false,
      error: 'rule.stationary: must be one of ["always","once"]',
    });
  });
});
