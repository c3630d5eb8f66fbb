import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlarmPage } from '../engine/contract';
import { readZip } from './helpers/coco';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { message } from './helpers/receiver';

/**
 * Alarm review when the outbox's snapshot bound dropped an alarm's picture: the list says so, its
 * thumbnail and snapshot answer 40407 (no broken image, no 500), and its export still holds the JSON.
 * Also: the list refuses a query field it does not know.
 */

let t: TestEngine;
let jpegBase64: string;
const task = randomUUID();

beforeAll(async () => {
  const jpeg = await sharp({ create: { width: 1280, height: 720, channels: 3, background: '#3a6' } })
    .jpeg()
    .toBuffer();
  jpegBase64 = jpeg.toString('base64');
  // Room for one snapshot: storing the second drops the first's.
  t = await startTestEngine(undefined, undefined, { delivery: { imageLimitBytes: jpegBase64.length + 100 } });
  for (const frame of [1, 2]) {
    const event = message(task, frame);
    const rule = event.event === 'message' ? event.data.rules[0] : undefined;
    if (rule) rule.image = jpegBase64;
    t.engine.outbox.enqueue({ task_id: task, report_url: '' }, event);
  }
}, 60_000);

afterAll(async () => t?.stop());

const get = (path: string) =>
  fetch(`${t.engine.url}${path}`, { headers: { authorization: `Bearer ${t.token}` } });

describe('an alarm whose snapshot the outbox dropped', () => {
  it('is listed without a picture, and its pictures answer 40407', async () => {
    const page = (await t.call('GET', `/api/alarms?task_id=${task}`)).body.data as AlarmPage;
    expect(page.items.map((item) => [item.seq, item.has_image, item.state])).toEqual([
      [2, true, 'no_receiver'],
      [1, false, 'no_receiver'],
    ]);
    const [kept, dropped] = page.items;
    const thumb = await get(`/api/alarms/${kept?.event_id}/thumbnail`);
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    expect([thumb.status, meta.format, meta.width, meta.height]).toEqual([200, 'jpeg', 320, 180]);
    for (const picture of ['thumbnail', 'snapshot']) {
      const answer = await get(`/api/alarms/${dropped?.event_id}/${picture}`);
      expect([answer.status, ((await answer.json()) as { code: number }).code]).toEqual([404, 40407]);
    }
  });

  it('is exported as its JSON alone', async () => {
    const page = (await t.call('GET', `/api/alarms?task_id=${task}`)).body.data as AlarmPage;
    const answer = await get(`/api/alarms/${page.items[1]?.event_id}/export`);
    expect(answer.status).toBe(200);
    const files = await readZip(Buffer.from(await answer.arrayBuffer()));
    expect([...files.keys()]).toEqual(['alarm.json']);
    const json = JSON.parse(String(files.get('alarm.json'))) as {
      alarm: { seq: number; has_image: boolean };
      callback: { data: { rules: Array<{ image: string }> } };
    };
    expect([json.alarm.seq, json.alarm.has_image, json.callback.data.rules[0]?.image]).toEqual([
      1,
      false,
      '',
    ]);
  });

  it('refuses a filter it does not know', async () => {
    const answer = await t.call('GET', '/api/alarms?zone=door');
    expect([answer.status, answer.body.code]).toEqual([400, 40001]);
  });
});
