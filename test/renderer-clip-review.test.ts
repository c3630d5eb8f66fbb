import { describe, expect, it } from 'vitest';
import type { CallbackBody } from '../engine/contract';
import type { Clip } from '../renderer/src/api';
import {
  alarmsAt,
  alarmsInClip,
  boxesOf,
  clipLink,
  measuredFps,
  stepTime,
} from '../renderer/src/review/clip-time';
import {
  dayOf,
  lanesOf,
  MARK_LANES,
  MIN_MARK_PERCENT,
  markSpan,
  windowOf,
} from '../renderer/src/review/timeline-day';

/*
 * The clip player's and the timeline's arithmetic: a frame step is one frame at the clip's rate and
 * stays inside the clip; an alarm's boxes belong to the picture only within half a second of its
 * time; a clip's link never leaves the engine's /api/clips/; a day's marks sit where their items are.
 */

const START = 1_780_000_000_000;
const clip = (change: Partial<Clip> = {}): Clip => ({
  clip_id: 'c1',
  task_id: 't1',
  event_id: 'e1',
  state: 'ready',
  reason: null,
  start: START,
  end: START + 15_000,
  preroll_short: false,
  bytes: 1000,
  codec: 'h264',
  url: '/api/clips/c1?token=abc',
  ...change,
});

describe('frame step', () => {
  it('moves by one frame at the rate, inside the clip', () => {
    expect(stepTime(2, 25, 1, 15)).toBeCloseTo(2.04, 6);
    expect(stepTime(2, 25, -1, 15)).toBeCloseTo(1.96, 6);
    expect(stepTime(1 / 50, 25, -1, 15)).toBe(0);
    expect(stepTime(14.99, 25, 1, 15)).toBe(15);
    // Before the metadata the duration is NaN: the step is not held back.
    expect(stepTime(0, 10, 1, Number.NaN)).toBeCloseTo(0.1, 6);
  });

  it('measures the rate from presented frames, a dropped frame notwithstanding', () => {
    expect(measuredFps([])).toBeNull();
    expect(measuredFps([0.5])).toBeNull();
    expect(measuredFps([0, 0.04, 0.12, 0.16])).toBeCloseTo(25, 6);
    expect(measuredFps([1, 1, 1])).toBeNull();
  });
});

describe('boxes over the clip', () => {
  const alarms = [START + 5_000, START + 10_000].map((timestamp) => ({ timestamp }));

  it('belong to the picture within half a second of their alarm, the nearest first', () => {
    expect(alarmsAt(alarms, START, 5)).toEqual([alarms[0]]);
    expect(alarmsAt(alarms, START, 5.5)).toEqual([alarms[0]]);
    expect(alarmsAt(alarms, START, 4.49)).toEqual([]);
    expect(alarmsAt(alarms, START, 7.5)).toEqual([]);
    expect(alarmsAt(alarms, START, 9.6)).toEqual([alarms[1]]);
    const close = [{ timestamp: START + 1_000 }, { timestamp: START + 1_300 }];
    expect(alarmsAt(close, START, 1.25)).toEqual([close[1], close[0]]);
  });

  it('are read only for the alarms the clip covers', () => {
    const outside = [{ timestamp: START - 2_000 }, { timestamp: START + 16_000 }, ...alarms];
    expect(alarmsInClip(outside, clip())).toEqual(alarms);
    expect(alarmsInClip(outside, clip({ state: 'pending', start: null, end: null }))).toEqual([]);
  });

  it('are the objects of a stored alarm, from their centres to their corners', () => {
    const body = {
      event: 'message',
      task_id: 't1',
      app_id: 'person',
      timestamp: START,
      event_id: 'e1',
      seq: 1,
      data: {
        frame: { width: 768, height: 576, id: 1 },
        rules: [
          {
            id: 'person:0',
            class_id: '0',
            image: '',
            objects: [
              { track_id: '1', x: 100, y: 200, w: 40, h: 80, score: 0.9, class_id: '0', name: 'person' },
            ],
          },
        ],
      },
    } as unknown as CallbackBody;
    expect(boxesOf(body)).toEqual({
      frame: { width: 768, height: 576 },
      boxes: [{ x: 80, y: 160, w: 40, h: 80, label: 'person 0.90' }],
    });
    expect(boxesOf(undefined)).toBeNull();
    expect(boxesOf({ ...body, event: 'task_started' } as unknown as CallbackBody)).toBeNull();
  });
});

