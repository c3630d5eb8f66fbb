import { seconds } from '../dwell';
import { REMOVED_COLOR, type RemovedArea, RemovedObjects, type WatchedArea } from '../removed-object';
import type { ReportedObject, RuleFiring, RuleInput, RuleKind, ShownObject } from '../rule-kind';
import { APP_TYPE, DEFAULT_PERSON_CLASS_ID } from '../schema';

/** A removed object's area as reported: its differing box, share and time, under its zone's name. */
function reportRemoved({ name, box, fraction, area, sinceMs }: RemovedArea, nowMs: number): ReportedObject {
  return {
    track_id: '',
    x: Math.round((box.x1 + box.x2) / 2),
    y: Math.round((box.y1 + box.y2) / 2),
    w: Math.round(box.x2 - box.x1),
    h: Math.round(box.y2 - box.y1),
    score: Math.round(fraction * 1000) / 1000,
    class_id: 'removed',
    name: name || 'removed',
    area,
    ...(name && { zones: [name] }),
    removed: seconds(nowMs - sinceMs),
  };
}

/**
 * Rule `removed_object` (type 3, video): each zone, else the region or the frame, watched against its
 * learned background; `<app_id>:removed` fires once per change, besides the app's other rules. What it
 * draws (the areas that fired and still differ) it answers apart, through shown().
 */
export class RemovedObjectRule implements RuleKind {
  private readonly removed = new RemovedObjects();

  applies({ app, picture }: RuleInput): boolean {
    return !!app.rule.removed_object && !!picture && !app.perImage && app.appType === APP_TYPE.timeSeries;
  }

  judge({ app, frame, nowMs, objects, picture }: RuleInput): RuleFiring[] {
    const rule = app.rule.removed_object;
    if (!rule || !picture) return [];
    const personClass = rule.person_class_id ?? DEFAULT_PERSON_CLASS_ID;
    const people = objects.filter((o) => String(o.classIndex) === personClass);
    const areas: readonly WatchedArea[] =
      app.zones.length > 0 ? app.zones : [{ name: '', polygon: app.region }];
    const removed = this.removed.update(nowMs, picture, frame, areas, people, rule);
    if (removed.length === 0) return [];
    const reported = removed.map((area) => reportRemoved(area, nowMs));
    return [{ id: `${app.appId}:removed`, class_id: 'removed', objects: reported }];
  }

  /** The areas that fired and still differ from their background, to be drawn; none where the rule does not apply. */
  shown(input: RuleInput): ShownObject[] {
    if (!this.applies(input)) return [];
    return this.removed
      .showing()
      .map((area) => ({ ...reportRemoved(area, input.nowMs), color: REMOVED_COLOR }));
  }
}
