import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFfmpeg } from '../engine/media/ffmpeg';
import { buildZapk } from '../engine/packages/zapk';
import { childPids, cpuSeconds } from '../engine/system/process-stats';
import { launchChromium, presetSession } from '../test/helpers/browser';
import { callApi } from '../test/helpers/engine-process';
import { VIDEO } from '../test/helpers/fixtures';
import { NginxRtmp } from '../test/helpers/nginx-rtmp';
import { type CpuRow, measure } from './live';
import { type EngineUnderTest, EXAMPLE, engineWith } from './video';

/**
 * What a tile of the console's wall costs (issue 34): a 720p 25 fps camera (the fixture encoded
 * once, then published in a loop by packet copy, so the camera itself costs next to nothing on a
 * busy machine) publishes to a real RTMP server, the engine (its own process) runs a person task on it, and its AI
 * video is asked for at the full size and at the wall's tile widths (4.10 `width`). Measured: the
 * engine's and its ffmpeg children's CPU per video over the analysis alone (the run's own bound: the
 * full-size video, whose ratio each tile row gives), and Chromium's CPU playing the wall with this
 * camera as one 3x3 tile against the same camera focused at full size.
 */

const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 8);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 15);

type WallRow = Omit<CpuRow, 'camera fps'> & { 'x full size': number | string };

interface BrowserRow {
  view: string;
  'video px': string;
  'Chromium CPU %': number;
  'x full size': number | string;
}

const api = <T>(engine: EngineUnderTest, method: string, path: string, body?: unknown) =>
  callApi<T>(engine.url, engine.token, method, path, body);

/** Every process under `pid`, itself excluded. */
function descendants(pid: number): number[] {
  return childPids(pid).flatMap((child) => [child, ...descendants(child)]);
}

const isChromium = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('chromium');
  } catch {
    return false;
  }
};

/** Chromium's CPU (all its processes) while the wall plays at `size` tiles a page, in % of a core. */
async function browserCpu(engine: EngineUnderTest, size: number): Promise<{ cpu: number; width: number }> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    await presetSession(page, engine.token);
    await page.addInitScript(
      (wall) => localStorage.setItem('vc.wall', JSON.stringify({ state: { size: wall }, version: 0 })),
      size,
    );
    await page.goto(`${engine.url}/#/wall`);
    await page.waitForFunction(
      () => ((document.querySelector('.wall-grid video') as HTMLVideoElement | null)?.currentTime ?? 0) > 1,
      undefined,
      { timeout: 60_000 },
    );
    await new Promise((done) => setTimeout(done, WARMUP_S * 1000));
    const pids = descendants(process.pid).filter(isChromium);
    const used = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const before = used();
    const startedAt = performance.now();
    await new Promise((done) => setTimeout(done, WINDOW_S * 1000));
    const cpu = (100 * (used() - before)) / ((performance.now() - startedAt) / 1000);
    const width = await page
      .locator('.wall-grid video')
      .last()
      .evaluate((v) => (v as HTMLVideoElement).videoWidth);
    return { cpu: Math.round(cpu), width };
  } finally {
    await browser.close();
  }
}

const ffmpeg = findFfmpeg();

/** The camera: 30 s of the fixture at 720p 25 fps, H.264 with a keyframe a second, published in a loop. */
function publishCamera(work: string, url: string) {
  const file = join(work, 'camera-720p25.flv');
  execFileSync(ffmpeg, [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-stream_loop', '-1', '-i', VIDEO, '-t', '30'],
    ...['-vf', 'fps=25,scale=1280:720', '-c:v', 'libx264', '-preset', 'veryfast', '-g', '25'],
    ...['-b:v', '4000k', '-pix_fmt', 'yuv420p', '-an', file],
  ]);
  const child = spawn(
    ffmpeg,
    [
      '-hide_banner',
      '-loglevel',
      'error',
      '-re',
      '-stream_loop',
      '-1',
      '-i',
      file,
      '-c',
      'copy',
      '-f',
      'flv',
      url,
    ],
    { stdio: 'ignore' },
  );
  return { sent: 0, stop: () => child.kill('SIGKILL') };
}

/** The CPU row without the camera's own count (a packet copy counts no frames). */
const withoutCamera = ({ 'camera fps': _, ...row }: CpuRow) => row;

export async function benchWall(): Promise<{ engine: WallRow[]; browser: BrowserRow[] }> {
  const work = mkdtempSync(join(tmpdir(), 'vc-bench-wall-'));
  const nginx = await NginxRtmp.start();
  const camera = publishCamera(work, nginx.url('cam'));
  let engine: EngineUnderTest | undefined;
  try {
    await buildZapk(EXAMPLE, join(work, 'example.zapk'));
    const running = await engineWith(work, 'engine', []);
    engine = running;
    const { task_id: taskId } = await api<{ task_id: string }>(running, 'POST', '/api/task', {
      zapk_id: 'coco-yolox-nano',
      app_ids: ['person'],
      video_url: nginx.url('cam'),
    });
    const base = await measure(running, camera, taskId, 'analysis only (source capped at 10 fps)', 0);
    const rows: WallRow[] = [{ ...withoutCamera(base.row), 'x full size': '-' }];
    const videos: [string, Record<string, number>][] = [
      ['full size 1280x720 25 fps, 2000 kbit/s (a focused tile)', { bitrate: 2000 }],
      ['2x2 tile 960x540 10 fps, 1000 kbit/s', { width: 960, bitrate: 1000 }],
      ['3x3 tile 640x360 10 fps, 600 kbit/s', { width: 640, bitrate: 600 }],
      ['4x4 tile 480x270 10 fps, 400 kbit/s', { width: 480, bitrate: 400 }],
    ];
    let full = 0;
    for (const [scenario, scale] of videos) {
      const live = await api<{ stream: string }>(running, 'POST', `/api/task/${taskId}/ailive`, {
        app_ids: ['person'],
        ...scale,
      });
      const { row, total } = await measure(running, camera, taskId, scenario, 1, base.total);
      await api(running, 'DELETE', `/api/task/${taskId}/livestream/${live.stream}`);
      const extra = total - base.total;
      if (!scale.width) full = extra;
      // A full-size video the busy machine starved (no extra CPU measured) gives no ratio.
      const ratio = full > 0 ? round(extra / full) : '-';
      rows.push({ ...withoutCamera(row), 'x full size': scale.width ? ratio : 1 });
    }
    const tile = await browserCpu(running, 9);
    const focused = await browserCpu(running, 1);
    return {
      engine: rows,
      browser: [
        {
          view: 'wall 3x3, this camera one tile',
          'video px': String(tile.width),
          'Chromium CPU %': tile.cpu,
          'x full size': round(tile.cpu / focused.cpu),
        },
        {
          view: 'wall 1x1 (full size)',
          'video px': String(focused.width),
          'Chromium CPU %': focused.cpu,
          'x full size': 1,
        },
      ],
    };
  } finally {
    await engine?.stop();
    camera.stop();
    await nginx.dispose();
    rmSync(work, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

if (import.meta.url === `file://${process.argv[1]}`) {
  const { engine, browser } = await benchWall();
  console.log(
    '== Wall tiles: engine + ffmpeg CPU per AI video over the analysis alone, 720p 25 fps camera; x full size: its share of the full-size video ==',
  );
  console.table(engine);
  console.log('== Wall tiles: Chromium CPU playing the wall (software decoding, headless) ==');
  console.table(browser);
}
