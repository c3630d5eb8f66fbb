// Over 400 lines on purpose: every rule kind on hand-made tracks, each compared whole.
import { describe, expect, it } from 'vitest';
import { type AppRuleContext, AppRuleState } from '../engine/rules/evaluate';
import type { FrameInfo, RuleFiring } from '../engine/rules/rule-kind';
import type { ClassEntry, Counter, Inertia, Rule } from '../engine/rules/schema';
import { FORGET_TRACK_AFTER_MS } from '../engine/rules/time-series';
import type { Polygon } from '../engine/tasks/schema';
import type { TrackedObject } from '../engine/vision/types';

const person = (over: Partial<ClassEntry> = {}): ClassEntry => ({
  class_id: '0',
  name: 'person',
  color: '#00ff00',
  threshold: 0.5,
  min_pixel: 0,
  max_pixel: 0,
  ...over,
});
const car = (over: Partial<ClassEntry> = {}): ClassEntry => ({
  ...person({ class_id: '1', name: 'car', color: '#0000ff' }),
  ...over,
});

const counter = (over: Partial<Counter> = {}): Counter => ({
  numeric_type: 0,
  distance: 0,
  min_count: 1,
  max_count: 0,
  class_counts: [],
  ...over,
});

interface ObjectOptions {
  w?: number;
  h?: number;
  score?: number;
  classIndex?: number;
  confirmed?: boolean;
}

/** A tracked box whose foot point (bottom centre) is at `foot`. */
function obj(trackId: string, foot: [number, number], options: ObjectOptions = {}): TrackedObject {
  const { w = 20, h = 40, score = 0.9, classIndex = 0, confirmed = true } = options;
  const [x, y] = foot;
  return { trackId, x1: x - w / 2, y1: y - h, x2: x + w / 2, y2: y, score, classIndex, hits: 5, confirmed };
}

const frame = (seconds: number): FrameInfo => ({
  id: Math.round(seconds * 10),
  timestampMs: Math.round(seconds * 1000),
  width: 1920,
  height: 1080,
});

/** Every sighting counts at once: the cases below are about one or two frames; inertia has its own. */
const instant: Inertia = { hits: 1, frames: 1 };

function app(rule: Rule, over: Partial<AppRuleContext> = {}): AppRuleContext {
  return { appId: 'app', appType: 1, rule: { inertia: instant, ...rule }, polygon: [], ...over };
}

const square: Polygon = [
  [100, 100],
  [200, 100],
  [200, 200],
  [100, 200],
];
/** A horizontal counting line from A (0, 500) to B (1000, 500): "in" is downwards on screen. */
const line: Polygon = [
  [0, 500],
  [1000, 500],
];

const ids = (firings: readonly RuleFiring[]) => firings.map((f) => f.id);
const tracks = (firing: RuleFiring | undefined) => firing?.objects.map((o) => o.track_id);

