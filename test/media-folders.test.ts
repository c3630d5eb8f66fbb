import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, startTestEngine, type TestEngine, VIDEO } from './helpers/engine';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { freePort } from './helpers/rtmp-source';
import { drawnClip } from './helpers/synthetic-clip';

/**
 * File sources come from the operator's media folders only, judged by their real path (links
 * resolved), and a refusal says the same for a file that is not there and one that is not allowed.
 * A source that does not open says nothing of what ffmpeg said: no path, no internal server's status.
 */

const work = mkdtempSync(join(tmpdir(), 'vc-media-'));
const media = join(work, 'media');
const elsewhere = join(work, 'elsewhere');
const inside = join(media, 'inside.mp4');
const outside = join(elsewhere, 'outside.mp4');
const REFUSED = "no video file at this path in the engine's media folders";

let t: TestEngine;
let server: Server;
let serverUrl: string;

beforeAll(async () => {
  mkdirSync(media);
  mkdirSync(elsewhere);
  drawnClip(inside, 2, 10, 'drawbox=x=10:y=10:w=50:h=50:color=white:t=fill');
  drawnClip(outside, 2, 10, 'drawbox=x=10:y=10:w=50:h=50:color=white:t=fill');
  // A link in the media folder to a file outside it, and one to a file inside it.
  symlinkSync(VIDEO, join(media, 'escape.avi'));
  symlinkSync(inside, join(media, 'link-in.mp4'));
  // A link to a folder outside, and a text file of the operator's.
  symlinkSync(elsewhere, join(media, 'to-elsewhere'));
  writeFileSync(join(media, 'notes.txt'), 'not a video');
  // Previews the five failures of a test open at once, past the engine's default cap of 4.
  t = await startTestEngine(undefined, undefined, { mediaDirs: [media], live: { maxPreviews: 8 } });
  // An internal web server that must stay unknown: each path answers another status with a banner.
  server = createServer((request, response) => {
    const status = Number(request.url?.slice(1)) || 404;
    response.writeHead(status, { server: 'SecretCorp-Intranet/4.2', 'content-type': 'text/html' });
    response.end(`<h1>${status} SecretCorp admin panel</h1>`);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  serverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 60_000);

afterAll(async () => {
  await t?.stop();
  await new Promise<void>((done) => server?.close(() => done()));
  rmSync(work, { recursive: true, force: true });
});

const preview = (video_url: string) => t.call('POST', '/api/stream', { json: { video_url } });
const task = (video_url: string) =>
  t.call('POST', '/api/task', { json: { zapk_id: 'builtin', app_ids: ['motion'], video_url } });
const outcome = (answer: Answer) => ({ status: answer.status, code: answer.body.code, msg: answer.body.msg });

describe('file sources and the media folders', () => {
  it('refuses every file outside them with one answer, whether it is there or not', async () => {
    const refused = [
      outside,
      pathToFileURL(outside).href,
      join(media, '..', 'elsewhere', 'outside.mp4'),
      join(media, 'escape.avi'),
      join(media, 'to-elsewhere', 'outside.mp4'),
      join(media, 'missing.mp4'),
      join(elsewhere, 'missing.mp4'),
      '/etc/passwd',
      '/dev/zero',
      media,
    ];
    const tasksBefore = ((await t.call('GET', '/api/tasks')).body.data as unknown[]).length;
    for (const path of refused) {
      expect(outcome(await preview(path)), path).toEqual({
        status: 503,
        code: 50301,
        msg: `video_url: the source could not be previewed: ${REFUSED}`,
      });
      expect(outcome(await task(path)), path).toEqual({
        status: 503,
        code: 50301,
        msg: `video_url: the source could not be opened: ${REFUSED}`,
      });
    }
    expect(((await t.call('GET', '/api/tasks')).body.data as unknown[]).length).toBe(tasksBefore);
  }, 60_000);

  it('plays a file in them, also through a link that stays inside', async () => {
    for (const path of [inside, join(media, 'link-in.mp4'), pathToFileURL(inside).href]) {
      const shown = await preview(path);
      expect(shown.body.code, `${path}: ${shown.body.msg}`).toBe(0);
      await t.call('DELETE', `/api/stream/${(shown.body.data as { stream_id: string }).stream_id}`);
    }
    const started = await task(join(media, 'link-in.mp4'));
    expect(started.body.code, started.body.msg).toBe(0);
    await t.call('DELETE', `/api/task/${(started.body.data as { task_id: string }).task_id}`);
  }, 60_000);

  it('says of a file in them that is no video only that it is not, never what ffmpeg said of it', async () => {
    const answer = await preview(join(media, 'notes.txt'));
    expect(answer.status).toBe(503);
    expect(answer.body.msg).not.toContain(media);
    expect(answer.body.msg).toMatch(
      /^video_url: the source could not be previewed: (it is not video|no video frame)/,
    );
  }, 30_000);
});

describe('network sources that do not open', () => {
  it('answers the same for a missing page, a refusal, an error page and a closed port: no status, no banner', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/camera`;
    const urls = [`${serverUrl}/404`, `${serverUrl}/401`, `${serverUrl}/403`, `${serverUrl}/500`, closed];
    const answers: string[] = [];
    // A task start retries a network source until its 15 s are up: one is enough to see its answer.
    const answered = [...(await Promise.all(urls.map(preview))), await task(`${serverUrl}/404`)];
    for (const [i, answer] of answered.entries()) {
      const url = urls[i] ?? `task ${serverUrl}/404`;
      expect(answer.status, url).toBe(503);
      const msg = answer.body.msg;
      for (const secret of ['404', '401', '403', '500', 'SecretCorp', 'Not Found', 'Forbidden', 'refused'])
        expect(msg, `${url}: ${msg}`).not.toContain(secret);
      answers.push(msg.replace(/^video_url: the source could not be (opened|previewed): /, ''));
    }
    expect(new Set(answers)).toEqual(new Set(['no video frame came from it (the engine log says why)']));
  }, 120_000);
});

describe('the media folders an engine is given', () => {
  it('by default is <data-dir>/media alone, made at start for the operator', async () => {
    const dataDir = join(work, 'default-data');
    const own = await startTestEngine(dataDir, undefined, { mediaDirs: undefined });
    try {
      const folder = join(dataDir, 'media');
      expect(statSync(folder).isDirectory()).toBe(true);
      drawnClip(join(folder, 'clip.mp4'), 2, 10, 'null');
      const played = await own.call('POST', '/api/stream', { json: { video_url: join(folder, 'clip.mp4') } });
      expect(played.body.code, played.body.msg).toBe(0);
      const refused = await own.call('POST', '/api/stream', { json: { video_url: VIDEO } });
      expect(refused.body.msg).toContain(REFUSED);
    } finally {
      await own.engine.close();
    }
  }, 60_000);

  it('makes <data-dir>/media also when it is named among others, as the desktop names it; GET /api/system lists them', async () => {
    const dataDir = join(work, 'named-data');
    const folder = join(dataDir, 'media');
    const own = await startTestEngine(dataDir, undefined, { mediaDirs: [folder, media] });
    try {
      expect(statSync(folder).isDirectory()).toBe(true);
      const system = await own.call('GET', '/api/system');
      expect((system.body.data as { media_dirs: string[] }).media_dirs).toEqual([folder, media]);
    } finally {
      await own.engine.close();
    }
  }, 60_000);

  it('takes --media-dir, and media_dirs from settings.json when no flag is given', async () => {
    const password = 'media-folders-password';
    let engine: EngineProcess | undefined;
    try {
      engine = await spawnEngine(join(work, 'flag-data'), password, [], [], undefined, [media]);
      const token = await signIn(engine.url, password);
      const played = await callApi<{ stream_id: string }>(engine.url, token, 'POST', '/api/stream', {
        video_url: inside,
      });
      expect(played.stream_id).toBeTruthy();
      await expect(callApi(engine.url, token, 'POST', '/api/stream', { video_url: outside })).rejects.toThrow(
        REFUSED,
      );
      await stopEngine(engine);

      const settingsData = join(work, 'settings-data');
      mkdirSync(settingsData);
      writeFileSync(join(settingsData, 'settings.json'), JSON.stringify({ media_dirs: [elsewhere] }));
      engine = await spawnEngine(settingsData, password, [], [], undefined, null);
      const again = await signIn(engine.url, password);
      const fromSettings = await callApi<{ stream_id: string }>(engine.url, again, 'POST', '/api/stream', {
        video_url: outside,
      });
      expect(fromSettings.stream_id).toBeTruthy();
      await expect(callApi(engine.url, again, 'POST', '/api/stream', { video_url: inside })).rejects.toThrow(
        REFUSED,
      );
    } finally {
      await stopEngine(engine);
    }
  }, 90_000);
});
