/**
 * Review items (issue 35): the alarms of one visit listed, counted, put on a camera's timeline and
 * marked reviewed together; and "ignore this object here", the task update that stops it firing on
 * its camera, proposed from the item and applied on the operator's word.
 */

import type { Clip } from '../clips/clip-schema';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import { TASK_AREA_LIMITS } from '../tasks/limits';
import type { AppConfigUpdate, RuleOverrides, TaskView, UpdateTaskBody } from '../tasks/schema';
import { taskName } from '../tasks/task-name';
import { type AlarmClipLookup, alarmView } from './review';
import type { ListedItemRow, ReviewItemsRepository } from './review-items-repository';
import {
  type IgnoreBody,
  type IgnoreProposal,
  type IgnoreResult,
  ITEM_ALARMS_MAX,
  type ItemsReviewBody,
  type ReviewCounts,
  type ReviewItem,
  type ReviewItemDetail,
  type ReviewItemPage,
  type ReviewItemQuery,
  TIMELINE_ITEMS_MAX,
  TIMELINE_SPAN_MAX_MS,
  type Timeline,
  type TimelineQuery,
} from './review-items-schema';
import type { ReviewRepository } from './review-repository';
import type { ReportedObject } from './schema';

export type ReviewErrorKind = 'review.not_found' | 'review.invalid';

const DEFAULT_LIMIT = 50;
/** Items one "all shown" marks at most; the newest go first, a repeat marks the rest. */
export const REVIEW_MATCHING_MAX = 100_000;
/** A mask is the object's boxes grown by this share of their size on each side. */
export const MASK_PADDING = 0.1;
/** The largest share of the frame a mask may cover. */
export const MASK_MAX_FRACTION = 0.5;
/**
 * What an ignored class is raised to on its camera: a score no detection reaches and a box side no
 * source has (coordinates end at 16,384 px), so that neither alone lets it fire.
 */
const IGNORED_CLASS = { threshold: 1, min_pixel: 1_000_000 } as const;

/** What items need of tasks: a camera as it is, and the update (4.7) an ignore applies. */
export interface ReviewTasks {
  get(taskId: string): TaskView;
  update(taskId: string, body: UpdateTaskBody): TaskView;
}

const split = (list: string) => list.split(',').filter((value) => value !== '');

function itemView(row: ListedItemRow, clip: Clip | null): ReviewItem {
  return {
    item_id: row.item_id,
    task_id: row.task_id,
    task_name:
      row.mode === null
        ? null
        : taskName({
            name: row.task_name ?? '',
            device_id: row.device_id ?? '',
            video_url: row.video_url ?? '',
            mode: row.mode,
          }),
    track_id: row.track_id,
    apps: split(row.apps),
    rules: split(row.rules),
    classes: split(row.classes),
    start: row.start_at,
    end: row.end_at,
    alarm_count: row.alarm_count,
    peak_score: row.peak_score,
    best_event_id: row.best_event_id,
    first_event_id: row.first_event_id,
    thumbnail_url:
      row.best_has_image === 1 ? `/api/alarms/${encodeURIComponent(row.best_event_id)}/thumbnail` : null,
    clip,
    reviewed_at: row.reviewed_at,
  };
}

const invalid = (msg: string) => new DomainError<ReviewErrorKind>('review.invalid', msg);

export class ReviewItems {
  constructor(
    private readonly items: ReviewItemsRepository,
    private readonly alarms: ReviewRepository,
    private readonly tasks: ReviewTasks,
    private readonly clock: Clock,
    /**
     * Cluster mode: the task may run on another node, whose update this node's registry cannot make;
     * there the caller sends the proposal's request, which the owner answers (docs/cluster.md).
     */
    private readonly clusterMode = false,
    /** The clips of alarms (an item's is its first alarm's); none where clips are not recorded. */
    private readonly clips?: AlarmClipLookup,
  ) {}

