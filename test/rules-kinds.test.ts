import { describe, expect, it } from 'vitest';
import { Counting } from '../engine/rules/counter';
import { CrossingRule } from '../engine/rules/kinds/crossing';
import { LeftObjectRule } from '../engine/rules/kinds/left-object';
import { LoiteringRule } from '../engine/rules/kinds/loitering';
import { PresenceRule } from '../engine/rules/kinds/presence';
import { RemovedObjectRule } from '../engine/rules/kinds/removed-object';
import { SpeedRule } from '../engine/rules/kinds/speed';
import { REMOVED_COLOR } from '../engine/rules/removed-object';
import type { AppView, Match, RuleInput } from '../engine/rules/rule-kind';
import type { ClassEntry, Counter, Rule } from '../engine/rules/schema';
import { TrackMotion } from '../engine/rules/stationary';
import { footOf } from '../engine/vision/geometry';
import type { Frame, Point, TrackedObject } from '../engine/vision/types';

/**
 * Each rule kind of engine/rules/kinds/ alone, as the orchestrator (evaluate.ts) drives it: an app's
 * frame in (RuleInput), its firings out, compared whole. rules-evaluate.test.ts covers them together.
 */

const entry = (class_id: string, name: string): ClassEntry => ({
  class_id,
  name,
  color: '#00ff00',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
});
const PERSON = entry('0', 'person');
const CAR = entry('2', 'car');
const BAG = entry('24', 'backpack');

const counter = (over: Partial<Counter> = {}): Counter => ({
  numeric_type: 0,
  distance: 0,
  min_count: 1,
  max_count: 0,
  class_counts: [],
  ...over,
});

function view(rule: Rule, over: Partial<AppView> = {}): AppView {
  return {
    appId: 'app',
    appType: 1,
    rule,
    entries: new Map((rule.classes ?? []).map((e) => [e.class_id, e])),
    region: null,
    line: null,
    lineDirection: 'both',
    zones: [],
    masks: [],
    perImage: false,
    ...over,
  };
}

/** A confirmed 20x40 box standing on `foot`. */
function tracked(trackId: string, [x, y]: Point, classIndex = 0): TrackedObject {
  return {
    trackId,
    x1: x - 10,
    y1: y - 40,
    x2: x + 10,
    y2: y,
    score: 0.9,
    classIndex,
    hits: 5,
    confirmed: true,
  };
}

function match(object: TrackedObject, of: ClassEntry, over: Partial<Match> = {}): Match {
  return { object, entry: of, foot: footOf(object), inRegion: true, steady: true, ...over };
}

/** The app's frame at `seconds`; every match present unless it says otherwise. */
function input(app: AppView, seconds: number, matches: Match[], over: Partial<RuleInput> = {}): RuleInput {
  return {
    app,
    frame: { id: Math.round(seconds * 10), timestampMs: seconds * 1000, width: 160, height: 120 },
    nowMs: seconds * 1000,
    matches,
    present: matches.filter((m) => m.inRegion && m.steady),
    objects: matches.map((m) => m.object),
    ...over,
  };
}

/** How a 20x40 box standing on `foot` is reported. */
const reported = (trackId: string, [x, y]: Point, of: ClassEntry) => ({
  track_id: trackId,
  x,
  y: y - 20,
  w: 20,
  h: 40,
  score: 0.9,
  class_id: of.class_id,
  name: of.name,
});

describe('presence (types 1 and 2)', () => {
  const rule: Rule = { interval: 5, classes: [PERSON, CAR] };

  it('applies to detection and change detection apps, not to time-series ones', () => {
    const kind = new PresenceRule(new TrackMotion(), new Counting());
    expect(
      ([1, 2, 3] as const).map((appType) => kind.applies(input(view(rule, { appType }), 0, []))),
    ).toEqual([true, true, false]);
  });

  it('fires one rule per class entry with its objects, then waits the interval per rule', () => {
    const kind = new PresenceRule(new TrackMotion(), new Counting());
    const app = view(rule);
    const a = match(tracked('a', [50, 100]), PERSON);
    const car = match(tracked('c', [120, 100], 2), CAR);
    expect(kind.judge(input(app, 0, [a]))).toEqual([
      { id: 'app:0', class_id: '0', objects: [reported('a', [50, 100], PERSON)] },
    ]);
    expect(kind.judge(input(app, 1, [a, car]))).toEqual([
      { id: 'app:2', class_id: '2', objects: [reported('c', [120, 100], CAR)] },
    ]);
    expect(kind.judge(input(app, 5, [a, car]))).toEqual([
      { id: 'app:0', class_id: '0', objects: [reported('a', [50, 100], PERSON)] },
    ]);
  });

  it('lets a counter fire alone, with its count', () => {
    const kind = new PresenceRule(new TrackMotion(), new Counting());
    const app = view({ ...rule, counter: counter({ min_count: 2 }) });
    const a = match(tracked('a', [50, 100]), PERSON);
    const b = match(tracked('b', [90, 100]), PERSON);
    expect(kind.judge(input(app, 0, [a]))).toEqual([]);
    expect(kind.judge(input(app, 1, [a, b]))).toEqual([
      {
        id: 'app:counter',
        class_id: '0,2',
        objects: [reported('a', [50, 100], PERSON), reported('b', [90, 100], PERSON)],
        count: 2,
      },
    ]);
  });

  it('with stationary "once", fires a still object once per stop', () => {
    const motion = new TrackMotion();
    const kind = new PresenceRule(motion, new Counting());
    const app = view({ interval: 0, classes: [PERSON], stationary: 'once' });
    const firings = [0, 1, 2].map((seconds) => {
      motion.update(seconds * 1000, [{ trackId: 'a', foot: [50, 100], size: 40 }]);
      return kind.judge(input(app, seconds, [match(tracked('a', [50, 100]), PERSON)]));
    });
    expect(firings).toEqual([
      [{ id: 'app:0', class_id: '0', objects: [reported('a', [50, 100], PERSON)] }],
      [],
      [],
    ]);
  });
});

