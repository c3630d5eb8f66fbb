import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuSeconds } from '../engine/system/process-stats';
import { signIn, spawnEngine } from '../test/helpers/engine-process';
import { heaviestImageTask } from '../test/helpers/heavy-task';

/**
 * Throughput and tail latency of the API on loopback: the task listing with 100 tasks, and the
 * token check on its own (an unknown token, refused after the hash lookup) beside an open endpoint;
 * then the listing of 60 closed tasks as heavy as the bounds allow (issue 31), without and with their
 * areas, with the engine's CPU per listing: what a listing costs its event loop.
 */
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const CONNECTIONS = 32;
const TASKS = 100;
const HEAVY_TASKS = 60;

interface Row {
  scenario: string;
  'req/s': number;
  'p50 ms': number;
  'p99 ms': number;
  status: string;
  /** The engine process's CPU per answer (user + system). */
  'engine CPU ms/req'?: number;
}

async function measure(
  scenario: string,
  url: string,
  headers: Record<string, string>,
  expected: number,
  /** The engine's process, to count its CPU per answer: a figure that load on the machine bends less than req/s. */
  pid?: number,
): Promise<Row> {
  const before = pid === undefined ? 0 : cpuSeconds(pid);
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  const cpuMs = pid === undefined ? undefined : ((cpuSeconds(pid) - before) * 1000) / result.requests.total;
  const counts = new Map<string, number>();
  for (const group of ['1xx', '2xx', '3xx', '4xx', '5xx']) {
    const n = (result as unknown as Record<string, number>)[group] ?? 0;
    if (n > 0) counts.set(group, n);
  }
  const statusCounts = [...counts].map(([group, n]) => `${group}:${n}`).join(' ');
  // A benchmark of wrong answers measures nothing: every answer must be of the expected class.
  if (result.errors > 0 || counts.size !== 1 || !counts.has(`${Math.floor(expected / 100)}xx`)) {
    throw new Error(`${scenario}: unexpected answers ${statusCounts}, ${result.errors} errors`);
  }
  return {
    scenario,
    'req/s': Math.round(result.requests.average),
    'p50 ms': result.latency.p50,
    'p99 ms': result.latency.p99,
    status: statusCounts,
    ...(cpuMs !== undefined && { 'engine CPU ms/req': Number(cpuMs.toFixed(2)) }),
  };
}

const PASSWORD = 'bench-admin-password';

export async function benchApi(): Promise<Row[]> {
  // The engine runs in its own process, as deployed, so the load generator does not share its event loop.
  const dataDir = mkdtempSync(join(tmpdir(), 'vc-bench-'));
  const engine = await spawnEngine(dataDir, PASSWORD);
  try {
    const auth = { authorization: `Bearer ${await signIn(engine.url, PASSWORD)}` };
    let firstTask = '';
    for (let i = 0; i < TASKS; i++) {
      const answer = await fetch(`${engine.url}/api/task`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          mode: 'image',
          zapk_id: 'builtin',
          app_ids: ['motion'],
          device_id: `cam-${i}`,
        }),
      });
      const body = (await answer.json()) as { code: number; data: { task_id: string } };
      if (body.code !== 0) throw new Error(`could not create task ${i}: ${JSON.stringify(body)}`);
      firstTask ||= body.data.task_id;
    }
    const listed = (await (await fetch(`${engine.url}/api/tasks`, { headers: auth })).json()) as {
      data: unknown[];
    };
    if (listed.data.length !== TASKS)
      throw new Error(`expected ${TASKS} tasks, listed ${listed.data.length}`);

    return [
      await measure(
        `GET /api/tasks (${TASKS} tasks)`,
        `${engine.url}/api/tasks`,
        auth,
        200,
        engine.child.pid,
      ),
      await measure(
        'GET /api/task/{id} (token check + 1 row)',
        `${engine.url}/api/task/${firstTask}`,
        auth,
        200,
        engine.child.pid,
      ),
      await measure(
        'token check alone (unknown token -> 401)',
        `${engine.url}/api/task/${firstTask}`,
        { authorization: `Bearer ${'x'.repeat(43)}` },
        401,
        engine.child.pid,
      ),
      await measure(
        'GET /api/health (open, no token check)',
        `${engine.url}/api/health`,
        {},
        200,
        engine.child.pid,
      ),
      ...(await heavyListings(engine.url, auth, engine.child.pid)),
    ];
  } finally {
    engine.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The listing of 60 closed tasks each started with the heaviest body the bounds allow. */
async function heavyListings(url: string, auth: Record<string, string>, pid?: number): Promise<Row[]> {
  const body = JSON.stringify(heaviestImageTask());
  for (let i = 0; i < HEAVY_TASKS; i++) {
    const answer = await fetch(`${url}/api/task`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    });
    const started = (await answer.json()) as { code: number; data: { task_id: string } };
    if (started.code !== 0) throw new Error(`could not create heavy task ${i}: ${JSON.stringify(started)}`);
    await fetch(`${url}/api/task/${started.data.task_id}`, { method: 'DELETE', headers: auth });
  }
  const closed = `${url}/api/tasks?state=closed`;
  const size = (await (await fetch(`${closed}&with_areas=true`, { headers: auth })).arrayBuffer()).byteLength;
  const kb = `${Math.round(size / HEAVY_TASKS / 1000)} KB each`;
  return [
    await measure(`GET /api/tasks?state=closed (${HEAVY_TASKS} tasks of ${kb})`, closed, auth, 200, pid),
    await measure(
      `... &with_areas=true (${(size / 1e6).toFixed(1)} MB)`,
      `${closed}&with_areas=true`,
      auth,
      200,
      pid,
    ),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await benchApi();
  console.log(
    `\nAPI on loopback: ${CONNECTIONS} connections, ${DURATION_S} s per scenario, engine in its own process`,
  );
  console.table(rows);
}