describe('matching a class entry', () => {
  it('requires the class, a score at or above the threshold and the longer side within the pixel bounds', () => {
    const state = new AppRuleState(app({ classes: [person({ min_pixel: 40, max_pixel: 60 })] }));
    const { shown } = state.evaluate(frame(0), [
      obj('at-threshold', [10, 100], { score: 0.5 }),
      obj('below-threshold', [20, 100], { score: 0.499 }),
      obj('at-min', [30, 100], { w: 10, h: 40 }),
      obj('below-min', [40, 100], { w: 10, h: 39 }),
      obj('at-max', [50, 100], { w: 60, h: 10 }),
      obj('above-max', [60, 100], { w: 61, h: 10 }),
      obj('wide-but-short', [70, 100], { w: 70, h: 50 }),
      obj('other-class', [80, 100], { classIndex: 1 }),
    ]);
    expect(shown.map((o) => o.track_id)).toEqual(['at-threshold', 'at-min', 'at-max']);
  });

  it('treats 0 pixel bounds as no bound', () => {
    const state = new AppRuleState(app({ classes: [person()] }));
    const { shown } = state.evaluate(frame(0), [
      obj('tiny', [10, 10], { w: 1, h: 1 }),
      obj('huge', [2000, 3000], { w: 3000, h: 3000 }),
    ]);
    expect(shown).toHaveLength(2);
  });

  it('reports integer centre and size, the score to 3 decimals and the class entry name and colour', () => {
    const state = new AppRuleState(app({ classes: [person(), car()] }));
    const box: TrackedObject = {
      trackId: 't1',
      x1: 10.2,
      y1: 20.4,
      x2: 31.1,
      y2: 61.3,
      score: 0.87654,
      classIndex: 1,
      hits: 1,
      confirmed: false,
    };
    const { firings, shown } = state.evaluate(frame(0), [box]);
    const reported = {
      ...{ track_id: 't1', x: 21, y: 41, w: 21, h: 41, score: 0.877, class_id: '1', name: 'car' },
      ...{ dwell: 0, state: 'moving' },
    };
    expect(firings).toEqual([{ id: 'app:1', class_id: '1', objects: [reported] }]);
    expect(shown).toEqual([{ ...reported, color: '#0000ff' }]);
  });

  it('counts an object in a region by its foot point, not its centre', () => {
    const state = new AppRuleState(app({ classes: [person()] }, { polygon: square }));
    // Centre (150, 190) inside, foot (150, 240) outside.
    const centreInside = obj('centre-inside', [150, 240], { h: 100 });
    expect(state.evaluate(frame(0), [centreInside])).toEqual({
      firings: [],
      shown: [],
      removed: [],
      zoneOccupied: false,
    });
    // Centre (150, 80) outside, foot (150, 120) inside.
    const footInside = obj('foot-inside', [150, 120], { h: 80 });
    const result = state.evaluate(frame(1), [centreInside, footInside]);
    expect(ids(result.firings)).toEqual(['app:0']);
    expect(tracks(result.firings[0])).toEqual(['foot-inside']);
    expect(result.shown.map((o) => o.track_id)).toEqual(['foot-inside']);
    expect(result.zoneOccupied).toBe(true);
  });

  it('counts objects anywhere in the frame without a polygon', () => {
    const state = new AppRuleState(app({ classes: [person()] }));
    const result = state.evaluate(frame(0), [obj('far', [1900, 1070]), obj('near', [5, 45])]);
    expect(tracks(result.firings[0])).toEqual(['far', 'near']);
    expect(result.zoneOccupied).toBe(true);
  });
});

describe('class rules (types 1 and 2)', () => {
  it('fires one rule per class with all its matching objects', () => {
    const state = new AppRuleState(app({ classes: [person(), car()] }));
    const { firings } = state.evaluate(frame(0), [
      obj('p1', [10, 100]),
      obj('c1', [20, 100], { classIndex: 1 }),
      obj('p2', [30, 100]),
    ]);
    expect(ids(firings)).toEqual(['app:0', 'app:1']);
    expect(tracks(firings[0])).toEqual(['p1', 'p2']);
    expect(tracks(firings[1])).toEqual(['c1']);
  });

  it('stays silent for interval seconds after firing, per rule id, then fires again', () => {
    const state = new AppRuleState(app({ interval: 10, classes: [person(), car()] }));
    const p = obj('p', [10, 100]);
    const c = obj('c', [20, 100], { classIndex: 1 });
    expect(ids(state.evaluate(frame(0), [p]).firings)).toEqual(['app:0']);
    expect(ids(state.evaluate(frame(5), [p, c]).firings)).toEqual(['app:1']);
    expect(ids(state.evaluate(frame(9.999), [p, c]).firings)).toEqual([]);
    expect(ids(state.evaluate(frame(10), [p, c]).firings)).toEqual(['app:0']);
    expect(ids(state.evaluate(frame(15), [p, c]).firings)).toEqual(['app:1']);
  });

  it('does not fire, nor start the interval, on a frame without a matching object', () => {
    const state = new AppRuleState(app({ interval: 10, classes: [person()] }));
    expect(state.evaluate(frame(0), [obj('faint', [10, 100], { score: 0.1 })]).firings).toEqual([]);
    expect(ids(state.evaluate(frame(1), [obj('p', [10, 100])]).firings)).toEqual(['app:0']);
  });

  it('evaluates change detection (type 2) like detection', () => {
    const state = new AppRuleState(app({ classes: [person({ min_pixel: 30 })] }, { appType: 2 }));
    const { firings } = state.evaluate(frame(0), [
      obj('region-1', [10, 100], { score: 0.6, confirmed: false }),
      obj('too-small', [20, 100], { w: 20, h: 20 }),
    ]);
    expect(firings).toHaveLength(1);
    expect(tracks(firings[0])).toEqual(['region-1']);
  });
});

