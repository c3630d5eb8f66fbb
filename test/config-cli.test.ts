import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEngine } from '../engine/index';
import { terminate } from './helpers/child';

/**
 * The engine's command line as an operator meets it (engine/cli.ts through tsx, a process of its
 * own): a bad settings.json stops the start with the field named, and the start banner says the
 * port it really bound and the data dir it really uses.
 */

const ROOT = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'vc-config-cli-'));
const children: ChildProcess[] = [];

afterAll(async () => {
  await Promise.all(children.map((child) => terminate(child)));
});

/** The CLI with these flags and no admin password in its environment; stdout and stderr as they come. */
function cli(args: string[]) {
  const env = { ...process.env };
  delete env.VC_ADMIN_PASSWORD;
  const child = spawn(process.execPath, ['--import', 'tsx', 'engine/cli.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

function dataDir(name: string, settings?: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  if (settings !== undefined) writeFileSync(join(dir, 'settings.json'), settings);
  return dir;
}

describe('a bad settings.json', () => {
  it('stops the start with exit status 1, the file and the field named, and the data dir untouched', async () => {
    const cases: Array<[string, string]> = [
      ['{"port": 8080, "hwacel": "none"}', 'settings.json: hwacel is not a setting; it takes host, port'],
      ['{"analysis_fps": "fast"}', 'settings.json: analysis_fps must be 0.1..60, not "fast"'],
      [
        '{"cluster": {"servers": ["nats://a:4222"], "max_cameras": 0}}',
        'cluster.max_cameras must be a whole number',
      ],
    ];
    const runs = cases.map(([settings], i) => {
      const dir = dataDir(`bad-${i}`, settings);
      return { dir, run: cli(['--port', '0', '--data-dir', dir, '--console-dir', '']) };
    });
    for (const [i, { dir, run }] of runs.entries()) {
      expect(await run.exited).toBe(1);
      expect(run.stderr()).toContain(
        `engine: ${join(dir, 'settings.json')}: ${cases[i]?.[1].replace('settings.json: ', '')}`,
      );
      expect(run.stdout()).not.toContain('engine listening');
      // Refused before the engine took the folder: no database, no lock, no logs.
      expect(readdirSync(dir)).toEqual(['settings.json']);
    }
  }, 60_000);
});

describe('the start banner', () => {
  it('prints the URL of the port it bound and the data dir and password file it uses', async () => {
    const dir = dataDir('banner');
    const run = cli(['--port', '0', '--data-dir', dir, '--console-dir', '', '--log-level', 'warn']);
    const deadline = Date.now() + 90_000;
    while (!run.stdout().includes('Sign in as admin') && Date.now() < deadline) {
      if (run.child.exitCode !== null) throw new Error(`the engine exited: ${run.stderr()}`);
      await new Promise((done) => setTimeout(done, 100));
    }
    const banner = run.stdout();
    const url = /Vision Console: (http:\/\/127\.0\.0\.1:(\d+)) /.exec(banner);
    expect(url, banner).not.toBeNull();
    const port = Number(url?.[2]);
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(8080);
    // The port printed is the one the engine answers on.
    const health = await fetch(`${url?.[1]}/api/health`);
    expect(health.status).toBe(200);
    expect(banner).toContain(`engine listening on http://127.0.0.1:${port} (data: ${dir})`);
    expect(banner).toContain(`(API only, no console); data in ${dir}.`);
    const passwordFile = join(dir, 'initial-admin-password');
    expect(banner).toContain(`Sign in as admin with the password in ${passwordFile}`);
    expect(existsSync(passwordFile)).toBe(true);
    expect(banner).not.toContain('.data/');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 120_000);
});

describe('startEngine in-process', () => {
  it('refuses an option out of range before it touches the data dir', async () => {
    const dir = dataDir('in-process');
    await expect(startEngine({ dataDir: dir, port: 0, analysisFps: 500 })).rejects.toThrow(
      'engine option analysisFps must be 0.1..60, not 500',
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});
