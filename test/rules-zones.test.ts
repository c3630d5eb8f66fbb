import { describe, expect, it } from 'vitest';
import { onFrame } from '../engine/osd/frame-space';
import { scaleAreas } from '../engine/pipeline/app-runtime';
import { type AppRuleContext, AppRuleState } from '../engine/rules/evaluate';
import type { FrameInfo } from '../engine/rules/rule-kind';
import type { Counter, Rule } from '../engine/rules/schema';
import type { Polygon, Zone } from '../engine/tasks/schema';
import { PERSON, standing } from './helpers/rule-tracks';

const person = PERSON;

const obj = standing;

/** What the events report of a moving object standing on `foot`, with its zones, in each of them `dwell` s. */
const reported = (
  trackId: string,
  foot: [number, number],
  zones: string[],
  direction?: 'in' | 'out',
  dwell = 0,
) => ({
  track_id: trackId,
  x: foot[0],
  y: foot[1] - 20,
  w: 20,
  h: 40,
  score: 0.9,
  class_id: '0',
  name: 'person',
  ...(direction && { direction }),
  zones,
  dwell,
  zone_dwell: Object.fromEntries(zones.map((zone) => [zone, dwell])),
  state: 'moving',
});

const frame = (n: number): FrameInfo => ({ id: n, timestampMs: n * 100, width: 1000, height: 1000 });

const square = (x: number, y: number, size: number): Polygon => [
  [x, y],
  [x + size, y],
  [x + size, y + size],
  [x, y + size],
];

/** Two zones side by side overlapping in x 400..500, and a mask at the bottom left. */
const ZONES: Zone[] = [
  { name: 'west', polygon: square(0, 0, 500) },
  { name: 'east', polygon: square(400, 0, 500) },
];
const MASK = square(0, 800, 200);

const counter = (over: Partial<Counter> = {}): Counter => ({
  numeric_type: 0,
  distance: 0,
  min_count: 1,
  max_count: 0,
  class_counts: [],
  ...over,
});

/** Every sighting counts at once: inertia has its own tests. */
const app = (rule: Rule, over: Partial<AppRuleContext> = {}) =>
  new AppRuleState({
    appId: 'app',
    appType: 1,
    rule: { inertia: { hits: 1, frames: 1 }, classes: [person], ...rule },
    polygon: [],
    zones: ZONES,
    masks: [MASK],
    ...over,
  });

describe('zones', () => {
  it('name on each reported object the zones its foot point stands in, none outside them', () => {
    const state = app({});
    expect(
      state.evaluate(frame(0), [obj('w', [100, 100]), obj('both', [450, 100]), obj('none', [950, 950])])
        .firings,
    ).toEqual([
      {
        id: 'app:0',
        class_id: '0',
        objects: [
          reported('w', [100, 100], ['west']),
          reported('both', [450, 100], ['west', 'east']),
          reported('none', [950, 950], []),
        ],
      },
    ]);
  });

  it('leave objects without zones when the app has none', () => {
    const state = app({}, { zones: [] });
    expect(state.evaluate(frame(0), [obj('w', [100, 100])]).firings[0]?.objects[0]).not.toHaveProperty(
      'zones',
    );
  });

  it('split a counter of objects present now per zone, every zone listed', () => {
    const state = app({ counter: counter() });
    expect(state.evaluate(frame(0), [obj('a', [100, 100]), obj('b', [450, 100])]).firings).toEqual([
      {
        id: 'app:counter',
        class_id: '0',
        objects: [reported('a', [100, 100], ['west']), reported('b', [450, 100], ['west', 'east'])],
        count: 2,
        zone_counts: { west: 2, east: 1 },
      },
    ]);
  });

  it('answer the occupancy of every zone after each frame, in all and per class entry', () => {
    const car = { ...person, class_id: '2', name: 'car' };
    const state = app({ classes: [person, car] });
    expect(state.counts()).toEqual({ line: null, zones: null });
    state.evaluate(frame(0), [obj('a', [100, 100]), obj('b', [450, 100], 2), obj('none', [950, 950])]);
    expect(state.counts()).toEqual({
      line: null,
      zones: {
        west: { count: 2, classes: { '0': 1, '2': 1 } },
        east: { count: 1, classes: { '0': 0, '2': 1 } },
      },
    });
    state.evaluate(frame(1), [obj('a', [600, 100])]);
    expect(state.counts().zones).toEqual({
      west: { count: 0, classes: { '0': 0, '2': 0 } },
      east: { count: 1, classes: { '0': 1, '2': 0 } },
    });
    const noZones = app({}, { zones: [] });
    noZones.evaluate(frame(0), [obj('a', [100, 100])]);
    expect(noZones.counts()).toEqual({ line: null, zones: null });
  });

  it('split a flow counter per zone: the distinct tracks that have been in each zone', () => {
    const state = app({ counter: counter({ numeric_type: 1 }) });
    state.evaluate(frame(0), [obj('a', [100, 100]), obj('b', [950, 950])]);
    state.evaluate(frame(1), [obj('a', [600, 100]), obj('b', [960, 950])]);
    const last = state.evaluate(frame(2), [obj('a', [700, 100]), obj('c', [800, 100])]).firings;
    expect(last.map((f) => [f.count, f.zone_counts])).toEqual([[3, { west: 1, east: 2 }]]);
  });

  it('split a line counter per zone by where each crossing lands', () => {
    const line: Polygon = [
      [0, 300],
      [1000, 300],
    ];
    const state = app({ counter: counter() }, { appType: 3, polygon: line });
    state.evaluate(frame(0), [obj('a', [100, 200]), obj('b', [950, 200])]);
    const crossed = state.evaluate(frame(1), [obj('a', [100, 400]), obj('b', [950, 400])]).firings;
    expect(crossed.map((f) => [f.id, f.objects, f.zone_counts])).toEqual([
      [
        'app:0',
        [reported('a', [100, 400], ['west'], 'in', 0.1), reported('b', [950, 400], [], 'in', 0.1)],
        undefined,
      ],
      [
        'app:counter',
        [reported('a', [100, 400], ['west'], 'in', 0.1), reported('b', [950, 400], [], 'in', 0.1)],
        { west: 1, east: 0 },
      ],
    ]);
  });
});

