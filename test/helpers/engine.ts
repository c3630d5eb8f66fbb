import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../engine/clock';
import { type Engine, type EngineOptions, startEngine } from '../../engine/index';
import type { TaskView } from '../../engine/tasks/schema';

import { ADMIN_PASSWORD, TEST_MEDIA_DIRS, VIDEO } from './fixtures';

export { ADMIN_PASSWORD, FIXTURES, SHARED, VIDEO } from './fixtures';

export interface Answer {
  status: number;
  headers: Headers;
  body: { code: number; msg: string; data?: unknown } & Record<string, unknown>;
}

export interface TestEngine {
  engine: Engine;
  clock: ManualClock;
  dataDir: string;
  token: string;
  call(method: string, path: string, options?: CallOptions): Promise<Answer>;
  /** Moves the engine's clock, then signs in again since a day's jump expires the token. */
  advance(ms: number): void;
  stop(): Promise<void>;
}

export interface CallOptions {
  /** Bearer token; the admin's by default, null for none. */
  token?: string | null;
  json?: unknown;
  /** A raw body with its content type (malformed JSON, images, forms). */
  raw?: { type: string; body: BodyInit };
  headers?: Record<string, string>;
}

/** Starts a video task on the built-in motion app over the fixture video, with `body`'s fields over those. */
export function startMotionTask(t: TestEngine, body: Record<string, unknown>): Promise<Answer> {
  return t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO, ...body },
  });
}

/** GET /api/task/{id}'s task. */
export async function taskView(t: TestEngine, taskId: string): Promise<TaskView> {
  return (await t.call('GET', `/api/task/${taskId}`)).body.data as TaskView;
}

/** A stand-in for the built console (index.html and one script) for tests of the engine's web serving. */
export function consoleFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vc-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Vision Console</title>');
  writeFileSync(join(dir, 'assets', 'app.js'), 'console.log(1)');
  return dir;
}

/** A real engine on a loopback port in a fresh data dir, with a clock the test moves by hand. */
export async function startTestEngine(
  dataDir = mkdtempSync(join(tmpdir(), 'vc-engine-')),
  consoleDir?: string,
  /** More engine options (e.g. delivery tuning). */
  options: Partial<EngineOptions> = {},
): Promise<TestEngine> {
  const clock = new ManualClock(Date.now());
  const engine = await startEngine({
    dataDir,
    consoleDir,
    port: 0,
    adminPassword: ADMIN_PASSWORD,
    clock,
    logLevel: 'silent',
    mediaDirs: TEST_MEDIA_DIRS,
    // Software decoding, chosen here rather than the production default (auto): what auto resolves
    // to depends on the machine's GPU and on when its background probe ends, and tests judge the
    // decode path in health figures. Engine processes (spawnEngine) run the default.
    hwaccel: 'none',
    ...options,
  });
  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? test.token : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    } else if (options.raw) {
      if (options.raw.type) headers['content-type'] = options.raw.type;
      body = options.raw.body;
    }
    const response = await fetch(`${engine.url}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: Answer['body'];
    try {
      parsed = JSON.parse(text) as Answer['body'];
    } catch {
      throw new Error(
        `${method} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
      );
    }
    return { status: response.status, headers: response.headers, body: parsed };
  };
  const test: TestEngine = {
    engine,
    clock,
    dataDir,
    token: engine.issueToken().access_token,
    call,
    advance(ms) {
      clock.advance(ms);
      test.token = engine.issueToken().access_token;
    },
    async stop() {
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return test;
}

/** The link (path with a link token, POST /api/auth/link) an <img> or a download uses for an engine path. */
export async function linkFor(t: TestEngine, path: string): Promise<string> {
  const answer = await t.call('POST', '/api/auth/link', { json: { paths: [path] } });
  const links = (answer.body.data as { links?: { url: string }[] } | undefined)?.links;
  if (!links?.[0]) throw new Error(`no link for ${path}: ${answer.body.code} ${answer.body.msg}`);
  return links[0].url;
}