describe('counter over objects present now', () => {
  it('fires alone, with the count, while the count is within [min_count, max_count]', () => {
    const state = new AppRuleState(
      app({ classes: [person(), car()], counter: counter({ min_count: 2, max_count: 3 }) }),
    );
    const people = (n: number) => Array.from({ length: n }, (_, i) => obj(`p${i}`, [10 + 30 * i, 100]));
    expect(state.evaluate(frame(0), people(1)).firings).toEqual([]);
    const two = state.evaluate(frame(1), people(2)).firings;
    expect(two).toHaveLength(1);
    expect(two[0]).toMatchObject({ id: 'app:counter', class_id: '0,1', count: 2 });
    expect(tracks(two[0])).toEqual(['p0', 'p1']);
    expect(state.evaluate(frame(2), people(3)).firings[0]?.count).toBe(3);
    expect(state.evaluate(frame(3), people(4)).firings).toEqual([]);
  });

  it('requires every class_counts entry to hold for its class', () => {
    const rule = {
      classes: [person(), car()],
      counter: counter({ min_count: 2, class_counts: [{ class_id: '1', min_count: 1, max_count: 1 }] }),
    };
    const state = new AppRuleState(app(rule));
    const p1 = obj('p1', [10, 100]);
    const p2 = obj('p2', [40, 100]);
    const c1 = obj('c1', [70, 100], { classIndex: 1 });
    const c2 = obj('c2', [100, 100], { classIndex: 1 });
    expect(state.evaluate(frame(0), [p1, p2]).firings).toEqual([]);
    expect(state.evaluate(frame(1), [p1, p2, c1]).firings[0]?.count).toBe(3);
    expect(state.evaluate(frame(2), [p1, p2, c1, c2]).firings).toEqual([]);
  });

  it('counts only the largest group of foot points chained within distance', () => {
    const state = new AppRuleState(
      app({ classes: [person()], counter: counter({ distance: 50, min_count: 3 }) }),
    );
    const chain = [obj('a1', [100, 100]), obj('a2', [150, 100]), obj('a3', [190, 130])];
    const pair = [obj('b1', [600, 600]), obj('b2', [620, 600])];
    const result = state.evaluate(frame(0), [...pair, ...chain]);
    expect(result.firings[0]?.count).toBe(3);
    expect(tracks(result.firings[0])?.sort()).toEqual(['a1', 'a2', 'a3']);
    // Everyone matching is still shown.
    expect(result.shown).toHaveLength(5);
    // One step of the chain beyond the distance splits it, so no group reaches 3.
    const broken = [obj('a1', [100, 100]), obj('a2', [151, 100]), obj('a3', [190, 130])];
    expect(state.evaluate(frame(1), [...broken, ...pair]).firings).toEqual([]);
  });

  it('obeys interval', () => {
    const state = new AppRuleState(app({ interval: 5, classes: [person()], counter: counter() }));
    const p = [obj('p', [10, 100])];
    expect(state.evaluate(frame(0), p).firings).toHaveLength(1);
    expect(state.evaluate(frame(4), p).firings).toHaveLength(0);
    expect(state.evaluate(frame(5), p).firings).toHaveLength(1);
  });
});