  page(query: ReviewItemQuery): ReviewItemPage {
    const { before, limit = DEFAULT_LIMIT, ...filter } = query;
    const rows = this.items.page(filter, before, limit + 1);
    const more = rows.length > limit;
    const items = rows.slice(0, limit);
    const clips = this.clips?.ofAlarms(items.map((row) => row.first_event_id));
    return {
      items: items.map((row) => itemView(row, clips?.get(row.first_event_id) ?? null)),
      total: this.items.count(filter),
      next_before: more ? (items.at(-1)?.id ?? null) : null,
    };
  }

  item(itemId: string): ReviewItemDetail {
    const row = this.row(itemId);
    const alarms = this.alarms.ofItem(itemId, ITEM_ALARMS_MAX + 1);
    const listed = alarms.slice(0, ITEM_ALARMS_MAX);
    const clips = this.clips?.ofAlarms([row.first_event_id, ...listed.map((alarm) => alarm.event_id)]);
    return {
      ...itemView(row, clips?.get(row.first_event_id) ?? null),
      alarms: listed.map((alarm) => ({ ...alarmView(alarm), clip: clips?.get(alarm.event_id) ?? null })),
      more: alarms.length > ITEM_ALARMS_MAX,
    };
  }

  /** Marks items (by id, or every one a filter matches) and all their alarms; how many items. */
  review(body: ItemsReviewBody): number {
    const at = body.reviewed ? this.clock.now() : null;
    return 'item_ids' in body
      ? this.items.review(body.item_ids, at)
      : this.items.reviewMatching(body.filter, at, REVIEW_MATCHING_MAX);
  }

  timeline({ task_id, since, until }: TimelineQuery): Timeline {
    if (until <= since) throw invalid('querystring/until: must be after since');
    if (until - since > TIMELINE_SPAN_MAX_MS)
      throw invalid(`querystring/until: a timeline spans at most ${TIMELINE_SPAN_MAX_MS / 86_400_000} days`);
    const rows = this.items.timeline(task_id, since, until, TIMELINE_ITEMS_MAX + 1);
    return {
      items: rows.slice(0, TIMELINE_ITEMS_MAX).map((row) => ({
        item_id: row.item_id,
        start: row.start_at,
        end: row.end_at,
        peak_score: row.peak_score,
        classes: split(row.classes),
        reviewed: row.reviewed_at !== null,
      })),
      truncated: rows.length > TIMELINE_ITEMS_MAX,
    };
  }

  counts(since = 0): ReviewCounts {
    const byTask: ReviewCounts['by_task'] = {};
    let total = 0;
    let unreviewed = 0;
    for (const row of this.items.counts(since)) {
      byTask[row.task_id] = { total: row.total, unreviewed: row.unreviewed };
      total += row.total;
      unreviewed += row.unreviewed;
    }
    return { total, unreviewed, by_task: byTask };
  }

  /** The task update that ignores the item's object on its camera; applied when asked. */
  ignore(itemId: string, { kind, apply }: IgnoreBody): IgnoreResult {
    const item = this.row(itemId);
    const task = this.tasks.get(item.task_id);
    const apps = split(item.apps).filter((appId) => task.app_ids.includes(appId));
    if (apps.length === 0)
      throw invalid(
        `item ${itemId}: its camera no longer runs the apps that fired (${split(item.apps).join(', ')})`,
      );
    const proposal =
      kind === 'class' ? this.classProposal(item, task, apps) : this.maskProposal(item, task, apps);
    if (apply && this.clusterMode)
      throw invalid(
        `apply: in cluster mode send the proposal's request (${proposal.request.method} ${proposal.request.path}), which the task's owner answers`,
      );
    if (apply) this.tasks.update(task.task_id, proposal.request.body);
    return { proposal, applied: apply };
  }

