import { describe, expect, it } from 'vitest';
import type { CallbackBody, FeedItem } from '../renderer/src/feed/model';
import { pageCount, pageOf, playsVideo, recentAlarms } from '../renderer/src/wall/layout';

describe('the live wall’s arithmetic', () => {
  it('pages cameras, clamping a page past the end to the last one', () => {
    const cameras = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(pageCount(6, 4)).toBe(2);
    expect(pageCount(0, 4)).toBe(1);
    expect(pageOf(cameras, 4, 0)).toEqual(['a', 'b', 'c', 'd']);
    expect(pageOf(cameras, 4, 1)).toEqual(['e', 'f']);
    expect(pageOf(cameras, 4, 7)).toEqual(['e', 'f']);
  });

  it('plays video up to the decoding budget of four tiles, snapshots beyond', () => {
    expect([1, 4, 5, 9, 16].map(playsVideo)).toEqual([true, true, false, false, false]);
  });

  it('counts a camera’s alarms since a time, not other events or other cameras', () => {
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
    expect(recentAlarms(items, 'a', 600)).toBe(1);
    expect(recentAlarms(items, 'a', 0)).toBe(2);
  });
});
