import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { TASK_LIMITS } from '../engine/tasks/limits';
import type { TaskView } from '../engine/tasks/schema';
import { terminate } from './helpers/child';
import { ADMIN_PASSWORD, startTestEngine, VIDEO } from './helpers/engine';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';

/**
 * A video task resumed into an engine that keeps dying is closed with close_code 5 after
 * TASK_LIMITS.maxUncleanResumes resumes; clean stops and a healthy run start its count afresh.
 * The engine dies here by kill -9 while the task analyses the fixture video.
 */
const work = mkdtempSync(join(tmpdir(), 'vc-resume-guard-'));
const children: ChildProcess[] = [];
const LIMIT = TASK_LIMITS.maxUncleanResumes;

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

async function spawn(dataDir: string): Promise<EngineProcess & { token: string }> {
  const engine = await spawnEngine(dataDir, ADMIN_PASSWORD);
  children.push(engine.child);
  return { ...engine, token: await signIn(engine.url, ADMIN_PASSWORD) };
}

const task = (engine: EngineProcess & { token: string }, taskId: string) =>
  callApi<TaskView>(engine.url, engine.token, 'GET', `/api/task/${taskId}`);

/** An engine on the data dir whose video task runs again (resumed), ready to be stopped. */
async function resumed(dataDir: string, taskId: string) {
  const engine = await spawn(dataDir);
  await expect.poll(async () => (await task(engine, taskId)).status, { timeout: 20_000 }).toBe('running');
  return engine;
}

/** An engine with a running video task on a fresh data dir. */
async function withVideoTask(dataDir: string) {
  const engine = await spawn(dataDir);
  const { task_id } = await callApi<{ task_id: string }>(engine.url, engine.token, 'POST', '/api/task', {
    zapk_id: 'builtin',
    app_ids: ['motion'],
    video_url: VIDEO,
  });
  return { engine, taskId: task_id };
}

const kill9 = (engine: EngineProcess) => terminate(engine.child, 'SIGKILL');

const uncleanResumes = (dataDir: string, taskId: string) => {
  const db = new Database(join(dataDir, 'engine.sqlite'), { readonly: true });
  try {
    return (
      db.prepare('SELECT unclean_resumes FROM tasks WHERE task_id = ?').get(taskId) as {
        unclean_resumes: number;
      }
    ).unclean_resumes;
  } finally {
    db.close();
  }
};

describe('resuming a task after the engine died', () => {
  it(`stops after ${LIMIT} resumes that each ended in kill -9: the task closes with close_code 5 and a task_closed event`, async () => {
    const dataDir = join(work, 'crash-loop');
    let { engine, taskId } = await withVideoTask(dataDir);
    for (let resume = 1; resume <= LIMIT; resume += 1) {
      await kill9(engine);
      engine = await resumed(dataDir, taskId);
    }
    await kill9(engine);

    engine = await spawn(dataDir);
    const closed = await task(engine, taskId);
    expect(closed).toMatchObject({ status: 'closed', close_code: 5 });
    expect(closed.dump).toBe(
      `closed: engine error (not resumed again: the engine stopped uncleanly within 5 min of each of its last ${LIMIT} resumes)`,
    );
    const events = await callApi<{ items: Array<{ event: string; body: { data: unknown } }> }>(
      engine.url,
      engine.token,
      'GET',
      `/api/task/${taskId}/events?with_body=true`,
    );
    expect(events.items.filter((item) => item.event === 'task_closed').map((item) => item.body.data)).toEqual(
      [{ status: 'closed', close_code: 5, dump: closed.dump }],
    );
    await kill9(engine);
  }, 180_000);

  it('never counts a clean stop, which starts the count afresh', async () => {
    const dataDir = join(work, 'clean');
    let { engine, taskId } = await withVideoTask(dataDir);
    // LIMIT - 1 unclean stops, a clean one, then LIMIT - 1 unclean stops again: more than LIMIT
    // unclean stops in all, but never LIMIT in a row.
    const unclean: Array<(engine: EngineProcess) => Promise<void>> = Array(LIMIT - 1).fill(kill9);
    for (const stop of [...unclean, stopEngine, ...unclean]) {
      await stop(engine);
      engine = await resumed(dataDir, taskId);
    }
    expect(await task(engine, taskId)).toMatchObject({ status: 'running', close_code: 0 });
    await kill9(engine);
  }, 240_000);

  it(`starts the count afresh once a resumed task has run for ${TASK_LIMITS.resumeHealthyMs / 60_000} min`, async () => {
    const dataDir = join(work, 'healthy');
    let { engine, taskId } = await withVideoTask(dataDir);
    for (let resume = 1; resume < LIMIT; resume += 1) {
      await kill9(engine);
      engine = await resumed(dataDir, taskId);
    }
    await kill9(engine);
    // The last resume before the limit, in this process, whose clock the test moves.
    const t = await startTestEngine(dataDir);
    await expect
      .poll(async () => ((await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView).status, {
        timeout: 20_000,
      })
      .toBe('running');
    expect(uncleanResumes(dataDir, taskId)).toBe(LIMIT);
    t.advance(TASK_LIMITS.resumeHealthyMs - 1_000);
    expect(uncleanResumes(dataDir, taskId)).toBe(LIMIT);
    t.advance(1_000);
    expect(uncleanResumes(dataDir, taskId)).toBe(0);
    await t.stop();
  }, 180_000);
});