describe('masks', () => {
  it('hide an object standing in a mask from every rule and the overlay', () => {
    const state = app({ counter: counter() });
    const hidden = state.evaluate(frame(0), [obj('masked', [100, 900])]);
    expect([hidden.firings, hidden.shown, hidden.zoneOccupied]).toEqual([[], [], false]);
    const both = state.evaluate(frame(1), [obj('masked', [100, 900]), obj('free', [300, 900])]);
    expect(both.firings.map((f) => [f.count, f.objects.map((o) => o.track_id)])).toEqual([[1, ['free']]]);
  });

  it('apply to images as well', () => {
    const state = app({}, { perImage: true });
    expect(state.evaluate(frame(0), [obj('masked', [100, 900])]).firings).toEqual([]);
  });

  it('keep a track in a mask from crossing a line', () => {
    const line: Polygon = [
      [0, 850],
      [1000, 850],
    ];
    const state = app({}, { appType: 3, polygon: line, zones: [] });
    state.evaluate(frame(0), [obj('masked', [100, 820]), obj('free', [500, 820])]);
    const crossed = state.evaluate(frame(1), [obj('masked', [100, 900]), obj('free', [500, 900])]).firings;
    expect(crossed.map((f) => f.objects.map((o) => o.track_id))).toEqual([['free']]);
  });
});

describe('scaleAreas', () => {
  it('rescales the polygon, every zone and every mask alike to a new frame size', () => {
    const drawn = {
      polygon: square(0, 0, 100),
      zones: [{ name: 'z', polygon: square(10, 10, 10) }],
      masks: [MASK],
    };
    expect(scaleAreas(drawn, { width: 1000, height: 1000 }, { width: 500, height: 2000 })).toEqual({
      polygon: [
        [0, 0],
        [50, 0],
        [50, 200],
        [0, 200],
      ],
      zones: [
        {
          name: 'z',
          polygon: [
            [5, 20],
            [10, 20],
            [10, 40],
            [5, 40],
          ],
        },
      ],
      masks: [
        [
          [0, 1600],
          [100, 1600],
          [100, 2000],
          [0, 2000],
        ],
      ],
    });
  });
});

describe('onFrame', () => {
  it('places zones and boxes given in source pixels on a frame the source was bounded to, as scaleAreas scales', () => {
    const source = { width: 1000, height: 1000 };
    const frame = { width: 500, height: 2000 };
    const zone = { points: square(0, 0, 100), color: '#ff0000' };
    const box = { x1: 10, y1: 10, x2: 20, y2: 30, color: '#ff0000', name: 'person', trackId: '1' };
    const placed = onFrame({ zones: [zone], objects: [box] }, source, frame);
    expect(placed).toEqual({
      zones: [{ ...zone, points: scaleAreas({ polygon: zone.points }, source, frame).polygon }],
      objects: [{ ...box, x1: 5, y1: 20, x2: 10, y2: 60 }],
    });
    expect(placed.zones[0]?.points).toEqual([
      [0, 0],
      [50, 0],
      [50, 200],
      [0, 200],
    ]);
  });
});
