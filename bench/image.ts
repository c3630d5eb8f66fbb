import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { buildZapk } from '../engine/packages/zapk';
import { FIXTURES, startTestEngine, type TestEngine } from '../test/helpers/engine';

/**
 * Image and diff uploads, upload to response over loopback HTTP: 1080p JPEGs of the fixtures through
 * decoding, the analysis, the rules, the snapshot of each fired rule and the outbox commit. The engine
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
  },
  {
    name: 'diff pair, built-in change, 2 clients',
    mode: 'diff',
    zapk: 'builtin',
    app: 'change',
    query: '',
    clients: 2,
    uploads: 30,
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

/** 1080p JPEGs: the basketball scene (two persons) and a street pair where one object appeared. */
async function images() {
  const hd = (file: string) => sharp(join(FIXTURES, 'media', file)).resize(1920, 1080, { fit: 'fill' });
  const person = await hd('basketball1.png').jpeg({ quality: 90 }).toBuffer();
  const before = await hd('leuvenB.jpg').jpeg({ quality: 90 }).toBuffer();
  const object = await hd('basketball1.png')
    .extract({ left: 200, top: 250, width: 300, height: 260 })
    .toBuffer();
  const after = await sharp(before)
    .linear(1.1, 8)
    .composite([{ input: object, left: 1100, top: 600 }])
    .jpeg({ quality: 90 })
    .toBuffer();
  return { person, before, after };
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
    if (scenario.mode === 'diff') {
      form.append('image_a', new Blob([new Uint8Array(data.before)]), 'a.jpg');
      form.append('image_b', new Blob([new Uint8Array(data.after)]), 'b.jpg');
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
  const bytes = scenario.mode === 'diff' ? data.before.length + data.after.length : data.person.length;
  return {
    scenario: scenario.name,
    uploads: latencies.length,
    'per s': Math.round((latencies.length / seconds) * 10) / 10,
    'p50 ms': at(0.5),
    'p95 ms': at(0.95),
    'MB per upload': Math.round(bytes / 1e4) / 100,
  };
}

export async function benchImage(): Promise<Row[]> {
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
    for (const scenario of SCENARIOS) rows.push(await run(t, scenario, data));
    return rows;
  } finally {
    await t.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchImage();
  console.log('\nImage and diff uploads: 1080p JPEG, upload to response over loopback HTTP');
  console.table(rows);
}
