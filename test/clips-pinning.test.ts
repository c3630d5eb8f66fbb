import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AlarmClips } from '../engine/clips/alarm-clips';
import { ClipFiles } from '../engine/clips/clip-files';
import { CLIP_SETTINGS_DEFAULTS } from '../engine/clips/clip-schema';
import { ClipsRepository } from '../engine/clips/clips-repository';
import { SegmentRing } from '../engine/clips/segment-ring';
import { systemClock } from '../engine/clock';
import type { CallbackBody } from '../engine/events/schema';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { FrameSource } from '../engine/media/frame-source';
import { openDb } from '../engine/store/db';
import { SettingsRepository } from '../engine/store/settings-repository';
import { eventually } from './helpers/eventually';

/**
 * A clip keeps the segments it needs whatever the buffer does meanwhile: here a buffer that keeps
 * only the last 1.5 s (real ffmpeg writing 1 s segments of a 25 fps H.264 source with a keyframe a
 * second), and a clip from 1 s before an alarm to 4 s after it, cut when most of that has left the
 * buffer. Its segments were pinned (hard links) as they closed.
 */

const FFMPEG = findFfmpeg();
const tmp = mkdtempSync(join(tmpdir(), 'vc-clips-pinning-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Message = Extract<CallbackBody, { event: 'message' }>;

describe('a clip longer than its buffer keeps', () => {
  it('is cut whole from the segments it pinned as they closed', async () => {
    const source = join(tmp, 'source.mp4');
    execFileSync(FFMPEG, [
      ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'],
      ...['-t', '12', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-y', source],
    ]);
    const root = join(tmp, 'clips');
    const files = new ClipFiles(root);
    const bufferDir = join(files.bufferRoot, 'task');
    mkdirSync(bufferDir, { recursive: true });
    const ring = new SegmentRing(bufferDir, { keepMs: 1500, maxBytes: 64 * 1024 * 1024, maxOpenMs: 20_000 });
    const frames = new FrameSource(
      { kind: 'file', input: source },
      { ffmpeg: FFMPEG, record: { dir: bufferDir, segmentS: 1 } },
    );
    ring.follow(frames.run);
    frames.on('frame', (frame) => frame.release());
    frames.start();
    const db = openDb(join(tmp, 'data'));
    const settings = new SettingsRepository(db);
    settings.set('clips', { ...CLIP_SETTINGS_DEFAULTS, pre_s: 1, post_s: 4, max_post_s: 4 });
    const clips = new AlarmClips({
      files,
      repository: new ClipsRepository(db),
      settings,
      buffers: {
        state: () => ({ clips: 'recording' as const }),
        segments: (_taskId, from, to) => {
          ring.poll();
          return ring.between(from, to);
        },
      },
      ffmpeg: FFMPEG,
      clock: systemClock,
      runsVideo: () => true,
      // The analysis keeps up with the source.
      watchAnalysis: (_taskId, onFrame) => {
        const timer = setInterval(() => onFrame(Date.now()), 100);
        return () => clearInterval(timer);
      },
      linkToken: () => 'token',
      onError: (error) => {
        throw error;
      },
    });
    try {
      // The buffer has filled and keeps no more than its 1.5 s.
      await eventually(
        'a buffer',
        () => {
          ring.poll();
          return ring.between(0, Number.POSITIVE_INFINITY).length >= 2;
        },
        60_000,
      );
      const alarm: Message = {
        event: 'message',
        task_id: 'task',
        app_id: 'app',
        business_id: '',
        timestamp: Date.now(),
        event_id: 'alarm-1',
        seq: 1,
        data: {
          frame: { width: 320, height: 180, id: 1 },
          rules: [
            {
              id: 'app:0',
              class_id: '0',
              image: '',
              objects: [{ track_id: '7', x: 10, y: 10, w: 5, h: 5, score: 0.9, class_id: '0', name: 'p' }],
            },
          ],
        },
      };
      const ref = db.transaction(() => clips.attach(alarm))();
      clips.stored(alarm);
      expect(ref?.state).toBe('pending');
      const clip = await eventually(
        'the clip cut',
        () => {
          const now = clips.info(ref?.clip_id as string);
          return now.state !== 'pending' && now;
        },
        60_000,
      );
      expect(clip).toMatchObject({ state: 'ready', codec: 'h264', preroll_short: false });
      // 1 s before to 4 s after, on keyframes: about 5 to 6 s, though the buffer never held 2 s.
      const start = clip.start as number;
      const end = clip.end as number;
      expect(end - start).toBeGreaterThanOrEqual(4500);
      expect(end - start).toBeLessThanOrEqual(7500);
      const duration = Number(
        execFileSync(FFMPEG.replace(/ffmpeg$/, 'ffprobe'), [
          ...['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0'],
          files.fileOf('task', clip.clip_id),
        ]).toString(),
      );
      expect(duration).toBeGreaterThanOrEqual(4.4);
    } finally {
      const exited = once(frames, 'exit');
      frames.stop();
      await exited;
      await clips.close();
      ring.dispose();
      db.close();
    }
  }, 120_000);
});
