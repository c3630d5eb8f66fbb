import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { eventually } from './helpers/eventually';
import { installExamplePackage } from './helpers/example-package';
import { WALKER, walkerClip } from './helpers/walker-clip';

/**
 * How far the AI video's boxes are from their objects (issue 34, point 4), with real parts: a clip
 * made here with ffmpeg, a person (cut from the fixture video) walking at 100 px/s back and forth on
 * grey, a green bar under the person moving with it; the engine (analysis capped at 3 fps, the video
 * at the clip's 25 fps) runs the example package's person app on it with onnxruntime. Every frame of
 * the annotated video is decoded: the box's centre is found from its red sides, the person's from the
 * green bar, both on the same frame, so no clock has to be matched.
 */

/** The person's path: left edge x = START + SPEED * t, back at the end, over and over (a seamless loop). */
const START = 20;
const SPEED = 100;
const LEG_S = 6.1;
/**
 * Frames less than this long after the person turned are not judged: the tracker (ByteTrack's
 * constant-velocity gate at 3 analyses a second) loses a person who turns at this speed and
 * confirms a new track analyses later, whatever the overlay does; the test says how far off the
 * boxes are there.
 */
const TURN_S = 2.5;
const run = promisify(execFile);
const FFMPEG = findFfmpeg();
const { width: WIDTH, height: HEIGHT, fps: FPS, top: TOP, sprite: SPRITE } = WALKER;
const BAR_TOP = TOP + SPRITE.height + 8;
/**
 * The most a box's centre may be off its person's, in the 95th percentile of the frames of a steady
 * walk: boxes held at their analysed place were 41-57 px off there (p50 24-29), boxes moved on to
 * the frame's media time 5-6 px (p50 2). (At the turns, which the tracker loses, boxes were up to
 * 99-115 px off held and 127-139 px moved on.)
 */
const MAX_OFFSET_P95 = 18;
/** Windows of six segments (about 6 s of video) judged at most. */
const WINDOWS = 3;

/** #ff3b30, the person class colour of the example package. */
const isBoxRed = (r: number, g: number, b: number) => r > 150 && r - Math.max(g, b) > 90;
const isBarGreen = (r: number, g: number, b: number) => g > 150 && g - Math.max(r, b) > 90;

let t: TestEngine;
let taskId: string;

/** The clip: a person cut from the fixture video, twice its size, walking on grey with its bar. */
async function makeClip(): Promise<string> {
  const period = 2 * LEG_S;
  const phase = `mod(t,${period})`;
  const x = `${START}+${SPEED}*if(lt(${phase},${LEG_S}),${phase},${period}-${phase})`;
  return walkerClip(mkdtempSync(join(tmpdir(), 'vc-offset-')), x, period, BAR_TOP);
}

beforeAll(async () => {
  const clip = await makeClip();
  t = await startTestEngine(undefined, undefined, { analysisFps: 3 });
  expect(await installExamplePackage(t)).toBe(200);
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: clip, osd: { border_size: 4 } },
  });
  expect(started.body.code, JSON.stringify(started.body)).toBe(0);
  taskId = (started.body.data as { task_id: string }).task_id;
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

const withToken = (url: string) => `${url}?token=${encodeURIComponent(t.token)}`;

/** The playlist's segments and the number of the first (segments made before it are gone). */
async function playlist(hlsUrl: string): Promise<{ first: number; segments: string[] }> {
  const answer = await fetch(withToken(hlsUrl));
  const lines = (await answer.text()).trim().split('\n');
  const first = Number(/^#EXT-X-MEDIA-SEQUENCE:(\d+)$/m.exec(lines.join('\n'))?.[1] ?? 0);
  const segments = lines
    .filter((line) => line.startsWith('seg'))
    .map((uri) => new URL(uri, hlsUrl).toString());
  return { first, segments };
}

/** Every frame of a segment, decoded to RGB. */
async function decode(url: string): Promise<Uint8Array[]> {
  const file = join(t.dataDir, `offset-${Date.now()}-${Math.random()}.ts`);
  writeFileSync(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
  const { stdout } = await run(
    FFMPEG,
    ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 128 * 1024 * 1024,
    },
  );
  const size = WIDTH * HEIGHT * 3;
  return Array.from({ length: stdout.length / size }, (_, i) => stdout.subarray(i * size, (i + 1) * size));
}

/**
 * The box's and the person's horizontal centres on one frame, or null when either is missing. The
 * box's sides are the columns with many red pixels (its tag is short, its sides tall); the bar is
 * under the person, out of the box.
 */
function centres(frame: Uint8Array): { box: number; person: number } | null {
  const redRows = new Uint16Array(WIDTH);
  let greenSum = 0;
  let greens = 0;
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const at = (y * WIDTH + x) * 3;
      const r = frame[at] as number;
      const g = frame[at + 1] as number;
      const b = frame[at + 2] as number;
      if (isBoxRed(r, g, b)) redRows[x] = (redRows[x] as number) + 1;
      else if (y >= BAR_TOP && isBarGreen(r, g, b)) {
        greenSum += x;
        greens += 1;
      }
    }
  }
  const sides = [...redRows.keys()].filter((x) => (redRows[x] as number) >= SPRITE.height / 3);
  if (sides.length === 0 || greens < SPRITE.width * 5) return null;
  return { box: (Math.min(...sides) + Math.max(...sides)) / 2, person: greenSum / greens };
}

