import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SystemInfo } from '../engine/contract/health';
import { CallbackBody } from '../engine/events/schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { compileCheck } from '../engine/schema/ajv';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { NginxRtmp, publishLooping } from './helpers/nginx-rtmp';
import { Receiver } from './helpers/receiver';
import { encodedFixture } from './helpers/rtmp-source';

/**
 * Cameras whose clocks step back, as real ones do, behind a real RTMP server (nginx): one publisher
 * loops a clip, one is killed and started again twice, so the server hands the engine timestamps that
 * start over. Both are analysed below their rate (ffmpeg's fps filter is in the path). Every alarm
 * must arrive valid, none refused, and neither stream may stall into a reconnect; and the operator
 * hears of the steps the rule clock measured in real time: a count in the task's health and GET /api/system.
 * A third camera's timestamps leap a minute ahead.
 */

const checkBody = compileCheck(CallbackBody, 'callback');
const CLIP_FRAMES = 120; // 12 s of the fixture at 10 fps
/** How far the jumping camera's timestamps leap ahead: well past the rule clock's MAX_MEDIA_LEAD_MS. */
const JUMP_S = 60;

let nginx: NginxRtmp;
let t: TestEngine;
let receiver: Receiver;
const publishers = new Set<ChildProcess>();

function publish(name: string): ChildProcess {
  const child = publishLooping(nginx, name, CLIP_FRAMES);
  publishers.add(child);
  return child;
}

/** A camera whose timestamps jump a minute ahead 4 s after it starts, as a camera's clock set by NTP does. */
function publishJumping(name: string): ChildProcess {
  const child = spawn(
    findFfmpeg(),
    [
      ...['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1'],
      ...['-i', encodedFixture(CLIP_FRAMES), '-vf', `setpts='PTS+gte(T,4)*${JUMP_S}/TB'`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'],
      ...['-f', 'flv', nginx.url(name)],
    ],
    { stdio: 'ignore' },
  );
  publishers.add(child);
  return child;
}

beforeAll(async () => {
  nginx = await NginxRtmp.start();
  t = await startTestEngine();
  receiver = await Receiver.start();
  expect(await installExamplePackage(t)).toBe(200);
  // An alarm for every analysed frame with a person: the most events that could be refused.
  const rule = await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', {
    json: { rule: { interval: 0 } },
  });
  expect(rule.body.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await Promise.all([...publishers].map((child) => terminate(child, 'SIGKILL')));
  await t?.stop();
  await receiver?.close();
  await nginx?.stop();
});

const task = async (taskId: string) => (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
const alarmsOf = (taskId: string) =>
  receiver.requests.filter((r) => r.body?.event === 'message' && r.body.task_id === taskId).length;

it('a looping, a restarted and a jumping publisher: every alarm valid, none refused, no stall', async () => {
  publish('looping');
  let restarted = publish('restarted');
  await sleep(1_000);
  const ids: Record<'looping' | 'restarted' | 'jumping', string> = {
    looping: '',
    restarted: '',
    jumping: '',
  };
  for (const name of ['looping', 'restarted', 'jumping'] as const) {
    if (name === 'jumping') {
      publishJumping(name);
      await sleep(1_000);
    }
    const started = await t.call('POST', '/api/task', {
      json: {
        zapk_id: 'coco-yolox-nano',
        app_ids: ['person'],
        video_url: nginx.url(name),
        report_url: receiver.url,
        analysis_fps: 5,
      },
    });
    expect(started.body, name).toMatchObject({ code: 0 });
    ids[name] = (started.body.data as { task_id: string }).task_id;
  }

  // The looping one goes round its 12 s clip twice meanwhile; the other restarts twice.
  for (let restart = 0; restart < 2; restart++) {
    await sleep(8_000);
    await terminate(restarted, 'SIGKILL');
    restarted = publish('restarted');
    const before = alarmsOf(ids.restarted);
    await eventually('alarms after the restart', async () => alarmsOf(ids.restarted) > before, 20_000);
  }
  await sleep(6_000);

  // The operator hears of every break the rule clock measured in real time: each task's count in its
  // health, all of them in GET /api/system. ffmpeg absorbs these three before the rule clock sees
  // them (the FLV demuxer's discontinuity offset, the fps filter's constant rate), so the counts are
  // 0 here, the unit tests (rule-clock, task-pipeline) feed steps that get through.
  let seen = 0;
  for (const taskId of Object.values(ids)) {
    const { health } = await task(taskId);
    expect(health.last_clock_break_at === null, taskId).toBe(health.clock_breaks === 0);
    seen += health.clock_breaks;
  }
  const system = (await t.call('GET', '/api/system')).body.data as SystemInfo;
  expect(system.tasks.clock_breaks).toBe(seen);

  for (const taskId of Object.values(ids)) {
    const { health } = await task(taskId);
    expect(
      { state: health.stream?.state, reconnects: health.stream?.reconnects, refused: health.events_refused },
      taskId,
    ).toEqual({ state: 'running', reconnects: 0, refused: 0 });
    expect(health.analysis_errors).toBe(0);
  }
  expect(((await t.call('GET', '/api/system')).body.data as SystemInfo).outbox.refused_events).toBe(0);
  await eventually(
    'the outbox delivered',
    async () => ((await t.call('GET', '/api/events/backlog')).body.data as { pending: number }).pending === 0,
  );
  const alarms = receiver.requests.filter((r) => r.body?.event === 'message');
  expect(alarms.length).toBeGreaterThan(50);
  for (const alarm of alarms) {
    const checked = checkBody(alarm.body);
    expect(checked.ok ? 'valid' : checked.error).toBe('valid');
  }
}, 120_000);
