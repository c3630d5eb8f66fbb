import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clip, ClipPage, ClipSettings } from '../engine/clips/clip-schema';
import type { AlarmPage } from '../engine/events/review-schema';
import type { CallbackBody } from '../engine/events/schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { fastStart, probeClip } from './helpers/clip-probe';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { Receiver } from './helpers/receiver';
import { slidingBoxClip } from './helpers/synthetic-clip';

/**
 * Alarm clips on a real engine with real ffmpeg: the built-in motion app watches a grey 640x360
 * H.264 scene (10 fps, a keyframe a second, 16 s, looping) where a white box enters from the left
 * at 6 s and slides right; every frame with the box in view is an alarm of its track. Clips are set
 * to 2 s before and 3 s after, extended up to 6 s after while the track keeps firing.
 */

type Message = Extract<CallbackBody, { event: 'message' }>;

const PRE_S = 2;
const POST_S = 3;
const MAX_POST_S = 6;
/** The source's keyframe interval: a clip's ends fall on keyframes. */
const KEYFRAME_MS = 1000;
/** Where the buffer places a segment on the wall clock: late by up to its poll period and ffmpeg's flush. */
const PLACEMENT_MS = 600;

let t: TestEngine;
let receiver: Receiver;
let dir: string;
let taskId: string;
let first: Message;
let clip: Clip;

const messages = () =>
  receiver.accepted
    .map((r) => r.body as CallbackBody)
    .filter((b): b is Message => b.event === 'message' && b.task_id === taskId);

/** One request exactly as spelled (no client-side normalisation of the path). */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { port } = new URL(t.engine.url);
  return new Promise((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.once('error', fail);
    req.end();
  });
}

const info = async (clipId: string) => (await t.call('GET', `/api/clips/${clipId}/info`)).body.data as Clip;
const fileOf = (c: Clip) => join(t.dataDir, 'clips', c.task_id, `${c.clip_id}.mp4`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vc-clips-alarm-'));
  const source = join(dir, 'slide.mp4');
  slidingBoxClip(source, '60*t-360', 16);
  t = await startTestEngine();
  receiver = await Receiver.start();
  const settings = await t.call('PUT', '/api/settings/clips', {
    json: { pre_s: PRE_S, post_s: POST_S, max_post_s: MAX_POST_S },
  });
  expect(settings.body.data).toMatchObject({
    enabled: true,
    pre_s: PRE_S,
    post_s: POST_S,
    max_post_s: MAX_POST_S,
  });
  expect(
    (await t.call('PUT', '/api/zapk/builtin/app/motion', { json: { rule: { interval: 0 } } })).body.code,
  ).toBe(0);
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: source, report_url: receiver.url },
  });
  expect(started.body.code).toBe(0);
  taskId = (started.body.data as { task_id: string }).task_id;
  first = await eventually('the first alarm', () => messages()[0], 60_000);
  const clipId = first.data.clip?.clip_id as string;
  clip = await eventually(
    'the first clip ready',
    async () => {
      const now = await info(clipId);
      return now.state !== 'pending' && now;
    },
    60_000,
  );
}, 150_000);