describe('loitering (type 3, a region or the whole frame)', () => {
  const rule: Rule = { interval: 2, classes: [PERSON] };
  const app = view(rule, { appType: 3 });
  const at = (seconds: number, inRegion = true) =>
    input(app, seconds, [match(tracked('a', [50, 100]), PERSON, { inRegion })]);

  it('applies to time-series apps without a line or left_object', () => {
    const kind = new LoiteringRule(new Counting());
    expect([
      kind.applies(at(0)),
      kind.applies(input(view(rule, { appType: 1 }), 0, [])),
      kind.applies(
        input(
          view(rule, {
            appType: 3,
            line: [
              [0, 0],
              [10, 0],
            ],
          }),
          0,
          [],
        ),
      ),
      kind.applies(input(view({ ...rule, left_object: { seconds: 3, radius: 1 } }, { appType: 3 }), 0, [])),
    ]).toEqual([true, false, false, false]);
  });

  it('fires once per visit after interval seconds inside; a new shape starts the visits over', () => {
    const kind = new LoiteringRule(new Counting());
    const loiters = [{ id: 'app:0', class_id: '0', objects: [reported('a', [50, 100], PERSON)] }];
    expect([0, 1, 2, 3].map((s) => kind.judge(at(s)))).toEqual([[], [], loiters, []]);
    kind.reshaped();
    expect([4, 5, 6].map((s) => kind.judge(at(s)))).toEqual([[], [], loiters]);
  });

  it('fires the counter besides, over the confirmed tracks in the region', () => {
    const kind = new LoiteringRule(new Counting());
    const withCounter = view({ ...rule, counter: counter() }, { appType: 3 });
    const outside = match(tracked('b', [150, 100]), PERSON, { inRegion: false });
    expect(kind.judge(input(withCounter, 0, [match(tracked('a', [50, 100]), PERSON), outside]))).toEqual([
      { id: 'app:counter', class_id: '0', objects: [reported('a', [50, 100], PERSON)], count: 1 },
    ]);
  });
});

describe('crossing (type 3, a counting line)', () => {
  const line: [Point, Point] = [
    [0, 100],
    [200, 100],
  ];
  /** The interval throttles the counter only: crossings fire as they happen. */
  const rule: Rule = { interval: 10, classes: [PERSON], counter: counter() };
  const app = view(rule, { appType: 3, line });
  const at = (seconds: number, y: number) => input(app, seconds, [match(tracked('a', [100, y]), PERSON)]);

  it('applies to time-series apps with a line only', () => {
    const kind = new CrossingRule(new Counting());
    expect([kind.applies(at(0, 50)), kind.applies(input(view(rule, { appType: 3 }), 0, []))]).toEqual([
      true,
      false,
    ]);
  });

  it('fires each crossing once with its direction and the counts since the start, the counter besides', () => {
    const kind = new CrossingRule(new Counting());
    const crosser = { ...reported('a', [100, 150], PERSON), direction: 'in' };
    expect([kind.judge(at(0, 50)), kind.judge(at(1, 150)), kind.judge(at(2, 160))]).toEqual([
      [],
      [
        { id: 'app:0', class_id: '0', objects: [crosser], counts: { in: 1, out: 0 } },
        {
          id: 'app:counter',
          class_id: '0',
          objects: [crosser],
          count: 1,
          counts: { in: 1, out: 0 },
          counts_by_class: { '0': { in: 1, out: 0 } },
        },
      ],
      [],
    ]);
    expect(kind.lineCounts(app)).toEqual({ in: 1, out: 0, classes: { '0': { in: 1, out: 0 } } });
    expect(kind.lineCounts(view(rule, { appType: 3 }))).toBeNull();
  });
});

