import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { natsServerVersion } from '../engine/cluster/nats-binary';
import { belowFloor } from '../engine/cluster/server-floor';
import { NATS_SERVER_ENV } from '../engine/contract/engine-process';
import type { SystemInfo } from '../engine/contract/health';
import { type AppPlace, bundledNatsServer, natsBuildDir } from '../main/nats-server';
import { startTestEngine } from './helpers/engine';
import { natsServerBinary } from './helpers/nats-cluster';

/**
 * The NATS server the desktop build ships: where the app finds it, how the build gets it, and the
 * engine's report of it. Electron cannot run here: the lookup is given what main reads from Electron
 * (app.isPackaged, process.resourcesPath, app.getAppPath()) by values made here, standing in for it.
 */

const ROOT = resolve(import.meta.dirname, '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vc-desktop-nats-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file at `path` under the scratch folder, executable or not. */
function file(path: string, executable = true): string {
  const full = join(dir, path);
  mkdirSync(join(full, '..'), { recursive: true });
  writeFileSync(full, '#!/bin/sh\n');
  chmodSync(full, executable ? 0o755 : 0o644);
  return full;
}

describe('the desktop app finds the NATS server it ships (Electron stood in for)', () => {
  const place = (extra: Partial<AppPlace>): AppPlace => ({
    isPackaged: true,
    resourcesPath: join(dir, 'installed/resources'),
    appPath: join(dir, 'checkout'),
    platform: 'linux',
    arch: 'x64',
    ...extra,
  });

  it('installed: resources/nats/nats-server (nats-server.exe on Windows)', () => {
    const linux = file('installed/resources/nats/nats-server');
    const windows = file('installed/resources/nats/nats-server.exe');
    expect(bundledNatsServer(place({}))).toBe(linux);
    expect(bundledNatsServer(place({ platform: 'win32' }))).toBe(windows);
  });

  it('in development: the folder the build takes it from, for this platform and architecture', () => {
    const built = file('checkout/build/nats/linux-arm64/nats-server');
    expect(bundledNatsServer(place({ isPackaged: false, arch: 'arm64' }))).toBe(built);
    expect(bundledNatsServer(place({ isPackaged: false, platform: 'darwin', arch: 'arm64' }))).toBeNull();
  });

  it('none, or one that cannot run: null, and the app starts as a single workstation', () => {
    expect(bundledNatsServer(place({ resourcesPath: join(dir, 'elsewhere') }))).toBeNull();
    file('plain/resources/nats/nats-server', false);
    expect(bundledNatsServer(place({ resourcesPath: join(dir, 'plain/resources') }))).toBeNull();
    expect(bundledNatsServer(place({ isPackaged: false, platform: 'freebsd' }))).toBeNull();
  });
});

describe('the build puts one at or above the floor where electron-builder takes it', () => {
  it('on Linux, the one scripts/nats-server.sh gives, copied to build/nats/linux-<arch>', () => {
    const root = join(dir, 'build-root');
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/desktop-nats.ts', '--root', root],
      {
        cwd: ROOT,
        encoding: 'utf8',
        // The binary the suite already has (no download): what scripts/nats-server.sh prints first.
        env: { ...process.env, [NATS_SERVER_ENV]: natsServerBinary() },
      },
    );
    const shipped = join(root, natsBuildDir('linux', process.arch) as string, 'nats-server');
    expect(out).toContain(shipped);
    const version = natsServerVersion(execFileSync(shipped, ['--version'], { encoding: 'utf8' }));
    expect(version).not.toBeNull();
    expect(belowFloor(version as string)).toBe(false);
  }, 60_000);
});

describe("the engine's report of it", () => {
  it('GET /api/system names the version of the NATS server it was given, null when none', async () => {
    const before = process.env[NATS_SERVER_ENV];
    const binary = natsServerBinary();
    const expected = natsServerVersion(execFileSync(binary, ['--version'], { encoding: 'utf8' }));
    try {
      for (const [given, version] of [
        [binary, expected],
        [undefined, null],
        [join(dir, 'missing/nats-server'), null],
      ] as const) {
        if (given === undefined) delete process.env[NATS_SERVER_ENV];
        else process.env[NATS_SERVER_ENV] = given;
        const t = await startTestEngine();
        try {
          const system = (await t.call('GET', '/api/system')).body.data as SystemInfo;
          expect(system.versions.nats_server, String(given)).toBe(version);
        } finally {
          await t.stop();
        }
      }
    } finally {
      if (before === undefined) delete process.env[NATS_SERVER_ENV];
      else process.env[NATS_SERVER_ENV] = before;
    }
  }, 60_000);
});
