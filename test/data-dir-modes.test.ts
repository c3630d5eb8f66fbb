import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildZapk } from '../engine/packages/zapk';
import { callApi, type EngineProcess, signIn, spawnEngine, stopEngine } from './helpers/engine-process';
import { EXAMPLE_MANIFEST } from './helpers/example-package';
import { FIXTURES, VIDEO } from './helpers/fixtures';

/*
 * The data dir holds the admin's password hash, MQTT and callback secrets, snapshots and live video:
 * the engine process keeps it its user's alone (folders 0700, files 0600), both what it creates and
 * what an earlier run or a loose umask left. Windows has no such modes (Node's chmod only sets the
 * read-only flag there), so the engine changes nothing there and this test does not run there.
 */

const PASSWORD = 'data-dir-modes-password';
const work = mkdtempSync(join(tmpdir(), 'vc-modes-'));
const dataDir = join(work, 'data');
let engine: EngineProcess | undefined;

afterAll(async () => {
  await stopEngine(engine);
  rmSync(work, { recursive: true, force: true });
});

/** Every folder and file under dir (links not followed) with its permission bits. */
function modes(dir: string): Map<string, number> {
  const found = new Map<string, number>([['.', lstatSync(dir).mode & 0o777]]);
  const visit = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isSymbolicLink()) continue;
      found.set(relative(dir, full), lstatSync(full).mode & 0o777);
      if (entry.isDirectory()) visit(full);
    }
  };
  visit(dir);
  return found;
}

/** Loosens every folder to 0755 and file to 0644, as an engine before this one left them. */
function loosen(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) loosen(full);
    else if (entry.isFile()) chmodSync(full, 0o644);
  }
}

const octal = (found: Map<string, number>) =>
  Object.fromEntries([...found].map(([path, mode]) => [path, mode.toString(8)]));

describe.skipIf(process.platform === 'win32')('the data dir is its user alone', () => {
  it('makes what an earlier run left 0700/0600, creates everything 0700/0600, and follows no link', async () => {
    // An earlier run that installed a package, then everything world-readable, plus a file of the
    // operator's and a link out.
    const zapk = join(work, 'example.zapk');
    await buildZapk(EXAMPLE_MANIFEST, zapk);
    engine = await spawnEngine(dataDir, PASSWORD, ['--install', zapk]);
    await stopEngine(engine);
    writeFileSync(join(dataDir, 'notes.txt'), 'left by the operator');
    mkdirSync(join(dataDir, 'backups', 'old'), { recursive: true });
    writeFileSync(join(dataDir, 'backups', 'old', 'engine.sqlite.bak'), 'a copy');
    const outside = join(work, 'outside.txt');
    writeFileSync(outside, 'not the engine’s');
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(dataDir, 'link-out'));
    loosen(dataDir);
    const before = modes(dataDir);
    expect([...before.values()].some((mode) => mode === 0o644)).toBe(true);
    expect(before.get('.')).toBe(0o755);

    engine = await spawnEngine(dataDir, PASSWORD);
    // Some activity: a video task with its live preview segments, an image task with an analysed image.
    const token = await signIn(engine.url, PASSWORD);
    await callApi(engine.url, token, 'POST', '/api/task', {
      zapk_id: 'builtin',
      app_ids: ['motion'],
      video_url: VIDEO,
    });
    const preview = await callApi<{ hls_url: string }>(engine.url, token, 'POST', '/api/stream', {
      video_url: VIDEO,
    });
    const playlist = await fetch(preview.hls_url, { headers: { authorization: `Bearer ${token}` } });
    expect(playlist.status).toBe(200);
    const image = await callApi<{ task_id: string }>(engine.url, token, 'POST', '/api/task', {
      mode: 'image',
      zapk_id: 'builtin',
      app_ids: ['motion'],
    });
    const upload = await fetch(`${engine.url}/api/task/${image.task_id}/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/jpeg' },
      body: readFileSync(join(FIXTURES, 'media', 'leuvenB.jpg')),
    });
    expect(upload.status).toBe(200);

    const after = modes(dataDir);
    // What the activity made is there to be checked: the WAL, live segments, the package store.
    const paths = [...after.keys()];
    expect(paths).toContain('engine.sqlite-wal');
    expect(paths.some((path) => /^live\/preview-[^/]+\/seg\d+\.ts$/.test(path))).toBe(true);
    expect(paths.some((path) => /^packages\/.+\.onnx$/.test(path))).toBe(true);
    const loose = [...after].filter(([path, mode]) => {
      const isDirectory = statSync(join(dataDir, path)).isDirectory();
      return mode !== (isDirectory ? 0o700 : 0o600);
    });
    expect(octal(new Map(loose))).toEqual({});
    // The link was not followed: the file outside keeps its mode.
    expect(lstatSync(outside).mode & 0o777).toBe(0o644);
  }, 120_000);
});
