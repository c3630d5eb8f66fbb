import { describe, expect, it } from 'vitest';
import type { EventItem, ImageResult } from '../renderer/src/api';
import { mergeResults, type Upload } from '../renderer/src/images/results';

/** The Images screen's list: the engine's stored events, one entry per image, with the page's uploads. */

const frame = { width: 640, height: 480, id: 1 };
const rule = (id: string, x: number) => ({
  id,
  class_id: 'change',
  image: 'SNAP',
  objects: [{ track_id: '1', x, y: 10, w: 20, h: 20, score: 0.9, class_id: 'change', name: 'change' }],
});

function stored(seq: number, imageId: number, timestamp: number, ruleId: string): EventItem {
  return {
    event_id: `e${seq}`,
    task_id: 't',
    seq,
    state: 'no_receiver',
    body: {
      event: 'message',
      task_id: 't',
      app_id: ruleId.split(':')[0] as string,
      business_id: '',
      timestamp,
      event_id: `e${seq}`,
      seq,
      data: { frame: { ...frame, id: imageId }, image_id: imageId, rules: [rule(ruleId, seq)] },
    },
  } as unknown as EventItem;
}

const upload = (imageId: number, at: number, fired: boolean, before?: string): Upload => ({
  at,
  names: `upload ${imageId}`,
  result: {
    image_id: imageId,
    frame: { ...frame, id: imageId },
    rules: fired ? [rule('change:change', 0)] : [],
  } as ImageResult,
  after: `blob:after-${imageId}`,
  ...(before && { before }),
});

describe('mergeResults', () => {
  it('makes one entry per stored image (its apps’ events merged), newest first, skipping task events', () => {
    const items = [
      stored(1, 1, 1000, 'change:change'),
      stored(2, 2, 2000, 'motion:motion'),
      stored(3, 2, 2000, 'change:change'),
      {
        ...stored(4, 0, 3000, 'x:y'),
        body: { event: 'task_closed', task_id: 't', timestamp: 3000 },
      } as unknown as EventItem,
    ];
    const entries = mergeResults(items, []);
    expect(entries.map((e) => [e.imageId, e.rules.map((r) => r.id)])).toEqual([
      [2, ['motion:motion', 'change:change']],
      [1, ['change:change']],
    ]);
    expect(entries.every((e) => e.names === undefined && e.before === undefined)).toBe(true);
  });

  it('adds what the page knows (names, before and after) to the stored image, and keeps uploads nothing fired on', () => {
    const entries = mergeResults(
      [stored(1, 1, 1000, 'change:change')],
      [upload(2, 5000, false), upload(1, 1500, true, 'blob:before-1')],
    );
    expect(entries.map((e) => [e.imageId, e.names, e.before, e.after, e.rules.length])).toEqual([
      [2, 'upload 2', undefined, 'blob:after-2', 0],
      [1, 'upload 1', 'blob:before-1', 'blob:after-1', 1],
    ]);
  });

  it('tells images apart whose ids started again (an engine restart) by their time', () => {
    const entries = mergeResults(
      [stored(1, 1, 1000, 'change:change'), stored(2, 1, 9000, 'change:change')],
      [upload(1, 9100, true, 'blob:before-new')],
    );
    expect(entries.map((e) => [e.key, e.before])).toEqual([
      ['1@9000', 'blob:before-new'],
      ['1@1000', undefined],
    ]);
  });
});
