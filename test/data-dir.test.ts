import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { terminate } from './helpers/child';
import { ADMIN_PASSWORD, startTestEngine } from './helpers/engine';
import { type EngineProcess, signIn, spawnEngine } from './helpers/engine-process';

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

const IN_USE = /the data dir .* is in use by another engine/;

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

  it('refuses a second engine process (exit 1, with why) and is free again after the holder is killed -9', async () => {
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
  });
});