  /** Each app that fired gets the classes it fired for raised out of reach, on this camera only. */
  private classProposal(item: ListedItemRow, task: TaskView, apps: string[]): IgnoreProposal {
    const overrides: RuleOverrides = {};
    const classes = new Set<string>();
    for (const appId of apps) {
      const fired = split(item.rules)
        .filter((rule) => rule.startsWith(`${appId}:`))
        .map((rule) => rule.slice(appId.length + 1))
        .filter((classId) => classId !== 'counter');
      if (fired.length === 0) continue;
      const own = task.rule_overrides?.[appId] ?? {};
      const kept = (own.classes ?? []).filter((entry) => !fired.includes(entry.class_id));
      const raised = fired.map((classId) => ({
        ...own.classes?.find((entry) => entry.class_id === classId),
        class_id: classId,
        ...IGNORED_CLASS,
      }));
      overrides[appId] = { ...own, classes: [...kept, ...raised] };
      for (const classId of fired) classes.add(classId);
    }
    if (classes.size === 0) throw invalid(`item ${item.item_id}: its alarms fired for no class to ignore`);
    return {
      kind: 'class',
      task_id: task.task_id,
      apps: Object.keys(overrides),
      classes: [...classes],
      mask: null,
      frame_fraction: null,
      request: this.request(task, { rule_overrides: overrides }),
    };
  }

  /** A box around every stored box of the item's object, padded, added to each firing app's masks. */
  private maskProposal(item: ListedItemRow, task: TaskView, apps: string[]): IgnoreProposal {
    let box: { x1: number; y1: number; x2: number; y2: number } | undefined;
    let frame: { width: number; height: number } | undefined;
    for (const alarm of this.items.boxes(item.item_id, ITEM_ALARMS_MAX)) {
      frame = JSON.parse(alarm.frame) as { width: number; height: number };
      for (const o of JSON.parse(alarm.objects) as ReportedObject[]) {
        if (item.track_id !== null && o.track_id !== item.track_id) continue;
        const [x1, y1, x2, y2] = [o.x - o.w / 2, o.y - o.h / 2, o.x + o.w / 2, o.y + o.h / 2];
        box = box
          ? {
              x1: Math.min(box.x1, x1),
              y1: Math.min(box.y1, y1),
              x2: Math.max(box.x2, x2),
              y2: Math.max(box.y2, y2),
            }
          : { x1, y1, x2, y2 };
      }
    }
    if (!box || !frame) throw invalid(`item ${item.item_id}: its alarms keep no box of the object`);
    const padX = (box.x2 - box.x1) * MASK_PADDING;
    const padY = (box.y2 - box.y1) * MASK_PADDING;
    const x1 = Math.max(0, Math.floor(box.x1 - padX));
    const y1 = Math.max(0, Math.floor(box.y1 - padY));
    const x2 = Math.min(frame.width, Math.ceil(box.x2 + padX));
    const y2 = Math.min(frame.height, Math.ceil(box.y2 + padY));
    const fraction = ((x2 - x1) * (y2 - y1)) / (frame.width * frame.height);
    if (fraction > MASK_MAX_FRACTION)
      throw invalid(
        `item ${item.item_id}: a mask around the object would cover ${Math.round(fraction * 100)}% of the frame; at most ${MASK_MAX_FRACTION * 100}%`,
      );
    const mask = [
      [x1, y1],
      [x2, y1],
      [x2, y2],
      [x1, y2],
    ];
    const configs: AppConfigUpdate[] = apps.map((appId) => {
      const config = task.app_configs.find((c) => c.app_id === appId) ?? { app_id: appId, polygon: [] };
      const masks = config.masks ?? [];
      if (masks.length >= TASK_AREA_LIMITS.masksPerApp)
        throw invalid(
          `app_configs.${appId}.masks: the app has ${masks.length} masks, at most ${TASK_AREA_LIMITS.masksPerApp}`,
        );
      return { ...config, masks: [...masks, mask] };
    });
    return {
      kind: 'mask',
      task_id: task.task_id,
      apps,
      classes: [],
      mask,
      frame_fraction: Math.round(fraction * 1000) / 1000,
      request: this.request(task, { app_configs: configs }),
    };
  }

  private request(task: TaskView, body: IgnoreProposal['request']['body']): IgnoreProposal['request'] {
    return { method: 'PUT', path: `/api/task/${encodeURIComponent(task.task_id)}`, body };
  }

  private row(itemId: string): ListedItemRow {
    const row = this.items.one(itemId);
    if (!row) throw new DomainError<ReviewErrorKind>('review.not_found', `no review item ${itemId}`);
    return row;
  }
}
