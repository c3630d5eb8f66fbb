import { describe, expect, it } from 'vitest';
import { type AppRuleContext, AppRuleState } from '../engine/rules/evaluate';
import { DEFAULT_INERTIA, TrackInertia } from '../engine/rules/inertia';
import type { FrameInfo } from '../engine/rules/rule-kind';
import type { Rule } from '../engine/rules/schema';
import { ruleProblems } from '../engine/rules/validate';
import type { TrackedObject } from '../engine/vision/types';
import { PERSON, standing } from './helpers/rule-tracks';

const person = PERSON;

const obj = standing;

const frame = (n: number): FrameInfo => ({ id: n, timestampMs: n * 100, width: 1920, height: 1080 });

const app = (rule: Rule, over: Partial<AppRuleContext> = {}): AppRuleContext => ({
  appId: 'app',
  appType: 1,
  rule,
  polygon: [],
  ...over,
});

/** Feeds the given tracks frame by frame; returns per frame the fired rule ids with their track ids. */
function run(state: AppRuleState, frames: TrackedObject[][]): string[][] {
  return frames.map((objects, n) =>
    state
      .evaluate(frame(n), objects)
      .firings.map((f) => `${f.id} ${f.objects.map((o) => `${o.track_id}${o.direction ?? ''}`).join(',')}`),
  );
}

describe('TrackInertia', () => {
  /** Per frame, the counted tracks among those seen. */
  const counted = (seen: string[][], inertia = DEFAULT_INERTIA) => {
    const tracks = new TrackInertia();
    return seen.map((ids) => [...tracks.update(ids, inertia)]);
  };

  it('defaults to 3 of the last 5 analysed frames', () => {
    expect(DEFAULT_INERTIA).toEqual({ hits: 3, frames: 5 });
  });

  it('never counts a track seen in one frame only', () => {
    expect(counted([['a'], [], [], [], [], []])).toEqual([[], [], [], [], [], []]);
  });

  it('counts a steady track from its 3rd sighting on', () => {
    expect(counted([['a'], ['a'], ['a'], ['a']])).toEqual([[], [], ['a'], ['a']]);
  });

  it('counts hits within the window only: gaps are allowed, older hits drop out', () => {
    // Seen in frames 0, 2, 4: three hits in frames 0..4. Then 7: only 4 and 7 lie in 3..7.
    expect(counted([['a'], [], ['a'], [], ['a'], [], [], ['a'], ['a']])).toEqual([
      [],
      [],
      [],
      [],
      ['a'],
      [],
      [],
      [],
      ['a'],
    ]);
  });

  it('takes the given hits and frames', () => {
    expect(counted([['a', 'b'], ['a'], ['b']], { hits: 2, frames: 2 })).toEqual([[], ['a'], []]);
    expect(counted([['a']], { hits: 1, frames: 1 })).toEqual([['a']]);
  });
});

describe('inertia in the rules', () => {
  it('lets a one-frame flicker fire no class rule, while a steady object fires from its 3rd frame', () => {
    const state = new AppRuleState(app({ classes: [person] }));
    const steady = (n: number) => obj('steady', [100 + n, 300]);
    expect(
      run(state, [
        [steady(0), obj('flicker-1', [500, 300])],
        [steady(1)],
        [steady(2), obj('flicker-2', [600, 300])],
        [steady(3)],
      ]),
    ).toEqual([[], [], ['app:0 steady'], ['app:0 steady']]);
  });

  it('keeps flickers out of counters and the overlay', () => {
    const state = new AppRuleState(
      app({
        classes: [person],
        counter: { numeric_type: 1, distance: 0, min_count: 1, max_count: 0, class_counts: [] },
      }),
    );
    const results = [0, 1, 2].map((n) => state.evaluate(frame(n), [obj(`flicker-${n}`, [100, 300])]));
    expect(results.map((r) => [r.firings, r.shown, r.zoneOccupied])).toEqual([
      [[], [], false],
      [[], [], false],
      [[], [], false],
    ]);
  });

  it('counts a line crossing only by a track that meets the inertia', () => {
    const line = {
      appType: 3 as const,
      polygon: [
        [0, 500],
        [1000, 500],
      ],
    };
    const state = new AppRuleState(app({ classes: [person] }, line));
    // "fast" crosses between its 1st and 2nd sighting, before it meets 3 of 5; "slow" after its 3rd.
    expect(
      run(state, [
        [obj('fast', [100, 400]), obj('slow', [300, 300])],
        [obj('fast', [100, 600]), obj('slow', [300, 350])],
        [obj('fast', [100, 700]), obj('slow', [300, 400])],
        [obj('fast', [100, 800]), obj('slow', [300, 600])],
      ]),
    ).toEqual([[], [], [], ['app:0 slowin']]);
  });

  it('does not apply to images, which have no tracks', () => {
    const state = new AppRuleState(app({ classes: [person] }, { perImage: true }));
    expect(run(state, [[obj('1', [100, 300])]])).toEqual([['app:0 1']]);
  });

  it('is refused with more hits than frames', () => {
    expect(ruleProblems({ inertia: { hits: 4, frames: 3 } }, null)).toEqual([
      'rule.inertia: hits 4 is greater than frames 3',
    ]);
  });
});