describe('flow counter (numeric_type 1)', () => {
  const rule = { classes: [person(), car()], counter: counter({ numeric_type: 1 }) };

  it('counts distinct confirmed tracks since the start, each once', () => {
    const state = new AppRuleState(app(rule));
    const a = obj('a', [10, 100]);
    const fresh = obj('b', [40, 100], { confirmed: false });
    const c = obj('c', [70, 100], { classIndex: 1 });
    const first = state.evaluate(frame(0), [a, fresh]).firings[0];
    expect(first?.count).toBe(1);
    expect(tracks(first)).toEqual(['a']);
    expect(state.evaluate(frame(1), [a, fresh, c]).firings[0]?.count).toBe(2);
    const confirmedNow = state.evaluate(frame(2), [a, { ...fresh, confirmed: true }]).firings[0];
    expect(confirmedNow?.count).toBe(3);
    expect(tracks(confirmedNow)).toEqual(['a', 'b']);
    // Seen again after half a minute away: still the same track.
    expect(state.evaluate(frame(32), [a, c]).firings[0]?.count).toBe(3);
    expect(state.evaluate(frame(33), []).firings[0]).toMatchObject({ count: 3, objects: [] });
  });

  it('checks class_counts against the distinct tracks of each class', () => {
    const withCars = {
      ...rule,
      counter: counter({ numeric_type: 1, class_counts: [{ class_id: '1', min_count: 2, max_count: 0 }] }),
    };
    const state = new AppRuleState(app(withCars));
    expect(state.evaluate(frame(0), [obj('c1', [10, 100], { classIndex: 1 })]).firings).toEqual([]);
    expect(state.evaluate(frame(1), [obj('c2', [10, 100], { classIndex: 1 })]).firings[0]?.count).toBe(2);
  });

  it('counts tracks only while their foot point is in the region', () => {
    const state = new AppRuleState(app(rule, { polygon: square }));
    expect(state.evaluate(frame(0), [obj('out', [300, 300])]).firings).toEqual([]);
    expect(state.evaluate(frame(1), [obj('out', [150, 150])]).firings[0]?.count).toBe(1);
  });
});

