import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskHealth } from '../engine/contract/health';
import { CallbackBody } from '../engine/events/schema';
import type { Rule } from '../engine/rules/schema';
import { compileCheck } from '../engine/schema/ajv';
import { renderDump } from '../engine/tasks/health-view';
import type { TaskView } from '../engine/tasks/schema';
import { pointInPolygon } from '../engine/vision/geometry';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { Receiver } from './helpers/receiver';

/**
 * A fresh engine with nothing but its built-in package runs the weight-free motion apps on the
 * fixture video, played from a local file as a live 10 fps source, through the HTTP API: real
 * ffmpeg, motion detection, tracking, rules, snapshots, the outbox and a callback receiver.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;
type ReportedObject = Message['data']['rules'][number]['objects'][number];

/** The paved path the people of vtest.avi walk on (768x576 source pixels). */
const PATH: [number, number][] = [
  [0, 185],
  [460, 185],
  [600, 150],
  [768, 150],
  [768, 470],
  [600, 410],
  [330, 300],
  [0, 245],
];
const checkBody = compileCheck<CallbackBody>(CallbackBody, 'callback');

let t: TestEngine;
let receiver: Receiver;
let work: string;
/** A copy of the fixture under a name no other test uses, so its ffmpeg can be found by it. */
let video: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vc-builtin-'));
  video = join(work, `vtest-builtin-${randomUUID()}.avi`);
  copyFileSync(VIDEO, video);
  t = await startTestEngine();
  receiver = await Receiver.start();
});

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(work, { recursive: true, force: true });
});

const messages = (taskId: string, appId: string) =>
  receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId && b.app_id === appId);

const objectsOf = (list: Message[]) => list.flatMap((m) => m.data.rules.flatMap((r) => r.objects));

/** Command lines of the processes whose command line holds `text`. */
function processesWith(text: string): string[] {
  const found = spawnSync('pgrep', ['-af', text], { encoding: 'utf8' });
  return found.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
}

async function setRule(appId: string, rule: Rule): Promise<void> {
  const answer = await t.call('PUT', `/api/zapk/builtin/app/${appId}`, { json: { rule } });
  expect(answer.body.code).toBe(0);
}

