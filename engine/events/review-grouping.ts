/**
 * Review items (issue 35): each stored alarm joins the item of its object's visit or opens one, inside
 * the outbox's transaction that stores it. A visit is one camera's one track, merged across the apps
 * and rules that fired on it; an alarm without a track (a count alarm, an image task's) joins the
 * same camera, app and rules' item instead. A visit ends once no alarm joined it for REVIEW_GAP_MS.
 * Migration 17 grouped the alarms stored before it the same way, in SQL.
 */
import { randomUUID } from 'node:crypto';
import type { AlarmFacts } from './alarm-facts';
import type { ItemRow, ReviewItemsRepository } from './review-items-repository';
import type { CallbackBody } from './schema';

/** How long a visit waits for its next alarm before it ends (a new alarm then opens a new item). */
export const REVIEW_GAP_MS = 60_000;

type Message = Extract<CallbackBody, { event: 'message' }>;

/**
 * The alarm's track: its first fired rule's first object's (the object it fired for, as the rules
 * report in order). An image task's objects are numbered per picture, not tracked: none.
 */
export function trackOf(body: Message): string | null {
  if (body.data.image_id !== undefined) return null;
  return body.data.rules[0]?.objects[0]?.track_id || null;
}

/** The ",a,b," list with the other's members added after its own. */
function union(list: string, other: string): string {
  const members = new Set([...list.split(','), ...other.split(',')].filter((value) => value !== ''));
  return members.size > 0 ? `,${[...members].join(',')},` : '';
}

export class AlarmGrouping {
  constructor(private readonly items: ReviewItemsRepository) {}

  /** Puts a stored alarm (storage id `rowId`) in its item; within the caller's transaction. */
  place(rowId: number, body: CallbackBody, facts: AlarmFacts): void {
    if (body.event !== 'message') return;
    const track = trackOf(body);
    const groupKey = JSON.stringify(track === null ? [1, body.app_id, facts.rules] : [0, track]);
    const at = body.timestamp;
    const open = this.items.open(body.task_id, groupKey, at - REVIEW_GAP_MS, at + REVIEW_GAP_MS);
    const itemId = open ? this.join(open, body, facts) : this.openItem(body, facts, track, groupKey);
    this.items.assign(itemId, rowId);
  }

  private join(item: ItemRow, body: Message, facts: AlarmFacts): string {
    const peak = facts.max_score > item.peak_score;
    this.items.update({
      ...item,
      apps: union(item.apps, `,${body.app_id},`),
      rules: union(item.rules, facts.rules),
      classes: union(item.classes, facts.classes),
      start_at: Math.min(item.start_at, body.timestamp),
      end_at: Math.max(item.end_at, body.timestamp),
      alarm_count: item.alarm_count + 1,
      peak_score: peak ? facts.max_score : item.peak_score,
      best_event_id: peak ? body.event_id : item.best_event_id,
      first_event_id: body.timestamp < item.start_at ? body.event_id : item.first_event_id,
      // Something new happened in the visit: it is to be looked at again.
      reviewed_at: null,
    });
    return item.item_id;
  }

  private openItem(body: Message, facts: AlarmFacts, track: string | null, groupKey: string): string {
    const itemId = randomUUID();
    this.items.insert({
      item_id: itemId,
      task_id: body.task_id,
      track_id: track,
      group_key: groupKey,
      apps: `,${body.app_id},`,
      rules: facts.rules,
      classes: facts.classes,
      start_at: body.timestamp,
      end_at: body.timestamp,
      alarm_count: 1,
      peak_score: facts.max_score,
      best_event_id: body.event_id,
      first_event_id: body.event_id,
      reviewed_at: null,
    });
    return itemId;
  }
}
