import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
// electron-builder's own loader and schema check of the configuration (its library's internals:
// electron-builder itself cannot run here, since it downloads Electron and its packaging tools).
import { getConfig, validateConfiguration } from 'app-builder-lib/out/util/config/config';
import { expandMacro } from 'app-builder-lib/out/util/macroExpander';
import { DebugLogger } from 'builder-util';
import { minimatch } from 'minimatch';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { NATS_RESOURCE_DIR, natsBuildDir } from '../main/nats-server';

/**
 * The desktop build's configuration (electron-builder.yml with package.json), checked as far as this
 * machine can without Electron's binaries: valid for electron-builder, complete for AppImage, deb
 * and NSIS, and every native file of the engine's dependencies unpacked from the asar archive.
 */

const ROOT = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** Every file under a folder, relative to the repository root. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(join(ROOT, path)).isFile());
}

describe('the desktop build configuration', () => {
  it('is valid for electron-builder', async () => {
    const config = await getConfig(ROOT, null, null);
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    expect(config.appId).toBe('com.visionconsole.desktop');
    expect(config.linux?.target).toEqual(['AppImage', 'deb']);
    expect(config.win?.target).toEqual(['nsis']);
  });

  it('has what the deb, AppImage and NSIS targets need: homepage, author with email, an icon', async () => {
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.author).toEqual({
      name: expect.any(String),
      email: expect.stringMatching(/^[^@\s]+@[^@\s]+\.\w+$/),
    });
    expect(pkg.description.length).toBeGreaterThan(10);
    const config = await getConfig(ROOT, null, null);
    const icon = await sharp(join(ROOT, config.icon as string)).metadata();
    expect({ format: icon.format, width: icon.width, height: icon.height }).toEqual({
      format: 'png',
      width: 512,
      height: 512,
    });
  });

  it('unpacks every native file of the engine dependencies from the archive', async () => {
    const config = await getConfig(ROOT, null, null);
    const patterns = config.asarUnpack as string[];
    const native = /\.(node|dll|dylib)$|\.so(\.\d+)*$/;
    const files = ['node_modules/better-sqlite3', 'node_modules/onnxruntime-node', 'node_modules/@img']
      .flatMap(filesUnder)
      .filter((path) => native.test(path));
    // ffmpeg-static downloads its binary for the building platform; this machine uses Debian's.
    files.push('node_modules/ffmpeg-static/ffmpeg', 'node_modules/ffmpeg-static/ffmpeg.exe');
    expect(files.length).toBeGreaterThan(10);
    const packed = files.filter(
      (path) => !patterns.some((pattern) => minimatch(path, pattern, { dot: true })),
    );
    expect(packed).toEqual([]);
    // The engine's built-in package ships beside the archive, where the desktop app looks for it.
    expect((config.extraResources as unknown[])[0]).toEqual({ from: 'assets/builtin', to: 'assets/builtin' });
    expect(statSync(join(ROOT, 'assets/builtin/manifest.json')).isFile()).toBe(true);
  });

  it('ships a NATS server from where npm run dist puts it to where the app looks for it', async () => {
    const config = await getConfig(ROOT, null, null);
    const resources = config.extraResources as Array<{ from: string; to: string }>;
    expect(resources).toHaveLength(2);
    const nats = resources[1] as { from: string; to: string };
    expect(nats.to).toBe(NATS_RESOURCE_DIR);
    // Expanded as electron-builder expands it for each platform and architecture it builds.
    for (const [platform, os] of [
      ['linux', 'linux'],
      ['win32', 'win'],
      ['darwin', 'mac'],
    ] as const)
      for (const arch of ['x64', 'arm64'])
        expect(expandMacro(nats.from, arch, { productName: 'x' } as never, { os })).toBe(
          natsBuildDir(platform, arch)?.split(sep).join('/'),
        );
    // The build fills that folder first (scripts/desktop-nats.ts), and stops where it cannot.
    expect(pkg.scripts.dist).toMatch(/^tsx scripts\/desktop-nats\.ts && .*electron-builder$/);
  });
});