describe('built-in motion apps on a local video file', () => {
  it('reports motion, loitering on the path, a live dump, and leaves no ffmpeg behind when closed', async () => {
    // Fresh: the built-in package only, no model installed.
    const listing = await t.call('GET', '/api/zapk');
    expect((listing.body.data as Array<{ zapk_id: string }>).map((p) => p.zapk_id)).toEqual(['builtin']);
    // Motion reports every sighting at once (no inertia), so its callbacks show each frame a track
    // was seen in; loitering keeps the default inertia.
    await setRule('motion', { interval: 0, inertia: { hits: 1, frames: 1 } });
    await setRule('intrusion', { interval: 2 });

    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'builtin',
        app_ids: ['motion', 'intrusion'],
        video_url: video,
        business_id: 'plaza',
        report_url: receiver.url,
        app_configs: [{ app_id: 'intrusion', polygon: PATH }],
      },
    });
    expect(started.body).toMatchObject({ code: 0 });
    const taskId = (started.body.data as { task_id: string }).task_id;
    const ffmpeg = processesWith(video);
    expect(ffmpeg.length).toBe(1);
    expect(ffmpeg[0]).toMatch(/ffmpeg/);

    // Motion: every analysed frame with moving people, named per the rule, person-sized boxes.
    await receiver.waitFor('20 motion callbacks', () => messages(taskId, 'motion').length >= 20, 15_000);
    // Loitering: a confirmed track that stayed 2 s on the path.
    await receiver.waitFor('a loitering callback', () => messages(taskId, 'intrusion').length >= 1, 20_000);

    const motion = messages(taskId, 'motion');
    for (const body of motion) {
      const checked = checkBody(body);
      expect(checked.ok ? 'valid' : checked.error).toBe('valid');
      expect(body.business_id).toBe('plaza');
      expect(body.data.frame).toMatchObject({ width: 768, height: 576 });
      expect(body.data.rules.map((r) => [r.id, r.class_id])).toEqual([['motion:0', '0']]);
    }
    const moving = objectsOf(motion);
    expect(moving.length).toBeGreaterThanOrEqual(20);
    const inFrame = (o: ReportedObject) =>
      o.w > 0 &&
      o.h > 0 &&
      o.x - o.w / 2 >= 0 &&
      o.y - o.h / 2 >= 0 &&
      o.x + o.w / 2 <= 768 &&
      o.y + o.h / 2 <= 576;
    expect(moving.filter((o) => !inFrame(o))).toEqual([]);
    expect(moving.filter((o) => o.class_id !== '0' || o.name !== 'motion')).toEqual([]);
    expect(moving.filter((o) => o.h > 30).length).toBeGreaterThanOrEqual(0.7 * moving.length);

    const loitering = messages(taskId, 'intrusion');
    const first = loitering[0] as Message;
    const checked = checkBody(first);
    expect(checked.ok ? 'valid' : checked.error).toBe('valid');
    expect(first.data.rules.map((r) => [r.id, r.class_id])).toEqual([['intrusion:0', '0']]);
    const loiterers = objectsOf([first]);
    expect(loiterers.length).toBeGreaterThanOrEqual(1);
    // The motion app runs on the same detector and tracker over the whole frame, so its callbacks
    // show each analysed frame a track was seen in.
    await receiver.waitFor(
      'the motion callback of the loitering frame',
      () => messages(taskId, 'motion').some((m) => m.data.frame.id >= first.data.frame.id),
      5_000,
    );
    const upToLoitering = messages(taskId, 'motion').filter((m) => m.data.frame.id <= first.data.frame.id);
    for (const object of loiterers) {
      expect(object).toMatchObject({ class_id: '0', name: 'motion' });
      expect(pointInPolygon([object.x, object.y + object.h / 2], PATH)).toBe(true);
      const sightings = upToLoitering.filter((m) =>
        m.data.rules.some((r) => r.objects.some((o) => o.track_id === object.track_id)),
      );
      // Confirmed: seen in at least 3 analysed frames, and for at least the 2 s loitering time on the
      // media's clock, which the frame ids count at the source's 10 fps (the callbacks' timestamps
      // are arrival times, which a busy machine bunches).
      const frames = sightings.map((m) => m.data.frame.id);
      expect(new Set(frames).size).toBeGreaterThanOrEqual(3);
      expect((first.data.frame.id - Math.min(...frames)) * 100).toBeGreaterThanOrEqual(2_000);
    }

    // The health is the live figures of the running task; the dump line is rendered from them.
    const tasks = await t.call('GET', '/api/tasks');
    const view = (tasks.body.data as TaskView[]).find((task) => task.task_id === taskId);
    expect(view?.status).toBe('running');
    expect(view?.health.stream).toMatchObject({ state: 'running', width: 768, height: 576, reconnects: 0 });
    expect(view?.health.analysed_fps).toBeGreaterThan(0);
    expect(view?.health.frames_analysed).toBeGreaterThanOrEqual(20);
    expect(view?.dump).toBe(renderDump(view?.health as TaskHealth));

    // Closing stops the task's ffmpeg.
    const closed = await t.call('DELETE', `/api/task/${taskId}`);
    expect(closed.body).toMatchObject({ code: 0, data: { task_id: taskId, close_code: 1 } });
    await expect.poll(() => processesWith(video), { timeout: 5_000, interval: 100 }).toEqual([]);
    await receiver.waitFor(
      'the task_closed callback',
      () => receiver.accepted.some((r) => r.task_id === taskId && r.body?.event === 'task_closed'),
      10_000,
    );
  });
});