describe('clip links', () => {
  const access = { base: 'http://127.0.0.1:7070/', signer: null, token: null };

  it('are the clip’s own link on the engine, with download=1 for the download', () => {
    expect(clipLink(clip(), access)).toBe('http://127.0.0.1:7070/api/clips/c1?token=abc');
    expect(clipLink(clip(), access, true)).toBe('http://127.0.0.1:7070/api/clips/c1?token=abc&download=1');
  });

  it('are none for a clip not ready, without access, or pointing anywhere but the engine’s clips', () => {
    expect(clipLink(clip({ state: 'pending', url: null }), access)).toBeNull();
    expect(clipLink(clip(), null)).toBeNull();
    expect(clipLink(clip({ url: 'https://elsewhere.example/api/clips/c1' }), access)).toBeNull();
    expect(clipLink(clip({ url: '/api/auth/whoami?token=abc' }), access)).toBeNull();
  });
});

describe('a camera’s day', () => {
  it('is the local day holding the moment', () => {
    const noon = new Date(2026, 10, 28, 12, 30).getTime();
    const { since, until } = dayOf(noon);
    expect(new Date(since).getHours()).toBe(0);
    expect(since).toBeLessThanOrEqual(noon);
    expect(until).toBeGreaterThan(noon);
    expect(new Date(until).getDate()).toBe(29);
  });

  it('places an item at its time, at least a visible width, clipped to the day', () => {
    const since = 0;
    const until = 86_400_000;
    expect(markSpan({ start: 43_200_000, end: 43_200_000 + 8_640_000 }, since, until)).toEqual({
      left: 50,
      width: 10,
    });
    expect(markSpan({ start: 43_200_000, end: 43_200_000 }, since, until)).toEqual({
      left: 50,
      width: MIN_MARK_PERCENT,
    });
    expect(markSpan({ start: -5_000, end: 8_640_000 }, since, until)).toEqual({ left: 0, width: 10 });
    expect(markSpan({ start: until - 1, end: until + 60_000 }, since, until).left).toBe(
      100 - MIN_MARK_PERCENT,
    );
  });

  it('is cut into hours and ten minutes on the local clock', () => {
    const at = new Date(2026, 10, 28, 14, 37, 12).getTime();
    const hour = windowOf(at, 'hour');
    expect([new Date(hour.since).getHours(), new Date(hour.since).getMinutes()]).toEqual([14, 0]);
    expect(hour.until - hour.since).toBe(3_600_000);
    const ten = windowOf(at, 'tenMinutes');
    expect([new Date(ten.since).getHours(), new Date(ten.since).getMinutes()]).toEqual([14, 30]);
    expect(ten.until - ten.since).toBe(600_000);
    expect(windowOf(at, 'day')).toEqual(dayOf(at));
  });

  it('stacks overlapping marks on lanes, and the ones past the last lane share it', () => {
    const mark = (left: number, width = 1) => ({ left, width });
    expect(lanesOf([mark(0), mark(2), mark(4)])).toEqual([0, 0, 0]);
    expect(lanesOf([mark(0, 5), mark(1), mark(1.5), mark(2), mark(6)])).toEqual([0, 1, 2, 1, 0]);
    const crowd = Array.from({ length: MARK_LANES + 2 }, () => mark(10, 5));
    expect(lanesOf(crowd)).toEqual([0, 1, 2, 3, 3, 3]);
  });
});
