import { describe, expect, it } from 'vitest';
import { type AppRuleContext, AppRuleState } from '../engine/rules/evaluate';
import { REMOVED_COLOR } from '../engine/rules/removed-object';
import type { FrameInfo, RuleFiring } from '../engine/rules/rule-kind';
import type { Rule } from '../engine/rules/schema';
import { ruleProblems } from '../engine/rules/validate';
import type { Frame, TrackedObject } from '../engine/vision/types';
import { standing } from './helpers/rule-tracks';

/** Frames 100 ms apart (10 fps) of a 320x240 source. */
const frame = (n: number): FrameInfo => ({ id: n, timestampMs: n * 100, width: 320, height: 240 });

const BACKPACK = {
  class_id: '24',
  name: 'backpack',
  color: '#ff8800',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
};

/** A type-3 app; every sighting counts at once (inertia has its own tests). */
const app = (rule: Rule, over: Partial<AppRuleContext> = {}) =>
  new AppRuleState({
    appId: 'watch',
    appType: 3,
    rule: { inertia: { hits: 1, frames: 1 }, classes: [BACKPACK], ...rule },
    polygon: [],
    ...over,
  });

/** Runs frames 0..last through the app; returns the frames that fired, with their firings. */
function run(
  state: AppRuleState,
  last: number,
  objectsAt: (n: number) => TrackedObject[],
  pictureAt?: (n: number) => Frame,
): Array<{ frame: number; firings: RuleFiring[] }> {
  const fired: Array<{ frame: number; firings: RuleFiring[] }> = [];
  for (let n = 0; n <= last; n++) {
    const { firings } = state.evaluate(frame(n), objectsAt(n), pictureAt?.(n));
    if (firings.length > 0) fired.push({ frame: n, firings });
  }
  return fired;
}

/** The bag's report as the rule gives it: a 20x40 box standing on (200, 200). */
const bagReport = (left: number) => ({
  track_id: 'bag',
  x: 200,
  y: 180,
  w: 20,
  h: 40,
  score: 0.9,
  class_id: '24',
  name: 'backpack',
  dwell: expect.any(Number),
  state: 'stationary',
  left,
});

describe('left objects', () => {
  const bag = () => standing('bag', [200, 200], 24);
  /** A person 40 px tall, its foot point `dx` px right of the bag's. */
  const person = (dx: number) => standing('p', [200 + dx, 200], 0);

  it('fires once when the bag has stood still for the wait after its owner walked off', () => {
    const left = app({ left_object: { seconds: 5, radius: 1 } });
    // The owner stands beside the bag for 2 s, then is gone: the bag is left from 2 s, fires at 7 s.
    const fired = run(left, 150, (n) => (n <= 20 ? [bag(), person(30)] : [bag()]));
    expect(fired).toEqual([
      { frame: 70, firings: [{ id: 'watch:24', class_id: '24', objects: [bagReport(5)] }] },
    ]);
  });

  it('never fires while someone stays within the radius, and fires from the stop when they stand further', () => {
    const attended = app({ left_object: { seconds: 5, radius: 1 } });
    expect(run(attended, 150, () => [bag(), person(40)])).toEqual([]);
    const alone = app({ left_object: { seconds: 5, radius: 1 } });
    // 41 px is more than one of the person's 40 px heights: nobody near, so left from its stop at 0.
    expect(run(alone, 150, () => [bag(), person(41)])).toEqual([
      { frame: 50, firings: [{ id: 'watch:24', class_id: '24', objects: [bagReport(5)] }] },
    ]);
  });

  it('measures the distance in metres on the ground when the app has a ground scale', () => {
    // 1 px = 1 cm: a person 45 px off is 0.45 m away, within 0.5 m; 60 px is 0.6 m, beyond it.
    const ground = ([x, y]: readonly [number, number]) => [x / 100, y / 100] as const;
    const rule = { left_object: { seconds: 5, radius: 0, meters: 0.5 } };
    expect(run(app(rule, { ground }), 100, () => [bag(), person(45)])).toEqual([]);
    expect(run(app(rule, { ground }), 100, () => [bag(), person(60)]).map((f) => f.frame)).toEqual([50]);
  });

  it('does not fire for a bag that is carried (it never stands still)', () => {
    const left = app({ left_object: { seconds: 5, radius: 1 } });
    expect(run(left, 150, (n) => [standing('bag', [100 + 2 * n, 200], 24)])).toEqual([]);
  });

  it('refuses a person class the model does not know', () => {
    const rule: Rule = { left_object: { seconds: 5, radius: 1, person_class_id: '99' } };
    expect(ruleProblems(rule, new Set(['0', '24']))).toEqual([
      'rule.left_object.person_class_id: the model has no class "99"',
    ]);
  });
});

