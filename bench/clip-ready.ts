import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clip } from '../engine/clips/clip-schema';
import type { CallbackBody } from '../engine/events/schema';
import { startTestEngine } from '../test/helpers/engine';
import { Receiver } from '../test/helpers/receiver';
import { slidingBoxClip } from '../test/helpers/synthetic-clip';

type Message = Extract<CallbackBody, { event: 'message' }>;

const POST_S = 3;
/** The scene loops every LOOP_S; the box stands in it for one second of each loop: one visit, one clip. */
const LOOP_S = 12;
const POLL_MS = 50;

/**
 * How long after its end an alarm clip is ready, through a real engine (issue 35): the built-in
 * motion app on a 10 fps H.264 scene (a keyframe a second) where a box stands for 1 s of every
 * LOOP_S; each visit's alarms join one clip, which ends POST_S after the last of them. Measured from
 * that end (the last alarm's time + POST_S) to the first poll that reads the clip ready. The bound
 * is the stream's own: the segment holding the end closes at the next keyframe (up to 1 s later),
 * then the cut (bench:clips measures it apart).
 */
export async function alarmToReady(visits: number): Promise<number[]> {
  const root = mkdtempSync(join(tmpdir(), 'vc-bench-clip-ready-'));
  const source = join(root, 'visits.mp4');
  slidingBoxClip(source, `if(between(t,4,5),300,-100)`, LOOP_S);
  const t = await startTestEngine(join(root, 'data'));
  const receiver = await Receiver.start();
  try {
    const settings = await t.call('PUT', '/api/settings/clips', { json: { pre_s: 2, post_s: POST_S } });
    if (settings.body.code !== 0) throw new Error(`clip settings: ${settings.body.msg}`);
    await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule: { interval: 0 } } });
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: source, report_url: receiver.url },
    });
    if (started.body.code !== 0) throw new Error(`starting the task: ${started.body.msg}`);
    const late: number[] = [];
    const measured = new Set<string>();
    const deadline = Date.now() + (visits + 2) * LOOP_S * 1000 + 30_000;
    while (late.length < visits && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, POLL_MS));
      const alarms = receiver.accepted
        .map((request) => request.body as CallbackBody)
        .filter((body): body is Message => body.event === 'message' && body.data.clip !== undefined);
      for (const clipId of new Set(alarms.map((alarm) => alarm.data.clip?.clip_id as string))) {
        if (measured.has(clipId)) continue;
        const clip = (await t.call('GET', `/api/clips/${clipId}/info`)).body.data as Clip;
        if (clip.state === 'pending') continue;
        measured.add(clipId);
        if (clip.state !== 'ready') throw new Error(`clip ${clipId}: ${clip.state} (${clip.reason})`);
        const last = Math.max(
          ...alarms.filter((alarm) => alarm.data.clip?.clip_id === clipId).map((alarm) => alarm.timestamp),
        );
        late.push(Date.now() - (last + POST_S * 1000));
      }
    }
    return late.sort((a, b) => a - b);
  } finally {
    await t.stop();
    await receiver.close();
    rmSync(root, { recursive: true, force: true });
  }
}
