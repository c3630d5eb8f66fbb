/**
 * Alarm review: the stored alarms filtered and paged for an operator, marked reviewed, each with a
 * small thumbnail made on demand (kept in a bounded cache), its full snapshot, and an export of one
 * alarm (its JSON and snapshots in a zip). Reads the outbox's rows; never changes their delivery.
 */
import { LRUCache } from 'lru-cache';
import sharp from 'sharp';
import yazl from 'yazl';
import type { Clip } from '../clips/clip-schema';
import type { Clock } from '../clock';
import { DomainError } from '../domain-error';
import type { AlarmFilter, AlarmRow, ReviewRepository } from './review-repository';
import type { AlarmFacets, AlarmPage, AlarmQuery, AlarmView } from './review-schema';
import type { CallbackBody } from './schema';

export type AlarmErrorKind = 'alarm.not_found' | 'alarm.no_image';

const DEFAULT_LIMIT = 50;
export const THUMBNAIL_WIDTH = 320;
/** Thumbnails kept (about 15 KB each). */
const THUMBNAILS_KEPT = 1000;
/** Rule and class combinations read for the filter lists. */
const FACET_ROWS = 5000;

const split = (list: string) => list.split(',').filter((value) => value !== '');

/** A stored alarm as review lists it. */
export function alarmView(row: AlarmRow): AlarmView {
  return {
    event_id: row.event_id,
    task_id: row.task_id,
    seq: row.seq,
    app_id: row.app_id,
    timestamp: row.timestamp,
    rules: split(row.rules),
    classes: split(row.classes),
    max_score: row.max_score,
    reviewed_at: row.reviewed_at,
    has_image: row.has_image === 1,
    thumbnail_url: row.has_image === 1 ? `/api/alarms/${encodeURIComponent(row.event_id)}/thumbnail` : null,
    state: row.state,
    attempts: row.attempts,
    clip: null,
  };
}

/** The clips alarms name (engine/clips/alarm-clips.ts). */
export interface AlarmClipLookup {
  ofAlarms(eventIds: readonly string[]): Map<string, Clip>;
}

export class AlarmReview {
  private readonly thumbnails = new LRUCache<string, Buffer>({ max: THUMBNAILS_KEPT });
  /** Thumbnails being made: a list of rows asking for the same one at once makes it once. */
  private readonly making = new Map<string, Promise<Buffer>>();
  /** Thumbnails made since the engine started (cache misses). */
  thumbnailsMade = 0;

  constructor(
    private readonly store: ReviewRepository,
    private readonly clock: Clock,
    private readonly clips?: AlarmClipLookup,
  ) {}

  page(query: AlarmQuery): AlarmPage {
    const { before, limit = DEFAULT_LIMIT, ...filter } = query;
    const rows = this.store.page(filter as AlarmFilter, before, limit + 1);
    const more = rows.length > limit;
    const items = rows.slice(0, limit);
    const clips = this.clips?.ofAlarms(items.map((row) => row.event_id));
    return {
      items: items.map((row) => ({ ...alarmView(row), clip: clips?.get(row.event_id) ?? null })),
      total: this.store.count(filter as AlarmFilter),
      next_before: more ? (items.at(-1)?.id ?? null) : null,
    };
  }

  facets(): AlarmFacets {
    const pairs = this.store.tasksAndApps();
    const lists = this.store.rulesAndClasses(FACET_ROWS);
    const sorted = (values: Iterable<string>) => [...new Set(values)].sort();
    return {
      tasks: sorted(pairs.map((pair) => pair.task_id)),
      apps: sorted(pairs.map((pair) => pair.app_id)),
      rules: sorted(lists.flatMap((list) => split(list.rules))),
      classes: sorted(lists.flatMap((list) => split(list.classes))),
    };
  }

  /** Marks alarms reviewed or not; how many of them exist. */
  review(eventIds: readonly string[], reviewed: boolean): number {
    return this.store.setReviewed(eventIds, reviewed ? this.clock.now() : null);
  }

  /** A fired rule's annotated snapshot as JPEG, as the callback carried it. */
  snapshot(eventId: string, ruleIndex: number): Buffer {
    const { body } = this.alarm(eventId);
    const image = body.event === 'message' ? body.data.rules[ruleIndex]?.image : undefined;
    if (!image)
      throw new DomainError<AlarmErrorKind>(
        'alarm.no_image',
        `event ${eventId} keeps no snapshot ${ruleIndex}`,
      );
    return Buffer.from(image, 'base64');
  }

  /** The snapshot 320 px wide, made once and kept. */
  thumbnail(eventId: string, ruleIndex: number): Promise<Buffer> {
    const key = `${eventId}#${ruleIndex}`;
    const kept = this.thumbnails.get(key);
    if (kept) return Promise.resolve(kept);
    let made = this.making.get(key);
    if (!made) {
      made = this.makeThumbnail(eventId, ruleIndex, key).finally(() => this.making.delete(key));
      this.making.set(key, made);
    }
    return made;
  }

  private async makeThumbnail(eventId: string, ruleIndex: number, key: string): Promise<Buffer> {
    const jpeg = await sharp(this.snapshot(eventId, ruleIndex))
      .resize({ width: THUMBNAIL_WIDTH, withoutEnlargement: true })
      .jpeg({ quality: 70 })
      .toBuffer();
    this.thumbnails.set(key, jpeg);
    this.thumbnailsMade++;
    return jpeg;
  }

  /** One alarm as a zip: alarm.json (the callback, snapshots replaced by their file names) and the JPEGs. */
  async export(eventId: string): Promise<Buffer> {
    const { body, row } = this.alarm(eventId);
    const zip = new yazl.ZipFile();
    let json: unknown = body;
    if (body.event === 'message') {
      const rules = body.data.rules.map((rule, index) => {
        if (!rule.image) return rule;
        const name = `snapshot-${index}.jpg`;
        zip.addBuffer(Buffer.from(rule.image, 'base64'), name, { compress: false });
        return { ...rule, image: name };
      });
      json = { ...body, data: { ...body.data, rules } };
    }
    zip.addBuffer(
      Buffer.from(JSON.stringify({ alarm: alarmView(row), callback: json }, null, 2)),
      'alarm.json',
    );
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  private alarm(eventId: string): { body: CallbackBody; row: AlarmRow } {
    const row = this.store.withBody(eventId);
    if (!row) throw new DomainError<AlarmErrorKind>('alarm.not_found', `no stored alarm ${eventId}`);
    return { body: JSON.parse(row.body) as CallbackBody, row };
  }
}