describe('removed objects', () => {
  const W = 320;
  const H = 240;
  /** A grey scene (level 100) with a bright 60x60 box (level 220) at (100, 100) while `withBox`, and dark pixels (level 20) where `cover` is. */
  const picture = (withBox: boolean, cover?: { x1: number; y1: number; x2: number; y2: number }): Frame => {
    const data = new Uint8Array(W * H * 3);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const inBox = withBox && x >= 100 && x < 160 && y >= 100 && y < 160;
        const covered = cover && x >= cover.x1 && x < cover.x2 && y >= cover.y1 && y < cover.y2;
        data.fill(covered ? 20 : inBox ? 220 : 100, (y * W + x) * 3, (y * W + x) * 3 + 3);
      }
    }
    return { data, width: W, height: H };
  };
  const withBox = picture(true);
  const gone = picture(false);
  const shelf = {
    name: 'shelf',
    polygon: [
      [90, 90],
      [170, 90],
      [170, 170],
      [90, 170],
    ],
  };
  const rule: Rule = { removed_object: { seconds: 3, fraction: 0.5 } };

  it('fires once, 3 s after the box was taken from the zone, with where it was', () => {
    const watch = app(rule, { zones: [shelf] });
    // Taken at frame 20 (2 s): the zone differs from frame 20 on and fires at frame 50.
    const fired = run(
      watch,
      150,
      () => [],
      (n) => (n < 20 ? withBox : gone),
    );
    expect(fired).toEqual([
      {
        frame: 50,
        firings: [
          {
            id: 'watch:removed',
            class_id: 'removed',
            objects: [
              {
                track_id: '',
                x: 130,
                y: 130,
                w: 60,
                h: 60,
                // 30x30 of the zone's 40x40 thumbnail pixels.
                score: 0.563,
                class_id: 'removed',
                name: 'shelf',
                area: 3600,
                zones: ['shelf'],
                removed: 3,
              },
            ],
          },
        ],
      },
    ]);
  });

  it('shows the area from its firing on, until the background has learned the change (about 16.6 s)', () => {
    const watch = app(rule, { zones: [shelf] });
    const shownAt: number[] = [];
    let first: unknown;
    for (let n = 0; n <= 300; n++) {
      const { removed } = watch.evaluate(frame(n), [], n < 20 ? withBox : gone);
      if (removed.length === 0) continue;
      shownAt.push(n);
      first ??= removed;
    }
    // The contrast of 120 levels fades below 30 after 12 s x ln 4 = 16.6 s from frame 20.
    expect([shownAt[0], shownAt.at(-1), shownAt.length]).toEqual([50, 186, 137]);
    expect(first).toEqual([
      {
        track_id: '',
        x: 130,
        y: 130,
        w: 60,
        h: 60,
        score: 0.563,
        class_id: 'removed',
        name: 'shelf',
        area: 3600,
        zones: ['shelf'],
        removed: 3,
        color: REMOVED_COLOR,
      },
    ]);
  });

  it('does not fire while a tracked person stands in front of the box, and does for the same pixels untracked', () => {
    const front = { x1: 95, y1: 60, x2: 165, y2: 165 };
    const covered = picture(true, front);
    const personBox = { ...standing('p', [130, 165], 0), x1: 95, y1: 60, x2: 165 };
    const pictures = (n: number) => (n < 20 ? withBox : covered);
    expect(run(app(rule, { zones: [shelf] }), 150, (n) => (n < 20 ? [] : [personBox]), pictures)).toEqual([]);
    expect(run(app(rule, { zones: [shelf] }), 150, () => [], pictures).map((f) => f.frame)).toEqual([50]);
  });

  it('starts the wait again for a zone edited away and back', () => {
    const context = (zones: (typeof shelf)[]) => ({
      appId: 'watch',
      appType: 3 as const,
      rule: { classes: [BACKPACK], ...rule },
      polygon: [],
      zones,
    });
    const watch = new AppRuleState(context([shelf]));
    const other = {
      name: 'other',
      polygon: [
        [0, 0],
        [50, 0],
        [50, 50],
        [0, 50],
      ],
    };
    const fired: number[] = [];
    for (let n = 0; n <= 100; n++) {
      if (n === 30) watch.setContext(context([other]));
      if (n === 35) watch.setContext(context([shelf]));
      if (watch.evaluate(frame(n), [], n < 20 ? withBox : gone).firings.length > 0) fired.push(n);
    }
    // Taken at frame 20, but the zone is back only from frame 35: 3 s later.
    expect(fired).toEqual([65]);
  });

  it('does not fire for a change shorter than the wait', () => {
    const watch = app(rule);
    expect(
      run(
        watch,
        150,
        () => [],
        (n) => (n >= 20 && n < 45 ? gone : withBox),
      ),
    ).toEqual([]);
  });
});
