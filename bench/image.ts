import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { buildZapk } from '../engine/packages/zapk';
import { FIXTURES, startTestEngine, type TestEngine } from '../test/helpers/engine';

/**
 * Image and diff uploads, upload to response over loopback HTTP: 1080p JPEGs of the fixtures (diff
 * pairs also at 4000x3000) through decoding, the analysis, the rules, the snapshot of each fired rule
 * and the outbox commit. The engine
 * runs in this process on a manual clock moved 1 s before each upload, so the 1 s rule of part 3
 * never throttles what is measured; each client has its own task.
 */

const EXAMPLE = resolve(import.meta.dirname, '../examples/coco-yolox-nano/manifest.json');

interface Scenario {
  name: string;
  mode: 'image' | 'diff';
  zapk: string;
  app: string;
  query: string;
  clients: number;
  uploads: number;
  /** Diff pairs: which of the pairs of images(). */
  pair?: '1080p' | '12mp';
}

const SCENARIOS: Scenario[] = [
  {
    name: 'image, YOLOX person, 1 client',
    mode: 'image',
    zapk: 'coco-yolox-nano',
    app: 'person',
    query: '',
    clients: 1,
    uploads: 40,
  },
  {
    name: 'image, YOLOX person, 2 clients',
    mode: 'image',
    zapk: 'coco-yolox-nano',
    app: 'person',
    query: '',
    clients: 2,
    uploads: 40,
  },
  {
    name: 'image, YOLOX person, enhance=1',
    mode: 'image',
    zapk: 'coco-yolox-nano',
    app: 'person',
    query: '?enhance=1',
    clients: 1,
    uploads: 20,
  },
  {
    name: 'diff pair, built-in change, 1 client',
    mode: 'diff',
    zapk: 'builtin',
    app: 'change',
    query: '',
    clients: 1,
    uploads: 30,
    pair: '1080p',
  },
  {
    name: 'diff pair, built-in change, 2 clients',
    mode: 'diff',
    zapk: 'builtin',
    app: 'change',
    query: '',
    clients: 2,
    uploads: 30,
    pair: '1080p',
  },
  {
    name: 'diff pair 4000x3000, built-in change, 1 client',
    mode: 'diff',
    zapk: 'builtin',
    app: 'change',
    query: '',
    clients: 1,
    uploads: 10,
    pair: '12mp',
  },
];

interface Row {
  scenario: string;
  uploads: number;
  'per s': number;
  'p50 ms': number;
  'p95 ms': number;
  'MB per upload': number;
}

/**
 * 1080p JPEGs: the basketball scene (two persons); street pairs at 1920x1080 and 4000x3000 where one
 * object appeared and the camera turned by 2 degrees.
 */
async function images() {
  const hd = (file: string) => sharp(join(FIXTURES, 'media', file)).resize(1920, 1080, { fit: 'fill' });
  const person = await hd('basketball1.png').jpeg({ quality: 90 }).toBuffer();
  const pairs = {
    '1080p': await streetPair(1920, 1080),
    '12mp': await streetPair(4000, 3000),
  };
  return { person, pairs };
}

async function streetPair(width: number, height: number) {
  const scene = () => sharp(join(FIXTURES, 'media', 'leuvenB.jpg')).resize(width, height, { fit: 'fill' });
  const before = await scene().jpeg({ quality: 90 }).toBuffer();
  const object = await sharp(join(FIXTURES, 'media', 'basketball1.png'))
    .resize(Math.round(width / 6), Math.round(height / 4), { fit: 'fill' })
    .toColourspace('srgb')
    .png()
    .toBuffer();
  // Turned by 2 degrees about the centre and zoomed in by 10 % (so that no corner leaves the scene).
  const turned = await scene().rotate(2).png().toBuffer();
  const { width: tw = width, height: th = height } = await sharp(turned).metadata();
  const [cw, ch] = [Math.round(width * 0.9), Math.round(height * 0.9)];
  const framed = await sharp(turned)
    .extract({ left: Math.floor((tw - cw) / 2), top: Math.floor((th - ch) / 2), width: cw, height: ch })
    .resize(width, height)
    .png()
    .toBuffer();
  const after = await sharp(framed)
    .linear(1.1, 8)
    .composite([{ input: object, left: Math.round(width * 0.55), top: Math.round(height * 0.5) }])
    .jpeg({ quality: 90 })
    .toBuffer();
  return { before, after };
}

