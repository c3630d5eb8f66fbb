import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Outbox } from '../engine/callbacks/outbox';
import { OutboxRepository } from '../engine/callbacks/outbox-repository';
import { systemClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { AlarmReview } from '../engine/events/review';
import { ReviewRepository } from '../engine/events/review-repository';
import type { Db } from '../engine/store/db';
import { openDb } from '../engine/store/db';
import { message } from './helpers/receiver';

/**
 * Alarm thumbnails over a real SQLite outbox and sharp: a screenful of rows asking for the same
 * thumbnail at once makes it once, later asks come from the cache, and each item names its URL.
 */

let dir: string;
let db: Db;
let review: AlarmReview;
let eventId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-review-thumbs-'));
  db = openDb(join(dir, 'data'));
  const outbox = new Outbox(
    new OutboxRepository(db),
    { listedTaskIds: () => [] },
    systemClock,
    new EventBus(),
  );
  const jpeg = await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#804020' } })
    .jpeg()
    .toBuffer();
  const task = randomUUID();
  const event = message(task, 1);
  if (event.event === 'message') (event.data.rules[0] as { image: string }).image = jpeg.toString('base64');
  eventId = outbox.enqueue({ task_id: task, report_url: '' }, event).event_id;
  review = new AlarmReview(new ReviewRepository(db), systemClock);
});

afterAll(() => {
  db?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('alarm thumbnails', () => {
  it('are made once for callers asking at the same time, then served from the cache', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => review.thumbnail(eventId, 0)));
    expect(review.thumbnailsMade).toBe(1);
    expect(new Set(answers).size).toBe(1);
    expect((await sharp(answers[0] as Buffer).metadata()).width).toBe(320);
    await review.thumbnail(eventId, 0);
    expect(review.thumbnailsMade).toBe(1);
  });

  it('are named in each listed alarm', () => {
    expect(review.page({}).items.map((item) => item.thumbnail_url)).toEqual([
      `/api/alarms/${eventId}/thumbnail`,
    ]);
  });
});
