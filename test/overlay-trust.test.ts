import { describe, expect, it } from 'vitest';
import { MAX_PREDICT_MS, observe, predict, STALE_MS } from '../engine/live/box-motion';
import { LiveOverlay, oneLabelPerObject } from '../engine/live/live-overlay';
import type { AnalysedFrame, AppOverlay } from '../engine/pipeline/task-pipeline';
import { DEFAULT_OSD } from '../engine/tasks/schema';

/**
 * The pure parts of issue 34's "overlays to trust": a box moved on between analyses to the shown
 * frame's time, and one box and tag per tracked object however many apps show it.
 */

const box = (x: number, y = 100, w = 40, h = 100) => ({ x1: x, y1: y, x2: x + w, y2: y + h });

describe('box motion between analyses', () => {
  it('moves a walking box on at its measured velocity to the shown frame', () => {
    // 30 px per 300 ms analysis: 0.1 px/ms to the right.
    const first = observe(undefined, box(100), 1_000);
    expect(predict(first, 1_200)).toEqual(box(100));
    const second = observe(first, box(130), 1_300);
    expect(second.vx).toBeCloseTo(0.1, 9);
    expect(predict(second, 1_300)).toEqual(box(130));
    expect(predict(second, 1_500)).toEqual(box(150));
    // A steadier velocity: the new step weighs half.
    const third = observe(second, box(166), 1_600);
    expect(third.vx).toBeCloseTo(0.11, 9);
  });

  it('moves a box at most MAX_PREDICT_MS ahead, and drops it once STALE_MS old', () => {
    const moving = observe(observe(undefined, box(100), 0), box(110), 100);
    expect(predict(moving, 100 + MAX_PREDICT_MS)?.x1).toBeCloseTo(110 + 0.1 * MAX_PREDICT_MS, 6);
    expect(predict(moving, 100 + STALE_MS)?.x1).toBeCloseTo(110 + 0.1 * MAX_PREDICT_MS, 6);
    expect(predict(moving, 100 + STALE_MS + 1)).toBeNull();
    // A frame shown before the analysed one (clocks of two threads) gets the analysed place.
    expect(predict(moving, 50)).toEqual(box(110));
  });

  it('takes no velocity from a jump larger than the box (the track went to another object) or a long gap', () => {
    const first = observe(undefined, box(100), 0);
    expect(observe(first, box(300), 300).vx).toBe(0);
    expect(observe(first, box(110), STALE_MS + 1).vx).toBe(0);
    // The same frame's result again keeps the velocity measured.
    const moving = observe(first, box(110), 100);
    expect(observe(moving, box(112), 100).vx).toBeCloseTo(0.1, 9);
  });
});

describe('one label per object', () => {
  const person = { ...box(10), color: '#ff3b30', name: 'person', trackId: '7' };

  it('merges the tags of apps showing one track and keeps the others apart', () => {
    const merged = oneLabelPerObject([
      { key: '7', appName: 'loiter', object: person },
      { key: '7', appName: 'intrusion', object: { ...person, color: '#007aff' } },
      { key: '8', appName: 'loiter', object: { ...person, trackId: '8' } },
      { key: '9', appName: 'cars', object: { ...person, trackId: '9', name: 'car' } },
      { key: '9', appName: 'vehicles', object: { ...person, trackId: '9', name: 'vehicle' } },
    ]);
    expect([...merged.keys()]).toEqual(['7', '8', '9']);
    expect(merged.get('7')).toEqual({ ...person, name: 'person · loiter, intrusion' });
    expect(merged.get('8')?.name).toBe('person');
    expect(merged.get('9')?.name).toBe('car/vehicle · cars, vehicles');
  });

  it('the AI video draws one box and one tag per tracked object when two apps watch one class', () => {
    const overlay = new LiveOverlay(['loiter', 'intrusion'], DEFAULT_OSD);
    const shown = { track_id: '7', x: 80, y: 125, w: 80, h: 150, score: 0.9, class_id: '0', name: 'person' };
    const app = (appId: string, color: string): AppOverlay => ({
      appId,
      appName: appId === 'loiter' ? 'Loitering' : 'Intrusion',
      zone: { points: [], color },
      areas: [],
      objects: [{ ...shown, color }],
    });
    const frame: AnalysedFrame = {
      frameId: 1,
      timestampMs: 0,
      shownAt: 500,
      size: { width: 320, height: 240 },
      frameSize: { width: 320, height: 240 },
      frame: null,
      models: new Map(),
      results: [],
      overlays: [app('loiter', '#ff3b30'), app('intrusion', '#007aff')],
    };
    overlay.onAnalysed(frame);
    const drawn = overlay.objectsAt(600);
    expect(drawn).toEqual([
      {
        x1: 40,
        y1: 50,
        x2: 120,
        y2: 200,
        color: '#ff3b30',
        name: 'person · Loitering, Intrusion',
        trackId: '7',
      },
    ]);
  });
});
