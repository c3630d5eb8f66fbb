import { beforeAll, describe, expect, it } from 'vitest';
import { type AppRuleContext, AppRuleState, type RuleFiring } from '../engine/rules/evaluate';
import type { ClassEntry, Rule } from '../engine/rules/schema';
import type { TrackedObject } from '../engine/tracking/byte-tracker';
import { FIXTURE_SIZE, fixtureTracks } from './helpers/fixture-tracks';

/**
 * The rules on the fixture video (vtest.avi: 795 frames at 10 fps, people walking), with the fixture
 * model and the tracker as a video task runs them, every frame analysed.
 */

const person: ClassEntry = {
  class_id: '0',
  name: 'person',
  color: '#ff3b30',
  threshold: 0.55,
  min_pixel: 0,
  max_pixel: 0,
};

let frames: TrackedObject[][];

beforeAll(async () => {
  frames = await fixtureTracks(person.threshold);
}, 300_000);

/** Every firing of the app over the whole video, with the frame index it fired on. */
function fire(ctx: Partial<AppRuleContext> & { rule: Rule }): Array<{ frame: number; firing: RuleFiring }> {
  const state = new AppRuleState({ appId: 'app', appType: 1, polygon: [], ...ctx });
  return frames.flatMap((objects, i) =>
    state
      .evaluate({ id: i + 1, timestampMs: i * 100, ...FIXTURE_SIZE }, objects)
      .firings.map((firing) => ({ frame: i, firing })),
  );
}

describe('inertia on the fixture video', () => {
  it('reports no object whose track was seen in only one frame (class rule, interval 0)', () => {
    const sightings = new Map<string, number>();
    for (const o of frames.flat()) sightings.set(o.trackId, (sightings.get(o.trackId) ?? 0) + 1);
    const flickers = (rule: Rule) => [
      ...new Set(
        fire({ rule })
          .flatMap(({ firing }) => firing.objects)
          .filter((o) => sightings.get(o.track_id) === 1)
          .map((o) => o.track_id),
      ),
    ];

    // Without inertia the video has such flickers; with the default none is reported.
    expect(flickers({ classes: [person], inertia: { hits: 1, frames: 1 } }).length).toBeGreaterThan(0);
    expect(flickers({ classes: [person] })).toEqual([]);
  });
});
