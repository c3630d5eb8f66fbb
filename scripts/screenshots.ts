/**
 * Screenshots of the console for looking at, not for asserting: the built engine (npm run build)
 * with the example package and one camera on the fixture video, each screen given on the command
 * line at 1024x700, 1280x720 and 1920x1080, in English and Chinese, light and dark, into
 * test-output/shots/<screen>-<width>-<language>-<theme>.png.
 *   npx tsx scripts/screenshots.ts system tasks live
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildZapk } from '../engine/packages/zapk';
import { launchChromium, presetSession } from '../test/helpers/browser';
import { terminate } from '../test/helpers/child';
import { BUILT_ENGINE, signIn, spawnEngine } from '../test/helpers/engine-process';
import { EXAMPLE_MANIFEST } from '../test/helpers/example-package';
import { VIDEO } from '../test/helpers/fixtures';

const PASSWORD = 'screenshots-admin-password';
const SIZES = [
  [1024, 700],
  [1280, 720],
  [1920, 1080],
] as const;
const OUT = resolve(import.meta.dirname, '../test-output/shots');

const screens = process.argv.slice(2);
if (screens.length === 0) throw new Error('name the screens to shoot, e.g. tasks system');
mkdirSync(OUT, { recursive: true });
const engine = await spawnEngine(mkdtempSync(join(tmpdir(), 'vc-shots-')), PASSWORD, [], [], BUILT_ENGINE);
try {
  const token = await signIn(engine.url, PASSWORD);
  const call = (method: string, path: string, body?: BodyInit, type?: string) =>
    fetch(`${engine.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(type ? { 'content-type': type } : {}) },
      body,
    });
  const zapk = join(mkdtempSync(join(tmpdir(), 'vc-shots-zapk-')), 'example.zapk');
  await buildZapk(EXAMPLE_MANIFEST, zapk);
  const form = new FormData();
  form.append('file', new Blob([readFileSync(zapk)]), 'example.zapk');
  await call('POST', '/api/zapk', form);
  const task = { zapk_id: 'coco-yolox-nano', app_ids: ['person'], video_url: VIDEO, device_id: 'gate-1' };
  await call('POST', '/api/task', JSON.stringify(task), 'application/json');
  // Let the camera run for a while, so that health, charts and events have figures.
  await new Promise((done) => setTimeout(done, 8000));

  const browser = await launchChromium();
  for (const [width, height] of SIZES)
    for (const language of ['en', 'zh-CN'])
      for (const theme of ['light', 'dark']) {
        const page = await browser.newPage({ viewport: { width, height } });
        await presetSession(page, token, { language, theme });
        for (const screen of screens) {
          await page.goto(`${engine.url}/#/${screen}`);
          await page.waitForTimeout(2500);
          await page.screenshot({ path: join(OUT, `${screen}-${width}-${language}-${theme}.png`) });
        }
        await page.close();
      }
  await browser.close();
  console.log(`screenshots in ${OUT}`);
} finally {
  await terminate(engine.child);
}
