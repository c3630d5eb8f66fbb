import { describe, expect, it } from 'vitest';
import type { CallbackBody, FeedItem } from '../renderer/src/feed/model';
import { lastAlarmAt, pageCount, pageOf, startOfDay, tileVideo } from '../renderer/src/wall/layout';

describe('the live wall’s arithmetic', () => {
  it('pages cameras, clamping a page past the end to the last one', () => {
    const cameras = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(pageCount(6, 4)).toBe(2);
    expect(pageCount(0, 4)).toBe(1);
    expect(pageOf(cameras, 4, 0)).toEqual(['a', 'b', 'c', 'd']);
    expect(pageOf(cameras, 4, 1)).toEqual(['e', 'f']);
    expect(pageOf(cameras, 4, 7)).toEqual(['e', 'f']);
  });

  it('asks a video scaled to the tile on every grid but one camera, smaller as the grid grows', () => {
    expect(tileVideo(1)).toBeNull();
    expect(([4, 9, 16] as const).map((size) => tileVideo(size)?.width)).toEqual([960, 640, 480]);
  });

  it('counts a tile’s alarms from local midnight', () => {
    const evening = new Date(2026, 10, 28, 21, 30, 15).getTime();
    expect(startOfDay(evening)).toBe(new Date(2026, 10, 28).getTime());
  });

  it('hears a camera’s newest alarm on the feed, not other events or other cameras', () => {
    const item = (event: string, taskId: string, timestamp: number) =>
      ({
        body: { event, task_id: taskId, timestamp } as unknown as CallbackBody,
        delivery: null,
        imagesTrimmed: false,
      }) as FeedItem;
    const items = [
      item('message', 'a', 1000),
      item('message', 'a', 500),
      item('stream_lost', 'a', 1200),
      item('message', 'b', 1500),
    ];
    expect(lastAlarmAt(items, 'a')).toBe(1000);
    expect(lastAlarmAt(items, 'b')).toBe(1500);
    expect(lastAlarmAt(items, 'c')).toBe(0);
  });
});