afterAll(async () => {
  await t?.stop();
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an alarm clip', () => {
  it('is named in the callback (pending), and the same track’s later alarms join it', () => {
    expect(first.data.clip).toEqual({ clip_id: expect.any(String), state: 'pending' });
    const track = first.data.rules[0]?.objects[0]?.track_id;
    const sameTrackSoon = messages().filter(
      (m) =>
        m.timestamp <= first.timestamp + POST_S * 1000 &&
        m.data.rules.some((rule) => rule.objects.some((o) => o.track_id === track)),
    );
    // Alarms every frame: the ones within post_s of the first carry its clip, none cut their own.
    expect(sameTrackSoon.length).toBeGreaterThan(5);
    expect(new Set(sameTrackSoon.map((m) => m.data.clip?.clip_id))).toEqual(
      new Set([first.data.clip?.clip_id]),
    );
  });

  it("goes ready: a fast-start MP4 of the source's own codec covering [t - pre, t + post], extended", () => {
    expect(clip).toMatchObject({ state: 'ready', reason: null, preroll_short: false, codec: 'h264' });
    expect(clip.event_id).toBe(first.event_id);
    const file = fileOf(clip);
    expect(clip.bytes).toBe(statSync(file).size);
    expect(fastStart(file)).toBe(true);
    const { stream, duration, frames } = probeClip(file);
    expect(stream.codec_name).toBe('h264');
    expect(frames).toBeGreaterThan(0);
    const start = clip.start as number;
    const end = clip.end as number;
    // Its span as ffprobe reads the file.
    expect(Math.abs((end - start) / 1000 - duration)).toBeLessThan(0.7);
    // Starts on the keyframe at or before t - pre.
    expect(start).toBeLessThanOrEqual(first.timestamp - PRE_S * 1000 + PLACEMENT_MS);
    expect(start).toBeGreaterThan(first.timestamp - PRE_S * 1000 - KEYFRAME_MS - PLACEMENT_MS);
    // The track fired on every frame: the clip runs past t + post, up to t + max_post, to a keyframe.
    expect(end).toBeGreaterThanOrEqual(first.timestamp + POST_S * 1000 + KEYFRAME_MS);
    expect(end).toBeGreaterThanOrEqual(first.timestamp + MAX_POST_S * 1000 - PLACEMENT_MS);
    expect(end).toBeLessThan(first.timestamp + MAX_POST_S * 1000 + 2 * KEYFRAME_MS + PLACEMENT_MS);
    // No work left behind: its pinned segments went with its cut.
    expect(existsSync(join(t.dataDir, 'clips', 'work', clip.clip_id))).toBe(false);
  });

  it('is listed, carried by GET /api/alarms with a playable url, and counted in /api/system', async () => {
    const page = (await t.call('GET', `/api/clips?task_id=${taskId}&saved=false`)).body.data as ClipPage;
    expect(page.items.map((c) => c.clip_id)).toContain(clip.clip_id);
    expect(page.total).toBeGreaterThanOrEqual(1);
    const alarms = (await t.call('GET', `/api/alarms?task_id=${taskId}&limit=200`)).body.data as AlarmPage;
    const alarm = alarms.items.find((a) => a.event_id === first.event_id);
    expect(alarm?.clip).toMatchObject({ clip_id: clip.clip_id, state: 'ready' });
    const joined = alarms.items.find(
      (a) => a.event_id !== first.event_id && a.clip?.clip_id === clip.clip_id,
    );
    expect(joined).toBeDefined();
    const url = alarm?.clip?.url as string;
    expect(url).toMatch(new RegExp(`^/api/clips/${clip.clip_id}\\?token=`));
    const played = await raw(url);
    expect(played.status).toBe(200);
    expect(played.headers['content-type']).toBe('video/mp4');
    expect(played.headers['accept-ranges']).toBe('bytes');
    expect(played.body.equals(readFileSync(fileOf(clip)))).toBe(true);
    const system = (await t.call('GET', '/api/system')).body.data as {
      clips: { count: number; bytes: number };
    };
    expect(system.clips.count).toBeGreaterThanOrEqual(1);
    expect(system.clips.bytes).toBeGreaterThanOrEqual(clip.bytes);
  });

  it('answers a Range with 206 and those bytes, and 416 past the end', async () => {
    const bytes = readFileSync(fileOf(clip));
    const auth = { authorization: `Bearer ${t.token}` };
    const part = await raw(`/api/clips/${clip.clip_id}`, { ...auth, range: 'bytes=100-1123' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-1123/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(100, 1124))).toBe(true);
    const tail = await raw(`/api/clips/${clip.clip_id}`, { ...auth, range: 'bytes=-500' });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(bytes.subarray(bytes.length - 500))).toBe(true);
    const past = await raw(`/api/clips/${clip.clip_id}`, { ...auth, range: `bytes=${bytes.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${bytes.length}`);
    expect(JSON.parse(past.body.toString()).code).toBe(41601);
    const download = await raw(`/api/clips/${clip.clip_id}?download=1`, auth);
    expect(download.headers['content-disposition']).toMatch(
      /^attachment; filename="[\w.-]+-\d{4}-\d\d-\d\dT[\d-]+Z\.mp4"$/,
    );
  });

  it('takes a link token for this clip only, under every spelling, and not once it expired', async () => {
    const url = (await info(clip.clip_id)).url as string;
    const token = new URL(url, 'http://x').searchParams.get('token') as string;
    // A second clip: an operator's save of the last 3 s.
    const saved = (await t.call('POST', `/api/task/${taskId}/clip`, { json: { seconds: 3 } })).body
      .data as Clip;
    expect(saved).toMatchObject({ state: 'pending', event_id: null, task_id: taskId });
    const other = await eventually('the saved clip ready', async () => {
      const now = await info(saved.clip_id);
      return now.state === 'ready' && now;
    });
    expect(other.end as number).toBeGreaterThan((other.start as number) + 2000);
    const id = other.clip_id;
    const enc = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const spellings = [
      `/api/clips/${id}`,
      `/api/clips/${id}/`,
      `/api/clips/${enc(id)}`,
      `/api/clips/${id.slice(0, 4)}${enc(id.slice(4, 6))}${id.slice(6)}`,
      `/api/%63lips/${id}`,
      `/api//clips/${id}`,
    ];
    for (const path of spellings) {
      const answer = await raw(`${path}?token=${encodeURIComponent(token)}`);
      // Either the router does not take this spelling (404) or the token is refused: never the file.
      expect([401, 404], path).toContain(answer.status);
      expect(answer.headers['content-type'], path).toMatch(/json/);
    }
    const own = await raw(`/api/clips/${clip.clip_id}?token=${encodeURIComponent(token)}`);
    expect(own.status).toBe(200);
    expect((await raw(`/api/clips/${clip.clip_id}`)).status).toBe(401);
    // Its info and the list are API routes: a link token opens none of them.
    expect((await raw(`/api/clips/${clip.clip_id}/info?token=${encodeURIComponent(token)}`)).status).toBe(
      401,
    );
    // A link token lives 5 to 10 minutes.
    t.advance(11 * 60_000);
    const expired = await raw(`/api/clips/${clip.clip_id}?token=${encodeURIComponent(token)}`);
    expect(expired.status).toBe(401);
    expect(JSON.parse(expired.body.toString()).code).toBe(40102);
  });

  it('refuses bad settings as a whole, changing nothing', async () => {
    const before = (await t.call('GET', '/api/settings/clips')).body.data as ClipSettings;
    for (const json of [
      { post_s: 10, max_post_s: 5 },
      { pre_s: 31 },
      { quota_bytes: 1024 },
      { retention_days: 0 },
      { enabled: 'yes' },
      { post_s: 5, unknown: 1 },
    ]) {
      const answer = await t.call('PUT', '/api/settings/clips', { json });
      expect(answer.status, JSON.stringify(json)).toBe(400);
      expect(answer.body.code).toBe(40001);
    }
    expect((await t.call('GET', '/api/settings/clips')).body.data).toEqual(before);
  });

  it('deletes one clip, file and row; a missing one is 40410, a pending one 40411', async () => {
    const answer = await t.call('POST', `/api/task/${taskId}/clip`, { json: {} });
    expect(answer.body.msg).toBe('success');
    const saved = answer.body.data as Clip;
    const pending = await t.call('GET', `/api/clips/${saved.clip_id}`);
    // Cut once the segment open now closes: pending for a while yet.
    expect(pending.status).toBe(404);
    expect(pending.body).toMatchObject({ code: 40411, reason: 'pending' });
    const ready = await eventually('the saved clip ready', async () => {
      const now = await info(saved.clip_id);
      return now.state === 'ready' && now;
    });
    expect(existsSync(fileOf(ready))).toBe(true);
    expect((await t.call('DELETE', `/api/clips/${ready.clip_id}`)).body.code).toBe(0);
    expect(existsSync(fileOf(ready))).toBe(false);
    expect((await t.call('GET', `/api/clips/${ready.clip_id}/info`)).body.code).toBe(40410);
    expect((await t.call('GET', `/api/clips/${ready.clip_id}`)).body.code).toBe(40410);
  });

  it('keeps the clips of a deleted task by default, and removes them with clips=remove', async () => {
    expect((await t.call('DELETE', `/api/task/${taskId}`)).body.code).toBe(0);
    expect((await info(clip.clip_id)).state).toBe('ready');
    expect((await t.call('DELETE', `/api/task/${taskId}?purge=true&clips=remove`)).body.code).toBe(0);
    expect((await t.call('GET', `/api/clips/${clip.clip_id}/info`)).body.code).toBe(40410);
    expect(existsSync(fileOf(clip))).toBe(false);
    const page = (await t.call('GET', `/api/clips?task_id=${taskId}`)).body.data as ClipPage;
    expect(page.total).toBe(0);
  });

  it('names no clip at once for a stream it does not record (a codec MP4 cannot copy), with the reason', async () => {
    // The same scene as MPEG-4 Part 2 in AVI: analysed as before, never recorded (health says off).
    const mpeg4 = join(dir, 'slide-mpeg4.avi');
    execFileSync(findFfmpeg(), ['-v', 'error', '-y', '-i', join(dir, 'slide.mp4'), '-c:v', 'mpeg4', mpeg4]);
    const started = await t.call('POST', '/api/task', {
      json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: mpeg4, report_url: receiver.url },
    });
    const otherId = (started.body.data as { task_id: string }).task_id;
    const alarm = await eventually(
      'an alarm of the MPEG-4 camera',
      () =>
        receiver.accepted
          .map((r) => r.body as CallbackBody)
          .find((b): b is Message => b.event === 'message' && b.task_id === otherId),
      60_000,
    );
    expect(alarm.data.clip).toEqual({ clip_id: expect.any(String), state: 'none' });
    expect(await info(alarm.data.clip?.clip_id as string)).toMatchObject({
      state: 'none',
      reason: 'not_recording',
    });
    const health = (await t.call('GET', `/api/task/${otherId}`)).body.data as { health?: { clips?: string } };
    expect(health.health?.clips).toBe('off');
    await t.call('DELETE', `/api/task/${otherId}?purge=true`);
  }, 90_000);
});