/**
 * The frames (indexes) at least TURN_S after the person last turned, known from its place on the
 * path and its direction (from its bar on the frames before, else after).
 */
function steadyFrames(persons: Array<number | null>): Set<number> {
  const steady = new Set<number>();
  const moved = (i: number, j: number) => {
    const [a, b] = [persons[i], persons[j]];
    return a != null && b != null && Math.abs(b - a) >= 1 ? Math.sign(b - a) : 0;
  };
  persons.forEach((person, i) => {
    if (person === null) return;
    let direction = 0;
    for (let j = i - 1; j >= 0 && direction === 0; j--) direction = moved(j, i);
    for (let j = i + 1; j < persons.length && direction === 0; j++) direction = moved(i, j);
    const left = person - SPRITE.width / 2;
    const end = START + SPEED * LEG_S;
    const sinceTurn = direction > 0 ? (left - START) / SPEED : (end - left) / SPEED;
    if (direction !== 0 && sinceTurn >= TURN_S) steady.add(i);
  });
  return steady;
}

const percentile = (sorted: number[], share: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))] as number;

describe('AI video boxes on a walking person (issue 34, point 4)', () => {
  it(`are within ${MAX_OFFSET_P95} px of the person on 95 % of the frames of a steady walk`, async () => {
    const answer = await t.call('POST', `/api/task/${taskId}/ailive`, {
      json: { app_ids: ['person'], bitrate: 2000 },
    });
    expect(answer.body.code, JSON.stringify(answer.body)).toBe(0);
    const hlsUrl = (answer.body.data as { hls_url: string }).hls_url;
    // A loaded machine stalls the source and the analysis now and then (the engine says it is
    // overloaded), which throws any box off: up to WINDOWS windows of six fresh segments are judged,
    // and the best must keep within the bound. Boxes held at their analysed place met it in none.
    const judged: string[] = [];
    let first = 3;
    for (let window = 0; window < WINDOWS; window++) {
      const { segments, first: listedFirst } = await eventually(
        'six fresh segments of the AI video',
        async () => {
          const listed = await playlist(hlsUrl);
          return listed.first >= first && listed.segments.length === 6 && listed;
        },
        60_000,
      );
      first = listedFirst + 6;
      const frames = (await Promise.all(segments.map(decode))).flat();
      expect(frames.length).toBeGreaterThanOrEqual(5 * FPS);
      const found = frames.map(centres);
      // The person is boxed on most frames (a box is missing while it leaves the edge, or a turn).
      const boxed = found.filter((pair) => pair !== null).length;
      expect(boxed, `boxed on ${boxed} of ${frames.length}`).toBeGreaterThanOrEqual(frames.length * 0.8);
      const steady = steadyFrames(found.map((pair) => pair?.person ?? null));
      const offsets = (judge: (i: number) => boolean) =>
        found
          .flatMap((pair, i) => (pair && judge(i) ? [Math.abs(pair.box - pair.person)] : []))
          .sort((a, b) => a - b);
      const walking = offsets((i) => steady.has(i));
      const all = offsets(() => true);
      expect(walking.length).toBeGreaterThanOrEqual(2 * FPS);
      const p95 = percentile(walking, 0.95);
      judged.push(
        `walking: p50 ${percentile(walking, 0.5)}, p95 ${p95}, max ${walking.at(-1)} px over ${walking.length} frames; ` +
          `all frames, turns too: p95 ${percentile(all, 0.95)}, max ${all.at(-1)} px over ${all.length}`,
      );
      if (process.env.VC_PRINT_OFFSETS) console.info(`box offsets: ${judged.at(-1)}`);
      if (p95 <= MAX_OFFSET_P95) return;
    }
    expect.fail(`no window within ${MAX_OFFSET_P95} px (p95 of a steady walk): ${judged.join(' | ')}`);
  }, 240_000);
});
