import { mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';

const MiB = 1024 * 1024;

export interface LogFileLimits {
  /** A file is rotated once it holds this many bytes (it may pass it by the line that reached it). */
  maxFileBytes: number;
  /** Files kept, the one being written included: engine.log, engine.log.1 .. engine.log.<n-1>. */
  maxFiles: number;
}

/** 5 files of 10 MiB: about 50 MiB of log at most, some days of a busy site. */
export const LOG_FILE_DEFAULTS: LogFileLimits = { maxFileBytes: 10 * MiB, maxFiles: 5 };
export const LOG_DIR = 'logs';
export const LOG_FILE = 'engine.log';
/** Lines waiting while the disk refuses writes (full): more are dropped, not held in memory. */
const MAX_PENDING_BYTES = 1 * MiB;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * The engine's log file, <data-dir>/logs/engine.log, rotated by size: written synchronously
 * through pino's own destination (sonic-boom), so a line is in the file when the call returns and a
 * crash loses nothing, and renamed down the chain engine.log -> engine.log.1 -> ... when full. The
 * folder is the owner's alone (0700), and so is every file (0600): lines name cameras, clients
 * and users. The rotation is the engine's (a rename and a reopen) rather than a transport's: pino's
 * transports run in a worker thread loaded by file name, which the bundled engine would have to
 * ship beside itself, and their lines are lost with the process when it dies.
 */
export class LogFile {
  private readonly file: string;
  private readonly stream: pino.DestinationStream & {
    reopen(): void;
    end(): void;
    on(event: 'error', listener: (error: Error) => void): unknown;
  };
  private size: number;
  /** Writes fail (a full disk): said once, until one succeeds again. */
  private failing = false;
  private failedNow = false;
  private closed = false;

  constructor(
    dataDir: string,
    private readonly limits: LogFileLimits = LOG_FILE_DEFAULTS,
    /** Told once per spell of failing writes (a full disk); the log cannot say it of itself. */
    private readonly onError: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
  ) {
    if (!(limits.maxFiles >= 2 && limits.maxFileBytes >= 1))
      throw new Error('the log keeps at least 2 files of at least 1 byte');
    const dir = join(dataDir, LOG_DIR);
    // Created owner-only whatever the umask; what an older engine left open, the engine's start has
    // closed already (store/private-dir.ts makes the whole data dir private).
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    this.file = join(dir, LOG_FILE);
    this.size = statSync(this.file, { throwIfNoEntry: false })?.size ?? 0;
    this.stream = pino.destination({
      dest: this.file,
      sync: true,
      mode: FILE_MODE,
      maxLength: MAX_PENDING_BYTES,
    }) as unknown as LogFile['stream'];
    // Emitted inside write(): the synchronous destination keeps the line (up to MAX_PENDING_BYTES in
    // all) and writes it with the next one that gets through.
    this.stream.on('error', (error) => {
      this.failedNow = true;
      if (!this.failing) this.onError(`engine log: ${this.file} cannot be written (${error.message})`);
      this.failing = true;
    });
  }

  write(line: string): void {
    // A line of a part still winding down after the engine closed: stdout has it, if anything.
    if (this.closed) return;
    this.failedNow = false;
    this.stream.write(line);
    if (!this.failedNow) this.failing = false;
    this.size += Buffer.byteLength(line);
    if (this.size >= this.limits.maxFileBytes) this.rotate();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stream.end();
  }

  private rotate(): void {
    this.size = 0;
    try {
      // The oldest is overwritten by the rename onto it.
      for (let n = this.limits.maxFiles - 1; n >= 2; n--)
        renameIfThere(`${this.file}.${n - 1}`, `${this.file}.${n}`);
      renameSync(this.file, `${this.file}.1`);
      this.stream.reopen();
    } catch (error) {
      // Written on in place until the next rotation is due.
      this.onError(`engine log: ${this.file} was not rotated (${(error as Error).message})`);
    }
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
