import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';

const isExecutable = (file: string) => {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * The ffmpeg binary, looked up in the order DEVELOPERS.md fixes: FFMPEG_BIN, ffmpeg-static's bundled
 * binary, then `ffmpeg` on PATH. Throws with the places it looked when there is none.
 */
export function findFfmpeg(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.FFMPEG_BIN;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new Error(`FFMPEG_BIN is set to ${fromEnv}, which is not an executable file`);
  }
  const bundled = bundledFfmpeg();
  if (bundled && isExecutable(bundled)) return bundled;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, process.platform === 'win32' ? 'ffmpeg.exe' : 'ffmpeg');
    if (isExecutable(candidate)) return candidate;
  }
  throw new Error('no ffmpeg found: set FFMPEG_BIN, install ffmpeg-static, or put ffmpeg on PATH');
}

function bundledFfmpeg(): string | null {
  try {
    // ffmpeg-static is CommonJS and exports the binary's path (or null on unsupported platforms).
    const path = createRequire(import.meta.url)('ffmpeg-static') as string | null;
    // In a packaged desktop app the binary sits unpacked beside the asar archive.
    return path ? path.replace(`app.asar${join('/')}`, `app.asar.unpacked${join('/')}`) : null;
  } catch {
    return null;
  }
}
