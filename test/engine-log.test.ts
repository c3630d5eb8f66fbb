import { EventEmitter } from 'node:events';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { EventBus } from '../engine/events/bus';
import { createEngineLogger, MAX_LINE_CHARS } from '../engine/log/logger';
import { logOperations } from '../engine/log/operations-log';
import { displayUrl, scrubSecrets } from '../engine/log/scrub';
import { LogThrottle } from '../engine/log/throttle';
import { makePrivate } from '../engine/store/private-dir';
import type { TaskRegistry } from '../engine/tasks/registry';

/**
 * The engine's log as written to disk: pino's JSON lines through the engine's own rotation (real
 * files, real renames), bounded in size and count, owner-only, with secrets redacted by field and
 * scrubbed from free text; and the throttle that keeps a repeating line from flooding it.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vc-log-'));
  dirs.push(dir);
  return dir;
}

const logDir = (data: string) => join(data, 'logs');
const files = (data: string) => readdirSync(logDir(data)).sort();
const linesOf = (data: string, name: string) =>
  readFileSync(join(logDir(data), name), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { n: number; msg: string });

describe('the log file', () => {
  it('rotates by size and keeps its files and bytes within the bound, the newest lines unbroken', async () => {
    const data = dataDir();
    const limits = { maxFileBytes: 4096, maxFiles: 3, stdout: false };
    const { logger, close } = createEngineLogger(data, 'info', limits);
    for (let n = 0; n < 3000; n++) {
      logger.info({ n }, `line ${n} ${'x'.repeat(n % 50)}`);
      // A moment for the file each rotation closed, as the engine's event loop gives it.
      if (n % 20 === 0) await new Promise((done) => setImmediate(done));
    }
    close();

    expect(files(data)).toEqual(['engine.log', 'engine.log.1', 'engine.log.2']);
    const longest = 250;
    for (const name of files(data))
      expect(statSync(join(logDir(data), name)).size).toBeLessThan(4096 + longest);
    // Oldest to newest: engine.log.2, engine.log.1, engine.log, with no line lost between them.
    const kept = ['engine.log.2', 'engine.log.1', 'engine.log'].flatMap((name) => linesOf(data, name));
    const numbers = kept.map((line) => line.n);
    expect(numbers.at(-1)).toBe(2999);
    expect(numbers).toEqual(numbers.map((_, i) => (numbers[0] as number) + i));
    expect(numbers.length).toBeGreaterThan(50);
  });

  it('counts what an earlier run left, so a restart keeps the bound; the folder and files are owner-only', () => {
    const data = dataDir();
    const limits = { maxFileBytes: 2048, maxFiles: 2, stdout: false };
    for (let run = 0; run < 3; run++) {
      const { logger, close } = createEngineLogger(data, 'info', limits);
      for (let n = 0; n < 30; n++) logger.info({ n, run }, 'a line of some fifty characters');
      close();
      for (const name of files(data))
        expect(statSync(join(logDir(data), name)).size).toBeLessThan(2048 + 200);
    }
    expect(files(data)).toEqual(['engine.log', 'engine.log.1']);
    expect(statSync(logDir(data)).mode & 0o777).toBe(0o700);
    for (const name of files(data)) expect(statSync(join(logDir(data), name)).mode & 0o777).toBe(0o600);
  });

  it('a start closes a log folder and files that an older engine or a loose umask left open', () => {
    const data = dataDir();
    mkdirSync(logDir(data), { mode: 0o755 });
    chmodSync(logDir(data), 0o755);
    writeFileSync(join(logDir(data), 'engine.log'), '', { mode: 0o644 });
    writeFileSync(join(logDir(data), 'engine.log.1'), '', { mode: 0o644 });
    // As startEngine does: the data dir made private, then the log opened.
    makePrivate(data);
    createEngineLogger(data, 'info', { stdout: false }).close();
    expect(statSync(logDir(data)).mode & 0o777).toBe(0o700);
    for (const name of ['engine.log', 'engine.log.1'])
      expect(statSync(join(logDir(data), name)).mode & 0o777).toBe(0o600);
  });

  it('never writes a secret: redacted by field name, scrubbed from free text', () => {
    const data = dataDir();
    const { logger, close } = createEngineLogger(data, 'info', { stdout: false });
    logger.info(
      {
        password: 'field-password-1',
        settings: { password: 'nested-password-2', url: 'mqtt://broker:1883' },
        token: 'field-token-3',
        report_secret: 'field-secret-4',
        req: {
          method: 'GET',
          url: '/api/events/stream?token=query-token-5',
          headers: { authorization: 'Bearer header-6' },
        },
      },
      'ffmpeg: rtsp://cam-user:camera-password-7@10.0.0.9/live: 401 Unauthorized; Authorization: Bearer free-text-8',
    );
    logger.warn(
      { err: new Error('GET http://u:error-password-9@host/x?access_token=error-token-10 failed') },
      'x',
    );
    close();
    const text = readFileSync(join(logDir(data), 'engine.log'), 'utf8');
    const secrets = text.match(/(password|token|secret|header|text)-\d+/g);
    expect(secrets).toBeNull();
    expect(text).toContain('rtsp://[redacted]@10.0.0.9/live');
    expect(text).toContain('"url":"/api/events/stream?token=[redacted]"');
    // What is not a secret stays.
    expect(text).toContain('mqtt://broker:1883');
  });

  it('takes a line after it was closed without failing the caller, and leaves it out', () => {
    const data = dataDir();
    const { logger, close } = createEngineLogger(data, 'info', { stdout: false });
    logger.info('before the close');
    close();
    expect(() => logger.warn('a part still winding down')).not.toThrow();
    expect(linesOf(data, 'engine.log').map((line) => line.msg)).toEqual(['before the close']);
  });

  it('cuts a huge line to a note with its start, still one JSON line', () => {
    const data = dataDir();
    const { logger, close } = createEngineLogger(data, 'info', { stdout: false });
    logger.error({ stderr: 'e'.repeat(MAX_LINE_CHARS * 4) }, 'a huge one');
    logger.info('after it');
    close();
    const [cut, after] = linesOf(data, 'engine.log');
    expect(cut?.msg).toMatch(/^a log line of \d+ characters was cut to its first 1024$/);
    expect(JSON.stringify(cut).length).toBeLessThan(2000);
    expect(after?.msg).toBe('after it');
  });

  it('shows URLs without their credentials, query or fragment', () => {
    expect(displayUrl('rtsp://admin:pw@10.0.0.9:554/Streaming/101?token=t#x')).toBe(
      'rtsp://10.0.0.9:554/Streaming/101',
    );
    expect(displayUrl('/data/videos/a.mp4')).toBe('/data/videos/a.mp4');
    expect(scrubSecrets('a=1&password=p&b=2 https://x:y@h')).toBe(
      'a=1&password=[redacted]&b=2 https://[redacted]@h',
    );
  });
});

describe('the throttle of repeating lines', () => {
  it('writes the first of a window, counts the rest into one summary, and starts afresh after', () => {
    const clock = new ManualClock();
    const written: [string, number][] = [];
    const throttle = new LogThrottle<string>(clock, (entry, repeats) => written.push([entry, repeats]), {
      windowMs: 60_000,
      burst: 2,
    });
    for (let i = 1; i <= 100; i++) throttle.line('camera-1', `error ${i}`);
    throttle.line('camera-2', 'other error');
    expect(written).toEqual([
      ['error 1', 0],
      ['error 2', 0],
      ['other error', 0],
    ]);
    clock.advance(60_000);
    expect(written.slice(3)).toEqual([['error 100', 98]]);
    throttle.line('camera-1', 'error 101');
    clock.advance(60_000);
    expect(written.slice(4)).toEqual([['error 101', 0]]);
  });

  it('shares one window among keys past its bound, and writes what is due when closed', () => {
    const clock = new ManualClock();
    const written: [string, number][] = [];
    const throttle = new LogThrottle<string>(clock, (entry, repeats) => written.push([entry, repeats]), {
      maxKeys: 3,
    });
    for (let client = 0; client < 1000; client++) throttle.line(`10.0.${client}`, `client ${client}`);
    throttle.close();
    expect(written).toEqual([
      ['client 0', 0],
      ['client 1', 0],
      ['client 2', 0],
      ['client 3', 0],
      ['client 999', 996],
    ]);
  });
});

describe('the operations log', () => {
  it("writes a failing camera's analysis errors as the first, then a count a window", () => {
    const data = dataDir();
    const { logger, close } = createEngineLogger(data, 'info', { stdout: false });
    const clock = new ManualClock();
    // Stand-ins for the emitters the engine passes (VideoAnalysis, TaskRegistry): only their events count here.
    const video = new EventEmitter();
    const tasks = new EventEmitter() as unknown as TaskRegistry;
    const stop = logOperations(logger, clock, { tasks, video, bus: new EventBus() });
    const fail = (taskId: string, n: number) => video.emit('analysis_error', taskId, `frame ${n} failed`);
    for (let n = 1; n <= 600; n++) fail('camera-a', n);
    fail('camera-b', 1);
    clock.advance(60_000);
    for (let n = 601; n <= 700; n++) fail('camera-a', n);
    stop();
    close();
    const lines = readFileSync(join(logDir(data), 'engine.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .map(({ event, task_id, reason, repeats, level }) => ({ event, task_id, reason, repeats, level }));
    const line = (task_id: string, n: number, repeats?: number) => ({
      event: 'analysis.error',
      task_id,
      reason: `frame ${n} failed`,
      repeats,
      level: 40,
    });
    expect(lines).toEqual([
      line('camera-a', 1),
      line('camera-b', 1),
      line('camera-a', 600, 599),
      line('camera-a', 601),
      line('camera-a', 700, 99),
    ]);
  });
});
