import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE_FAILURE_REASONS } from '../engine/contract';
import { StderrTail } from '../engine/media/frame-source';
import { SourceRefusedError } from '../engine/media/media-folders';
import { SourceNotVideoError, SourceTooLargeError } from '../engine/media/source-limits';
import { failureReason } from '../engine/media/source-refusal';
import { startTestEngine, type TestEngine } from './helpers/engine';
import { freePort } from './helpers/rtmp-source';

/**
 * Why a source did not open, as the envelope's `reason` extension says it (so the console can say
 * what to check): from ffmpeg's own lines, and end to end from a real ffmpeg refused by a closed
 * port, an unresolvable name and a real HTTP server answering 401 and 404.
 */

describe('failureReason', () => {
  it("reads ffmpeg's lines as the kind of failure", () => {
    const cases: Array<[string, string]> = [
      ['no video frame within 15 s: method DESCRIBE failed: 401 Unauthorized', 'denied'],
      ['no video frame within 15 s: Server returned 403 Forbidden (access denied)', 'denied'],
      ['no video frame within 15 s: method DESCRIBE failed: 404 Not Found', 'not_found'],
      ['no video frame within 15 s: HTTP error 404 Not Found', 'not_found'],
      [
        'no video frame within 15 s: [tcp @ 0x55a1] Failed to resolve hostname cam.invalid: Name or service not known',
        'unresolved',
      ],
      ['rtsp://127.0.0.1:1/x: Connection refused', 'refused'],
      [
        'no video frame within 15 s: Connection to tcp://10.0.0.9:554 failed: Connection timed out',
        'timeout',
      ],
      ['no video frame within 15 s', 'timeout'],
      [
        'no video frame within 15 s: rtsp://10.255.255.1/x: Invalid data found when processing input',
        'not_video',
      ],
      ['ffmpeg exited with code 1', 'no_frame'],
    ];
    expect(cases.map(([line]) => failureReason(new Error(line)))).toEqual(cases.map(([, reason]) => reason));
  });

  it("keeps the engine's own refusals apart, and a file's one answer", () => {
    expect(failureReason(new SourceTooLargeError(7680, 4320, 8_847_360))).toBe('too_large');
    expect(failureReason(new SourceNotVideoError('tty'))).toBe('not_video');
    expect(failureReason(new SourceRefusedError())).toBe('file_refused');
  });

  it('says only the words the contract lists', () => {
    for (const line of ['401', '404', 'refused', 'x', 'timed out', 'Invalid data found'])
      expect(SOURCE_FAILURE_REASONS).toContain(failureReason(new Error(line)));
  });
});

describe("ffmpeg's last error", () => {
  it('is the telling line, not the closing "Input/output error" that restates it', () => {
    const tail = new StderrTail();
    tail.push(
      Buffer.from(
        '[tcp @ 0x55ba] [error] Failed to resolve hostname camera.invalid: Name or service not known\n' +
          '[error] rtsp://camera.invalid/cam: Input/output error\n',
      ),
    );
    expect(tail.lastError).toBe(
      '[tcp @ 0x55ba] Failed to resolve hostname camera.invalid: Name or service not known',
    );
    // Alone, the closing line is still the error; a later telling line replaces an earlier one.
    const alone = new StderrTail();
    alone.push(Buffer.from('[error] rtsp://cam/x: Input/output error\n'));
    expect(alone.lastError).toBe('rtsp://cam/x: Input/output error');
    alone.push(Buffer.from('[error] rtsp://cam/x: Connection refused\n'));
    expect(alone.lastError).toBe('rtsp://cam/x: Connection refused');
  });
});

describe('the reason in the envelope', () => {
  let t: TestEngine;
  let http: Server;
  let httpPort: number;

  beforeAll(async () => {
    // A real web server: 401 on /private, 404 everywhere else.
    http = createServer((request, response) => {
      response.writeHead(request.url?.startsWith('/private') ? 401 : 404, { 'www-authenticate': 'Basic' });
      response.end();
    });
    await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
    httpPort = (http.address() as AddressInfo).port;
    t = await startTestEngine();
  }, 60_000);

  afterAll(async () => {
    await t?.stop();
    await new Promise((done) => http?.close(done));
  });

  const refusal = async (path: string, videoUrl: string) => {
    const body =
      path === '/api/task'
        ? { zapk_id: 'builtin', app_ids: ['motion'], video_url: videoUrl }
        : { video_url: videoUrl };
    const answer = await t.call('POST', path, { json: body });
    return {
      status: answer.status,
      code: answer.body.code,
      field: answer.body.field,
      reason: answer.body.reason,
    };
  };

  it('tells a closed port, an unknown host, a 401, a 404 and a refused file apart', async () => {
    const closed = await freePort();
    const sources: Array<[string, string]> = [
      [`rtsp://127.0.0.1:${closed}/cam`, 'refused'],
      ['rtsp://camera.invalid/cam', 'unresolved'],
      [`http://127.0.0.1:${httpPort}/private/cam.ts`, 'denied'],
      [`http://127.0.0.1:${httpPort}/cam.ts`, 'not_found'],
      ['/nonexistent/camera.mp4', 'file_refused'],
    ];
    for (const path of ['/api/stream', '/api/task'])
      for (const [videoUrl, reason] of sources)
        expect(await refusal(path, videoUrl), `${path} ${videoUrl}`).toEqual({
          status: 503,
          code: 50301,
          field: 'video_url',
          reason,
        });
  }, 180_000);
});
