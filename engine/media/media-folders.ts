import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { SOURCE_REFUSED_REASON } from '../contract/media-folders';
import { SourceNotVideoError } from './source-limits';
import type { SourceUrl } from './source-url';

/**
 * A file source the engine may not read, or that is not there: one answer for both, so that the API
 * tells nothing about the files of the engine's machine outside its media folders.
 */
export class SourceRefusedError extends Error {
  constructor() {
    super(SOURCE_REFUSED_REASON);
  }
}

/**
 * The folders the operator allows file sources from (--media-dir). A file source is read only when
 * its real path (every link resolved) is a regular file inside the real path of one of them, and
 * ffmpeg is given that real path, so a link swapped later cannot send a reconnect elsewhere.
 * Network sources pass unchanged.
 */
export class MediaFolders {
  constructor(readonly dirs: readonly string[]) {}

  async resolve(source: SourceUrl): Promise<SourceUrl> {
    if (source.kind !== 'file') return source;
    let real: string;
    try {
      real = await realpath(source.input);
      if (!(await stat(real)).isFile()) throw new SourceRefusedError();
    } catch {
      throw new SourceRefusedError();
    }
    for (const dir of this.dirs) {
      const root = await realpath(dir).catch(() => null);
      if (root === null) continue;
      const inside = relative(root, real);
      if (inside !== '' && inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside))
        return { ...source, input: real };
    }
    throw new SourceRefusedError();
  }
}

/**
 * What the API may say of a source that did not open: the refusal of a file in its own words, and
 * nothing of what ffmpeg said (a path, whether a file exists, an internal server's status or
 * banner), which goes to the engine log instead. Network sources are told apart by time alone: a
 * refused connection answers at once, a silent host after the open timeout.
 */
export function sourceFailure(error: unknown): string {
  if (error instanceof SourceRefusedError) return error.message;
  if (error instanceof SourceNotVideoError) return 'it is not video (a format the engine refuses)';
  return 'no video frame came from it (the engine log says why)';
}