describe('loitering (type 3, region or whole frame)', () => {
  const loiterApp = (polygon: Polygon, interval = 5) =>
    new AppRuleState(app({ interval, classes: [person()] }, { appType: 3, polygon }));
  const inside = (id: string, options?: ObjectOptions) => obj(id, [150, 150], options);
  const outside = (id: string) => obj(id, [300, 300]);

  it('fires once per visit after interval seconds inside, and again on a new visit', () => {
    const state = loiterApp(square);
    const fired: number[] = [];
    const step = (t: number, objects: TrackedObject[]) => {
      const { firings } = state.evaluate(frame(t), objects);
      if (firings.length > 0) {
        expect(firings).toEqual([
          { id: 'app:0', class_id: '0', objects: [expect.objectContaining({ track_id: 'a' })] },
        ]);
        fired.push(t);
      }
    };
    for (let t = 0; t <= 8; t++) step(t, [inside('a')]);
    step(9, [outside('a')]);
    for (let t = 10; t <= 16; t++) step(t, [inside('a')]);
    expect(fired).toEqual([5, 15]);
  });

  it('ends a visit when the track is unseen for more than about 2 s, not on a short gap', () => {
    const state = loiterApp([], 4);
    const firedAt = (times: number[]) =>
      times.filter((t) => state.evaluate(frame(t), [inside('a')]).firings.length > 0);
    // Gap of 1.5 s between 1 and 2.5: the visit goes on and fires at 4.
    expect(firedAt([0, 1, 2.5, 4, 5])).toEqual([4]);
    // Gap of 3 s: a new visit starts at 8 and fires at 12.
    expect(firedAt([8, 9, 10, 11, 12, 13])).toEqual([12]);
  });

  it('fires on entering with interval 0, and reports only the tracks that loiter in that frame', () => {
    const state = loiterApp(square, 0);
    expect(tracks(state.evaluate(frame(0), [inside('a'), outside('b')]).firings[0])).toEqual(['a']);
    expect(tracks(state.evaluate(frame(1), [inside('a'), inside('b')]).firings[0])).toEqual(['b']);
    expect(state.evaluate(frame(2), [inside('a'), inside('b')]).firings).toEqual([]);
  });

  it('never fires for an unconfirmed track, however long it stays', () => {
    const state = loiterApp(square, 1);
    for (let t = 0; t <= 60; t++) {
      expect(state.evaluate(frame(t), [inside('ghost', { confirmed: false })]).firings).toEqual([]);
    }
  });

  it('counts dwell time from the first sighting, firing once the track is confirmed', () => {
    const state = loiterApp(square, 2);
    expect(state.evaluate(frame(0), [inside('a', { confirmed: false })]).firings).toEqual([]);
    expect(state.evaluate(frame(1), [inside('a', { confirmed: false })]).firings).toEqual([]);
    expect(state.evaluate(frame(2), [inside('a')]).firings).toHaveLength(1);
  });

  it('runs a counter over confirmed tracks in the region besides the loitering rule', () => {
    const rule = { interval: 0, classes: [person()], counter: counter({ min_count: 2 }) };
    const state = new AppRuleState(app(rule, { appType: 3, polygon: square }));
    const first = state.evaluate(frame(0), [inside('a'), inside('b'), inside('c', { confirmed: false })]);
    expect(ids(first.firings)).toEqual(['app:0', 'app:counter']);
    expect(first.firings[1]?.count).toBe(2);
    expect(first.shown).toHaveLength(3);
  });
});