async function run(
  t: TestEngine,
  scenario: Scenario,
  data: Awaited<ReturnType<typeof images>>,
): Promise<Row> {
  const tasks: string[] = [];
  for (let i = 0; i < scenario.clients; i++) {
    const answer = await t.call('POST', '/api/task', {
      json: { mode: scenario.mode, zapk_id: scenario.zapk, app_ids: [scenario.app] },
    });
    tasks.push((answer.body.data as { task_id: string }).task_id);
  }
  const body = () => {
    const form = new FormData();
    if (scenario.pair) {
      const { before, after } = data.pairs[scenario.pair];
      form.append('image_a', new Blob([new Uint8Array(before)]), 'a.jpg');
      form.append('image_b', new Blob([new Uint8Array(after)]), 'b.jpg');
    }
    return scenario.mode === 'diff'
      ? { raw: { type: '', body: form } }
      : { raw: { type: 'image/jpeg', body: new Uint8Array(data.person) } };
  };
  const path = (taskId: string) =>
    `/api/task/${taskId}/${scenario.mode === 'diff' ? 'diff_image' : 'image'}${scenario.query}`;
  // One warm-up per task: sessions load and code paths compile before timing starts.
  t.advance(1000);
  await Promise.all(tasks.map((taskId) => t.call('POST', path(taskId), body())));

  const latencies: number[] = [];
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    tasks.map(async (taskId) => {
      while (sent < scenario.uploads) {
        sent++;
        t.clock.advance(1000);
        const at = performance.now();
        const answer = await t.call('POST', path(taskId), body());
        if (answer.body.code !== 0) throw new Error(`${scenario.name}: ${answer.body.msg}`);
        if ((answer.body.data as { rules: unknown[] }).rules.length === 0)
          throw new Error(`${scenario.name}: nothing found`);
        latencies.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  const pair = scenario.pair && data.pairs[scenario.pair];
  const bytes = pair ? pair.before.length + pair.after.length : data.person.length;
  return {
    scenario: scenario.name,
    uploads: latencies.length,
    'per s': Math.round((latencies.length / seconds) * 10) / 10,
    'p50 ms': at(0.5),
    'p95 ms': at(0.95),
    'MB per upload': Math.round(bytes / 1e4) / 100,
  };
}

/** `only`: run the scenarios whose name contains it (`npm run bench:image -- diff`). */
export async function benchImage(only = ''): Promise<Row[]> {
  const work = mkdtempSync(join(tmpdir(), 'vc-bench-image-'));
  const t = await startTestEngine(join(work, 'data'));
  try {
    await buildZapk(EXAMPLE, join(work, 'example.zapk'));
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(work, 'example.zapk'))]), 'example.zapk');
    const installed = await t.call('POST', '/api/zapk', { raw: { type: '', body: form } });
    if (installed.body.code !== 0) throw new Error(`installing the example package: ${installed.body.msg}`);
    // Every upload fires: no interval between two callbacks of the person rule.
    await t.call('PUT', '/api/zapk/coco-yolox-nano/app/person', { json: { rule: { interval: 0 } } });
    const data = await images();
    const rows: Row[] = [];
    for (const scenario of SCENARIOS.filter((s) => s.name.includes(only)))
      rows.push(await run(t, scenario, data));
    return rows;
  } finally {
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchImage(process.argv[2]);
  console.log('\nImage and diff uploads: JPEG, upload to response over loopback HTTP');
  console.table(rows);
}