describe('left objects (type 3, left_object)', () => {
  const rule: Rule = { classes: [BAG], left_object: { seconds: 3, radius: 1 } };
  const app = view(rule, { appType: 3 });

  /** Seconds 0..3 of a bag standing on (50, 100), with `others` beside it each frame. */
  function run(others: TrackedObject[]) {
    const motion = new TrackMotion();
    const kind = new LeftObjectRule(motion, new Counting());
    return [0, 1, 2, 3].map((seconds) => {
      motion.update(seconds * 1000, [{ trackId: 'bag', foot: [50, 100], size: 40 }]);
      const bag = match(tracked('bag', [50, 100], 24), BAG);
      return kind.judge(input(app, seconds, [bag], { objects: [bag.object, ...others] }));
    });
  }

  it('applies to time-series apps with left_object and no line', () => {
    const kind = new LeftObjectRule(new TrackMotion(), new Counting());
    expect([
      kind.applies(input(app, 0, [])),
      kind.applies(
        input(
          view(rule, {
            appType: 3,
            line: [
              [0, 0],
              [10, 0],
            ],
          }),
          0,
          [],
        ),
      ),
    ]).toEqual([true, false]);
  });

  it('fires once when a still object has had nobody near for the seconds', () => {
    expect(run([])).toEqual([
      [],
      [],
      [],
      [{ id: 'app:24', class_id: '24', objects: [{ ...reported('bag', [50, 100], BAG), left: 3 }] }],
    ]);
  });

  it('does not fire while a person stands within radius box heights', () => {
    expect(run([tracked('p', [80, 100])])).toEqual([[], [], [], []]);
  });
});

describe('removed objects (type 3, removed_object)', () => {
  const rule: Rule = { classes: [PERSON], removed_object: { seconds: 1, fraction: 0.05 } };
  const app = view(rule, { appType: 3 });

  /** A 160x120 grey picture, with a 40x30 white block at (40, 30) when `changed`. */
  function picture(changed: boolean): Frame {
    const data = new Uint8Array(160 * 120 * 3).fill(100);
    for (let y = 30; changed && y < 60; y++) data.fill(250, (y * 160 + 40) * 3, (y * 160 + 80) * 3);
    return { data, width: 160, height: 120 };
  }

  it('applies to time-series video apps given the picture', () => {
    const kind = new RemovedObjectRule();
    expect([
      kind.applies(input(app, 0, [], { picture: picture(false) })),
      kind.applies(input(app, 0, [])),
      kind.applies(input(view(rule, { appType: 3, perImage: true }), 0, [], { picture: picture(false) })),
      kind.applies(input(view(rule, { appType: 1 }), 0, [], { picture: picture(false) })),
    ]).toEqual([true, false, false, false]);
  });

  it('fires once when an area has differed for the seconds, and draws it apart while it differs', () => {
    const kind = new RemovedObjectRule();
    const at = (seconds: number, changed: boolean) => input(app, seconds, [], { picture: picture(changed) });
    const area = {
      track_id: '',
      x: 60,
      y: 45,
      w: 40,
      h: 30,
      score: 0.063,
      class_id: 'removed',
      name: 'removed',
      area: 1200,
      removed: 1,
    };
    expect([kind.judge(at(0, false)), kind.judge(at(0.5, true)), kind.shown(at(0.5, true))]).toEqual([
      [],
      [],
      [],
    ]);
    expect(kind.judge(at(1.5, true))).toEqual([{ id: 'app:removed', class_id: 'removed', objects: [area] }]);
    expect(kind.shown(at(1.5, true))).toEqual([{ ...area, color: REMOVED_COLOR }]);
    expect(kind.judge(at(2, true))).toEqual([]);
  });
});

describe('speed (any type, speed limits)', () => {
  const rule: Rule = {
    interval: 10,
    classes: [CAR],
    speed: [{ class_id: '2', min_speed: 10, max_speed: 0 }],
  };
  const app = view(rule);
  const moving = (speed: number) =>
    match(tracked('c', [80, 100], 2), CAR, {
      motion: { dwellMs: 1500, state: 'moving', velocity: { speed, heading: 90.4 } },
    });

  it('applies when the rule sets speed limits', () => {
    expect([
      new SpeedRule().applies(input(app, 0, [])),
      new SpeedRule().applies(input(view({ classes: [CAR] }), 0, [])),
    ]).toEqual([true, false]);
  });

  it('fires the confirmed objects of the class within the bounds, under the interval', () => {
    const kind = new SpeedRule();
    expect([
      kind.judge(input(app, 0, [moving(9.99)])),
      kind.judge(input(app, 1, [moving(12.3456)])),
      kind.judge(input(app, 2, [moving(12.3456)])),
    ]).toEqual([
      [],
      [
        {
          id: 'app:speed:2',
          class_id: '2',
          objects: [
            { ...reported('c', [80, 100], CAR), dwell: 1.5, state: 'moving', speed: 12.35, heading: 90 },
          ],
        },
      ],
      [],
    ]);
  });
});