describe('line crossing (type 3, 2-point polygon)', () => {
  const lineApp = (rule: Rule = { classes: [person()] }) =>
    new AppRuleState(app(rule, { appType: 3, polygon: line }));

  it('fires for a 200 px jump over the line between two frames, with the direction both ways', () => {
    const state = lineApp();
    expect(state.evaluate(frame(0), [obj('a', [300, 400])]).firings).toEqual([]);
    const down = state.evaluate(frame(1), [obj('a', [320, 600])]).firings;
    expect(down).toEqual([
      {
        id: 'app:0',
        class_id: '0',
        objects: [expect.objectContaining({ track_id: 'a', direction: 'in' })],
        counts: { in: 1, out: 0 },
      },
    ]);
    expect(state.evaluate(frame(2), [obj('a', [330, 650])]).firings).toEqual([]);
    const up = state.evaluate(frame(3), [obj('a', [340, 420])]).firings;
    expect(up[0]?.objects).toEqual([expect.objectContaining({ track_id: 'a', direction: 'out' })]);
    expect(up[0]?.counts).toEqual({ in: 1, out: 1 });
  });

  it('does not fire when the movement passes beside the end of the line', () => {
    const state = lineApp();
    state.evaluate(frame(0), [obj('a', [1100, 400])]);
    expect(state.evaluate(frame(1), [obj('a', [1100, 600])]).firings).toEqual([]);
  });

  it('fires once for a track that stops on the line and then goes across', () => {
    const state = lineApp();
    const firings = [400, 500, 500, 600, 650].map(
      (y, t) => state.evaluate(frame(t), [obj('a', [300, y])]).firings,
    );
    expect(firings.map((f) => f.length)).toEqual([0, 0, 0, 1, 0]);
  });

  it('does not fire for a track that touches the line and goes back', () => {
    const state = lineApp();
    const firings = [400, 500, 400, 500, 450].map(
      (y, t) => state.evaluate(frame(t), [obj('a', [300, y])]).firings,
    );
    expect(firings.flat()).toEqual([]);
  });

  it('never counts an unconfirmed track crossing', () => {
    const state = lineApp();
    state.evaluate(frame(0), [obj('ghost', [300, 400], { confirmed: false })]);
    expect(state.evaluate(frame(1), [obj('ghost', [300, 600], { confirmed: false })]).firings).toEqual([]);
    // Confirmed afterwards on the same side: the earlier crossing is not reported late.
    expect(state.evaluate(frame(2), [obj('ghost', [300, 650])]).firings).toEqual([]);
  });

  it('counts crossings since the start per class and direction on the class rules and the counter', () => {
    const state = lineApp({ classes: [person(), car()], counter: counter({ min_count: 3 }) });
    state.evaluate(frame(0), [
      obj('a', [100, 400]),
      obj('b', [200, 400]),
      obj('c', [300, 600], { classIndex: 1 }),
    ]);
    const two = state.evaluate(frame(1), [
      obj('a', [100, 600]),
      obj('b', [200, 600]),
      obj('c', [300, 600], { classIndex: 1 }),
    ]);
    expect(ids(two.firings)).toEqual(['app:0']);
    expect(two.firings[0]?.counts).toEqual({ in: 2, out: 0 });
    const three = state.evaluate(frame(2), [obj('c', [300, 400], { classIndex: 1 })]);
    expect(ids(three.firings)).toEqual(['app:1', 'app:counter']);
    expect(three.firings[0]?.counts).toEqual({ in: 0, out: 1 });
    const byClass = { '0': { in: 2, out: 0 }, '1': { in: 0, out: 1 } };
    expect(three.firings[1]).toMatchObject({
      class_id: '0,1',
      count: 3,
      counts: { in: 2, out: 1 },
      counts_by_class: byClass,
    });
    expect(tracks(three.firings[1])).toEqual(['c']);
    // Still in range with nobody crossing: the count alarm holds, with no objects.
    expect(state.evaluate(frame(3), []).firings).toEqual([
      {
        id: 'app:counter',
        class_id: '0,1',
        objects: [],
        count: 3,
        counts: { in: 2, out: 1 },
        counts_by_class: byClass,
      },
    ]);
    expect(state.lineCounts()).toEqual({ in: 2, out: 1, classes: byClass });
  });

  it("counts only the line's direction when it has one: 'in' A to B, 'out' B to A (issue 34)", () => {
    const crossings = (direction: 'in' | 'out' | 'both') => {
      const state = new AppRuleState(
        app({ classes: [person()] }, { appType: 3, polygon: line, line_direction: direction }),
      );
      state.evaluate(frame(0), [obj('down', [100, 400]), obj('up', [200, 600])]);
      const fired = state.evaluate(frame(1), [obj('down', [100, 600]), obj('up', [200, 400])]).firings;
      return { tracks: tracks(fired[0]), counts: state.lineCounts() };
    };
    const tally = (inCount: number, outCount: number) => ({
      in: inCount,
      out: outCount,
      classes: { '0': { in: inCount, out: outCount } },
    });
    expect(crossings('in')).toEqual({ tracks: ['down'], counts: tally(1, 0) });
    expect(crossings('out')).toEqual({ tracks: ['up'], counts: tally(0, 1) });
    expect(crossings('both')).toEqual({ tracks: ['down', 'up'], counts: tally(1, 1) });
  });

  it('answers line counts per class entry with zeros before any crossing, and none without a line', () => {
    expect(lineApp({ classes: [person(), car()] }).lineCounts()).toEqual({
      in: 0,
      out: 0,
      classes: { '0': { in: 0, out: 0 }, '1': { in: 0, out: 0 } },
    });
    expect(new AppRuleState(app({ classes: [person()] }, { appType: 3, polygon: square })).lineCounts()).toBe(
      null,
    );
  });

  it('forgets a track unseen for longer than FORGET_TRACK_AFTER_MS, and not before', () => {
    const horizonSeconds = FORGET_TRACK_AFTER_MS / 1000;
    const forgotten = lineApp();
    forgotten.evaluate(frame(0), [obj('a', [100, 400])]);
    forgotten.evaluate(frame(30), [obj('other', [500, 100])]);
    expect(forgotten.evaluate(frame(horizonSeconds + 1), [obj('a', [100, 600])]).firings).toEqual([]);
    const remembered = lineApp();
    remembered.evaluate(frame(0), [obj('a', [100, 400])]);
    const back = remembered.evaluate(frame(horizonSeconds - 1), [obj('a', [100, 600])]);
    expect(tracks(back.firings[0])).toEqual(['a']);
  });
});

