import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../engine/clock';
import type { GateHealth, TaskView } from '../engine/contract';
import { MotionDetector } from '../engine/inference/motion';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { startTestEngine } from '../test/helpers/engine';
import { installExamplePackage } from '../test/helpers/example-package';
import { VIDEO } from '../test/helpers/fixtures';
import { WALKER, walkerClip } from '../test/helpers/walker-clip';

/**
 * What the motion gate (issue 36) spares the detector, on two clips, each analysed at 5 fps by two
 * tasks side by side in one engine (yolox_nano in onnxruntime), motion_gate on and off:
 *   busy: the fixture video (vtest.avi, 768x576, people crossing all the time);
 *   still: a person walking across grey once in 60 s (test/helpers/walker-clip.ts).
 * Per task over the window: model inferences per analysed frame, frames skipped / on regions / whole,
 * mean share of the frame detected. And the motion stage's own cost: ms per frame of
 * MotionDetector.detect on the fixture video's frames and on 1280x720 ones.
 * BENCH_WINDOW_S (default 60) sets the window; the machine's load shows in the ms figures only.
 */

const RATE = 5;
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 60);

/** Decoded RGB frames of the fixture video at the given width (its aspect kept). */
function frames(width: number, count: number): { width: number; height: number; data: Uint8Array }[] {
  const height = Math.round((width * 576) / 768 / 2) * 2;
  const raw = execFileSync(
    findFfmpeg(),
    [
      ...['-v', 'error', '-i', VIDEO, '-frames:v', String(count), '-vf', `scale=${width}:${height}`],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    ],
    { maxBuffer: width * height * 3 * count + 1024 },
  );
  const size = width * height * 3;
  return Array.from({ length: count }, (_, i) => ({
    width,
    height,
    data: raw.subarray(i * size, (i + 1) * size),
  }));
}

function motionMs(width: number): number {
  const list = frames(width, 100);
  const motion = new MotionDetector();
  for (const frame of list.slice(0, 20)) motion.detect(frame);
  const start = performance.now();
  for (const frame of list.slice(20)) motion.detect(frame);
  return (performance.now() - start) / (list.length - 20);
}

async function main(): Promise<void> {
  console.log(
    `motion stage: ${motionMs(768).toFixed(2)} ms per 768x576 frame, ${motionMs(1280).toFixed(2)} ms per 1280x720 frame`,
  );
  const still = await walkerClip(
    mkdtempSync(join(tmpdir(), 'vc-bench-gate-')),
    `if(lt(t,30),-400,if(lt(t,38.8),${-WALKER.sprite.width}+100*(t-30),-400))`,
    60,
  );
  const t = await startTestEngine(undefined, undefined, { analysisFps: RATE, clock: systemClock });
  try {
    if ((await installExamplePackage(t)) !== 200) throw new Error('the example package did not install');
    const clips = { busy: VIDEO, still };
    const ids: Array<{ clip: string; gate: boolean; id: string }> = [];
    for (const [clip, url] of Object.entries(clips)) {
      for (const gate of [true, false]) {
        const started = await t.call('POST', '/api/task', {
          json: { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: url, motion_gate: gate },
        });
        if (started.body.code !== 0) throw new Error(JSON.stringify(started.body));
        ids.push({ clip, gate, id: (started.body.data as { task_id: string }).task_id });
      }
    }
    const read = async (id: string) => (await t.call('GET', `/api/task/${id}`)).body.data as TaskView;
    const before = new Map<string, { analysed: number; gate: GateHealth }>();
    for (const { id } of ids) {
      const view = await read(id);
      before.set(id, { analysed: view.health.frames_analysed, gate: view.health.gate });
    }
    // The gate's rates cover the last 5 s: read every 5 s, their means cover the window.
    const samples = new Map<string, Array<{ runs: number; area: number; fps: number }>>(
      ids.map(({ id }) => [id, []]),
    );
    for (let s = 0; s < WINDOW_S; s += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5000));
      for (const { id } of ids) {
        const { gate, analysed_fps } = (await read(id)).health;
        samples
          .get(id)
          ?.push({ runs: gate.detector_runs_per_s, area: gate.area_fraction, fps: analysed_fps });
      }
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
    const rows = [];
    for (const { clip, gate, id } of ids) {
      const view = await read(id);
      const start = before.get(id) as { analysed: number; gate: GateHealth };
      const g = view.health.gate;
      const seen = samples.get(id) ?? [];
      const fps = mean(seen.map((x) => x.fps));
      rows.push({
        clip,
        gate: gate ? 'on' : 'off',
        'analysed fps': +fps.toFixed(2),
        dropped: view.health.frames_dropped,
        skipped: g.frames_skipped - start.gate.frames_skipped,
        regions: g.frames_regions - start.gate.frames_regions,
        full: g.frames_full - start.gate.frames_full,
        'inferences / frame': fps > 0 ? +(mean(seen.map((x) => x.runs)) / fps).toFixed(2) : 0,
        'mean area': +mean(seen.map((x) => x.area)).toFixed(3),
      });
    }
    console.table(rows);
  } finally {
    await t.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
