import type { ChildProcess } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { terminate } from './helpers/child';
import { ADMIN_PASSWORD, FIXTURES, startTestEngine } from './helpers/engine';
import { type EngineProcess, signIn, spawnEngine } from './helpers/engine-process';
import { installExamplePackage } from './helpers/example-package';

const work = mkdtempSync(join(tmpdir(), 'vc-data-dir-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** An engine process; one that should have been refused but started is killed with the others. */
function spawn(dataDir: string): Promise<EngineProcess> {
  const started = spawnEngine(dataDir, ADMIN_PASSWORD);
  started.then(
    (engine) => children.push(engine.child),
    () => {},
  );
  return started;
}

async function kill9(engine: EngineProcess): Promise<void> {
  await terminate(engine.child, 'SIGKILL');
}

/** Every file under a folder with its size, for "nothing changed" checks. */
function tree(dir: string): Record<string, number> {
  const files: Record<string, number> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    files[path.slice(dir.length + 1)] = entry.isDirectory() ? -1 : statSync(path).size;
  }
  return files;
}

const IN_USE = /the data dir .* is in use by another engine/;
/** Tests that start engine processes: each start takes seconds on a busy machine. */
const PROCESS_TEST_MS = 120_000;

describe('one engine per data dir', () => {
  it('refuses a second engine in the same process, and a third once the first has stopped is fine', async () => {
    const dataDir = join(work, 'in-process');
    const first = await startTestEngine(dataDir);
    // What the first engine has in its live folder must survive the second's attempt.
    mkdirSync(join(dataDir, 'live', 'preview-x'), { recursive: true });
    writeFileSync(join(dataDir, 'live', 'preview-x', 'seg0.ts'), 'segment');
    await expect(startTestEngine(dataDir)).rejects.toThrow(IN_USE);
    expect(readFileSync(join(dataDir, 'live', 'preview-x', 'seg0.ts'), 'utf8')).toBe('segment');
    expect((await first.call('GET', '/api/zapk')).body.code).toBe(0);
    await first.engine.close();
    const third = await startTestEngine(dataDir);
    expect((await third.call('GET', '/api/zapk')).body.code).toBe(0);
    await third.stop();
  });

  it(
    'refuses a second engine process (exit 1, with why) and is free again after the holder is killed -9',
    async () => {
      const dataDir = join(work, 'processes');
      const first = await spawn(dataDir);
      const token = await signIn(first.url, ADMIN_PASSWORD);
      await expect(spawn(dataDir)).rejects.toThrow(/engine exited with 1: [\s\S]*in use by another engine/);
      // An engine of this process is kept out by the other process' lock too.
      await expect(startTestEngine(dataDir)).rejects.toThrow(IN_USE);
      const answer = await fetch(`${first.url}/api/zapk`, { headers: { authorization: `Bearer ${token}` } });
      expect(((await answer.json()) as { code: number }).code).toBe(0);

      await kill9(first);
      const next = await spawn(dataDir);
      expect(await signIn(next.url, ADMIN_PASSWORD)).toMatch(/\S/);
      await kill9(next);
    },
    PROCESS_TEST_MS,
  );
});

describe('a data dir that is not a fresh install', () => {
  /** A data dir an engine used: the example package installed, then stopped cleanly. */
  async function usedDataDir(name: string): Promise<string> {
    const dataDir = join(work, name);
    const t = await startTestEngine(dataDir);
    expect(await installExamplePackage(t)).toBe(200);
    await t.engine.close();
    return dataDir;
  }

  let spoilt = 0;
  const refusals: Array<[string, (dataDir: string) => void, RegExp]> = [
    [
      'an empty engine.sqlite',
      (dataDir) => truncateSync(join(dataDir, 'engine.sqlite'), 0),
      /engine\.sqlite \(0 bytes\) is empty or not this engine's database: restore engine\.sqlite from a backup, or move the data dir away/,
    ],
    [
      'an engine.sqlite that is not a database',
      (dataDir) => writeFileSync(join(dataDir, 'engine.sqlite'), 'x'.repeat(8192)),
      /engine\.sqlite cannot be read \(file is not a database\): restore engine\.sqlite/,
    ],
    [
      "another program's database",
      (dataDir) => {
        rmSync(join(dataDir, 'engine.sqlite'));
        const foreign = new Database(join(dataDir, 'engine.sqlite'));
        foreign.exec('CREATE TABLE notes (body TEXT)');
        foreign.close();
      },
      /engine\.sqlite \(\d+ bytes\) is empty or not this engine's database/,
    ],
    [
      'installed packages but no engine.sqlite',
      (dataDir) => rmSync(join(dataDir, 'engine.sqlite')),
      /has packages but no engine\.sqlite: the database was lost or moved; restore engine\.sqlite/,
    ],
  ];

  it.each(refusals)(
    'refuses %s and changes nothing',
    async (_name, spoil, message) => {
      const dataDir = await usedDataDir(`spoilt-${++spoilt}`);
      spoil(dataDir);
      const before = tree(dataDir);
      const bytes = statSync(join(dataDir, 'engine.sqlite'), { throwIfNoEntry: false })
        ? readFileSync(join(dataDir, 'engine.sqlite'))
        : undefined;
      await expect(startTestEngine(dataDir)).rejects.toThrow(message);
      // No new database, admin or sweep: the installed package's files are all still there.
      expect(tree(dataDir)).toEqual(before);
      expect(Object.keys(before).some((path) => path.startsWith('packages/coco-yolox-nano-'))).toBe(true);
      if (bytes) expect(readFileSync(join(dataDir, 'engine.sqlite')).equals(bytes)).toBe(true);

      // The CLI says the same and exits non-zero.
      await expect(spawn(dataDir)).rejects.toThrow(
        new RegExp(`engine exited with 1: [\\s\\S]*${message.source}`),
      );
      expect(tree(dataDir)).toEqual(before);

      // Once the operator moves the data dir's content away, the next start is a fresh install.
      rmSync(dataDir, { recursive: true });
      const fresh = await startTestEngine(dataDir);
      expect((await fresh.call('GET', '/api/zapk')).body.data).toMatchObject([{ zapk_id: 'builtin' }]);
      await fresh.stop();
    },
    PROCESS_TEST_MS,
  );

  it('an empty packages folder, scratch folders, settings.json and a half-built database still make a fresh install', async () => {
    const dataDir = join(work, 'fresh');
    for (const dir of ['packages', 'live', 'tmp']) mkdirSync(join(dataDir, dir), { recursive: true });
    writeFileSync(join(dataDir, 'settings.json'), '{"port": 8080}');
    // What a first start killed while building its database leaves.
    writeFileSync(join(dataDir, 'engine.sqlite.new'), 'half a database');
    const t = await startTestEngine(dataDir);
    expect((await t.call('GET', '/api/zapk')).body.data).toMatchObject([{ zapk_id: 'builtin' }]);
    await t.stop();
  });
});

describe('uploads of a killed engine', () => {
  it(
    'are removed at the next start',
    async () => {
      const dataDir = join(work, 'upload');
      const first = await spawn(dataDir);
      const token = await signIn(first.url, ADMIN_PASSWORD);
      // A package upload that sends its first megabyte and then waits: the engine is killed mid-upload.
      const boundary = 'vc-boundary';
      const url = new URL('/api/zapk', first.url);
      const upload = request(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'content-length': String(64 * 1024 * 1024),
        },
      });
      upload.on('error', () => {});
      upload.write(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.zapk"\r\n` +
          'content-type: application/octet-stream\r\n\r\n',
      );
      upload.write(Buffer.alloc(1024 * 1024, 1));
      const tmp = join(dataDir, 'tmp');
      const uploads = () =>
        statSync(tmp, { throwIfNoEntry: false })
          ? readdirSync(tmp).filter((name) => name.startsWith('upload-'))
          : [];
      await expect.poll(() => uploads().map((name) => statSync(join(tmp, name)).size > 0)).toEqual([true]);

      await kill9(first);
      upload.destroy();
      expect(uploads()).toHaveLength(1);
      const second = await spawn(dataDir);
      expect(uploads()).toEqual([]);
      await kill9(second);
    },
    PROCESS_TEST_MS,
  );
});

describe('a data dir moved elsewhere', () => {
  it('keeps its installed packages: their folders are found under the new path, none is swept', async () => {
    const before = join(work, 'moved-from');
    const first = await startTestEngine(before);
    expect(await installExamplePackage(first)).toBe(200);
    const folders = readdirSync(join(before, 'packages'));
    await first.engine.close();

    const after = join(work, 'moved-to');
    renameSync(before, after);
    const moved = await startTestEngine(after);
    try {
      expect(readdirSync(join(after, 'packages'))).toEqual(folders);
      // The model is loaded from the new place: an image task detects with it.
      const started = await moved.call('POST', '/api/task', {
        json: { mode: 'image', zapk_id: 'coco-yolox-nano', app_ids: ['person'] },
      });
      const taskId = (started.body.data as { task_id: string }).task_id;
      const image = readFileSync(join(FIXTURES, 'media', 'basketball1.png'));
      const answer = await moved.call('POST', `/api/task/${taskId}/image`, {
        raw: { type: 'image/png', body: new Uint8Array(image) },
      });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 200, code: 0 });
    } finally {
      await moved.stop();
    }
  });
});
