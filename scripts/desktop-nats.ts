/**
 * npm run dist runs this first: it puts a NATS server at or above the cluster's floor where
 * electron-builder takes it for the platform it builds on, build/nats/<os>-<arch>/ (electron-builder.yml
 * ships it as resources/nats/, where main/nats-server.ts finds it). On Linux it takes the one
 * scripts/nats-server.sh prints (Debian's, fetched once). For Windows and macOS no such source exists
 * offline: the build stops and says what to put there. Usage: tsx scripts/desktop-nats.ts [--root DIR]
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { natsServerVersion } from '../engine/cluster/nats-binary';
import { belowFloor, NATS_SERVER_FLOOR } from '../engine/cluster/server-floor';
import { natsBuildDir, natsServerFile } from '../main/nats-server';

const REPO = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { root: { type: 'string', default: REPO } } });
const { platform, arch } = process;

/** The binary's version, or null when it does not run here. */
function versionOf(binary: string): string | null {
  try {
    return natsServerVersion(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 }));
  } catch {
    return null;
  }
}

const atFloor = (binary: string) => {
  const version = versionOf(binary);
  return version !== null && !belowFloor(version);
};

const dir = natsBuildDir(platform, arch);
if (!dir) throw new Error(`the desktop app is not built for ${platform}`);
const target = join(values.root, dir, natsServerFile(platform));

if (!existsSync(target) || !atFloor(target)) {
  if (platform !== 'linux')
    throw new Error(
      `the desktop build ships a NATS server ${NATS_SERVER_FLOOR} or later, and ${target} has none. ` +
        `Download nats-server for ${platform}-${arch} from https://github.com/nats-io/nats-server/releases ` +
        '(its SHA256 checked against the SHA256SUMS of the release), and put the binary there.',
    );
  const found = execFileSync('bash', [join(REPO, 'scripts/nats-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  mkdirSync(join(values.root, dir), { recursive: true });
  copyFileSync(found, target);
  chmodSync(target, 0o755);
  if (!atFloor(target)) throw new Error(`${found} is below the floor ${NATS_SERVER_FLOOR}`);
}
console.log(`the desktop build ships ${target} (nats-server ${versionOf(target)})`);
