import { linkSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Folders under <data>/clips that hold no task's clips. */
const BUFFER_DIR = 'buffer';
const WORK_DIR = 'work';

/**
 * Where clips lie: <root>/<task_id>/<clip_id>.mp4 (ids are UUIDs the engine made), and each pending
 * clip's work dir <root>/work/<clip_id>, where the segments it needs are pinned (hard links, so
 * the buffer may drop them meanwhile).
 */
export class ClipFiles {
  constructor(readonly root: string) {}

  get bufferRoot(): string {
    return join(this.root, BUFFER_DIR);
  }

  fileOf(taskId: string, clipId: string): string {
    return join(this.root, taskId, `${clipId}.mp4`);
  }

  workOf(clipId: string): string {
    return join(this.root, WORK_DIR, clipId);
  }

  /** Keeps a closed segment for a clip whatever the buffer does with it; false when it is gone already. */
  pin(clipId: string, segmentFile: string, name: string): string | undefined {
    const pinned = join(this.workOf(clipId), name);
    try {
      linkSync(segmentFile, pinned);
      return pinned;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return pinned;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  makeWork(clipId: string): void {
    mkdirSync(this.workOf(clipId), { recursive: true });
  }

  dropWork(clipId: string): void {
    rmSync(this.workOf(clipId), { recursive: true, force: true });
  }

  makeTaskDir(taskId: string): void {
    mkdirSync(join(this.root, taskId), { recursive: true });
  }

  remove(taskId: string, clipId: string): void {
    rmSync(this.fileOf(taskId, clipId), { force: true });
  }

  /**
   * At start: what a previous run left half done goes (work dirs, .partial files, a clip whose row
   * never became ready), so every listed clip is a whole file.
   */
  sweep(ready: ReadonlySet<string>): void {
    mkdirSync(this.root, { recursive: true });
    rmSync(join(this.root, WORK_DIR), { recursive: true, force: true });
    for (const entry of readdirSync(this.root, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === BUFFER_DIR) continue;
      const dir = join(this.root, entry.name);
      for (const name of readdirSync(dir))
        if (!(name.endsWith('.mp4') && ready.has(name.slice(0, -4))))
          rmSync(join(dir, name), { force: true });
    }
  }
}
