import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFfmpeg } from '../engine/media/ffmpeg';
import type { TaskView } from '../engine/tasks/schema';
import { startFromSource } from './helpers/browser';
import { type ConsoleEngine, startConsoleEngine } from './helpers/console-engine';
import { VIDEO } from './helpers/fixtures';

/*
 * The start wizard's sub-stream (issue 36), in Chromium against a real engine (its own process,
 * serving the built console of `npm run build`): the operator gives the main stream and the
 * camera's sub-stream, previews both and sees their sizes, and the task starts with analysis_url;
 * its live view names the sub-stream.
 */

const POLL = { timeout: 30_000 };
const run = promisify(execFile);

let c: ConsoleEngine;
const files = { main: '', sub: '' };

/** The fixture video at a size, H.264 (tmpdir is one of the tests' media folders). */
async function scaled(dir: string, size: string, name: string): Promise<string> {
  const out = join(dir, name);
  await run(findFfmpeg(), [
    ...['-v', 'error', '-y', '-t', '20', '-i', VIDEO, '-vf', `scale=${size}`],
    ...['-c:v', 'libx264', '-preset', 'veryfast', '-g', '10', '-pix_fmt', 'yuv420p', '-an', out],
  ]);
  return out;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-console-substream-'));
  [files.main, files.sub] = await Promise.all([
    scaled(dir, '1280:720', 'main.mp4'),
    scaled(dir, '640:360', 'sub.mp4'),
  ]);
  c = await startConsoleEngine('console-substream');
}, 120_000);

afterAll(async () => c?.stop());

describe('the start wizard with a sub-stream', () => {
  it('previews both streams with their sizes and sends analysis_url', async () => {
    const page = await c.open('/tasks', { height: 1000 });
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('textbox', { name: 'Source URL' }).fill(files.main);
    await wizard.getByRole('textbox', { name: 'Sub-stream URL (optional)' }).fill(files.sub);
    // Each stream's button has its own name: the main one is still the only "Preview" button.
    await wizard.getByRole('button', { name: 'Preview', exact: true }).click();
    await wizard.getByText('Source frame 1280 × 720').waitFor(POLL);
    await wizard.getByRole('button', { name: 'Show sub-stream', exact: true }).click();
    await wizard.getByText('Sub-stream frame 640 × 360').waitFor(POLL);
    // Both previews stay shown, each with its own video.
    await wizard.getByText('Source frame 1280 × 720').waitFor();
    expect(await wizard.locator('.preview video').count()).toBe(2);

    await startFromSource(wizard, 'builtin', /Motion detection/);
    await page.getByRole('heading', { name: 'Live view' }).waitFor(POLL);

    const tasks = await c.api<TaskView[]>('GET', '/api/tasks');
    expect(tasks).toHaveLength(1);
    const task = tasks[0] as TaskView;
    expect(task).toMatchObject({ video_url: files.main, analysis_url: files.sub });
    expect(task.health.sub_stream).toMatchObject({ width: 640, height: 360 });
    await page.getByText(`analysed on its sub-stream ${files.sub}`).waitFor(POLL);

    // The task's health details say both streams: the sub-stream's size, which one analysis reads
    // (the main stream, its AI video being watched in the live view still open), and the main stream
    // that clips are cut from.
    const list = await c.open('/tasks');
    await list.getByRole('link', { name: `Edit task ${task.name}` }).click();
    const details = list.getByRole('dialog', { name: `Edit task ${task.name}` }).getByRole('region', {
      name: 'Health',
    });
    await details.getByText(/^640×360 at [\d.]+ fps$/).waitFor(POLL);
    const rows = await details.locator('dl > div').allInnerTexts();
    expect(rows).toEqual(
      expect.arrayContaining([
        'Analysis reads\nThe main stream, while its AI video is watched',
        'Main stream (clips)\nReceiving · ended on its own 0 times',
      ]),
    );
    await Promise.all([page.close(), list.close()]);
  }, 180_000);

  it('shows a refused sub-stream at its own field', async () => {
    const page = await c.open('/tasks', { height: 1000 });
    await page.getByRole('button', { name: 'New task…' }).click();
    const wizard = page.getByRole('dialog', { name: 'Start a task' });
    await wizard.getByRole('textbox', { name: 'Source URL' }).fill(files.main);
    const sub = wizard.getByRole('textbox', { name: 'Sub-stream URL (optional)' });
    await sub.fill('/etc/hostname');
    await startFromSource(wizard, 'builtin', /Motion detection/);
    // Back on the source step, the refusal at the sub-stream's field.
    await expect.poll(() => sub.getAttribute('aria-invalid'), POLL).toBe('true');
    expect(await wizard.getByRole('textbox', { name: 'Source URL' }).getAttribute('aria-invalid')).not.toBe(
      'true',
    );
    expect(await c.api<TaskView[]>('GET', '/api/tasks')).toHaveLength(1);
    await page.close();
  }, 120_000);
});