describe('setContext', () => {
  it('keeps flow counts and interval timers when the rule changes for the same app', () => {
    const rule = { interval: 10, classes: [person()], counter: counter({ numeric_type: 1 }) };
    const state = new AppRuleState(app(rule));
    expect(state.evaluate(frame(0), [obj('a', [10, 100]), obj('b', [40, 100])]).firings[0]?.count).toBe(2);
    state.setContext(
      app({ ...rule, counter: counter({ numeric_type: 1, min_count: 3 }) }, { polygon: square }),
    );
    expect(state.evaluate(frame(5), [obj('c', [150, 150])]).firings).toEqual([]);
    expect(state.evaluate(frame(10), [obj('d', [150, 150])]).firings[0]?.count).toBe(4);
  });

  it('keeps crossing counts and track sides when the line is rescaled', () => {
    const rule = { classes: [person()], counter: counter() };
    const state = new AppRuleState(app(rule, { appType: 3, polygon: line }));
    state.evaluate(frame(0), [obj('a', [100, 400])]);
    expect(state.evaluate(frame(1), [obj('a', [100, 600])]).firings[1]?.count).toBe(1);
    // Frame size halved: the line is now at half the coordinates; the track crosses back up at once.
    const halfLine: Polygon = [
      [0, 250],
      [500, 250],
    ];
    state.setContext(app(rule, { appType: 3, polygon: halfLine }));
    const back = state.evaluate(frame(2), [obj('a', [50, 200])]).firings;
    expect(back[0]?.objects).toEqual([expect.objectContaining({ track_id: 'a', direction: 'out' })]);
    expect(back[1]).toMatchObject({ id: 'app:counter', count: 2, counts: { in: 1, out: 1 } });
  });

  it('restarts loitering visits when the polygon changes', () => {
    const rule = { interval: 5, classes: [person()] };
    const state = new AppRuleState(app(rule, { appType: 3, polygon: square }));
    for (let t = 0; t <= 4; t++) state.evaluate(frame(t), [obj('a', [150, 150])]);
    state.setContext(app(rule, { appType: 3, polygon: square.map(([x = 0, y = 0]) => [x + 1, y]) }));
    const firedAt = [5, 6, 7, 8, 9, 10].filter(
      (t) => state.evaluate(frame(t), [obj('a', [150, 150])]).firings.length > 0,
    );
    expect(firedAt).toEqual([10]);
  });

  it('keeps loitering visits when only the rule changes', () => {
    const state = new AppRuleState(
      app({ interval: 5, classes: [person()] }, { appType: 3, polygon: square }),
    );
    for (let t = 0; t <= 4; t++) state.evaluate(frame(t), [obj('a', [150, 150])]);
    state.setContext(
      app({ interval: 5, classes: [person({ threshold: 0.3 })] }, { appType: 3, polygon: square }),
    );
    expect(state.evaluate(frame(5), [obj('a', [150, 150])]).firings).toHaveLength(1);
  });

  it('starts over for another app', () => {
    const rule = { interval: 10, classes: [person()], counter: counter({ numeric_type: 1 }) };
    const state = new AppRuleState(app(rule));
    state.evaluate(frame(0), [obj('a', [10, 100])]);
    state.setContext(app(rule, { appId: 'other' }));
    expect(state.evaluate(frame(1), [obj('b', [10, 100])]).firings).toEqual([
      expect.objectContaining({ id: 'other:counter', count: 1 }),
    ]);
  });
});
