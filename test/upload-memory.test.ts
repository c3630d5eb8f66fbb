import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEngine, type TestEngine } from './helpers/engine';

/**
 * Image upload bodies held in memory are bounded for all uploads together (uploadMemoryBytes): an
 * upload takes its Content-Length from the budget before its body is read, waits for room (10 s),
 * then is refused with 503 50302 and Retry-After, its body never read. Here the budget is 3 MiB and
 * each upload 2 MiB, so one holds it while the others wait.
 */

const MiB = 1024 * 1024;
const BUDGET = 3 * MiB;
const BODY = 2 * MiB;

let t: TestEngine;
let taskId: string;

beforeAll(async () => {
  t = await startTestEngine(undefined, undefined, { uploadMemoryBytes: BUDGET });
  const started = await t.call('POST', '/api/task', {
    json: { mode: 'image', zapk_id: 'builtin', app_ids: ['motion'] },
  });
  taskId = (started.body.data as { task_id: string }).task_id;
});
afterAll(async () => t?.stop());

interface Upload {
  /** Sends more of the body; true when all of it has gone. */
  send(bytes: number): void;
  /** Status, envelope and Retry-After of the answer. */
  answer: Promise<{ status: number; code: number; msg: string; retryAfter: string | null }>;
  sent(): number;
}

/** A raw upload of `length` declared bytes (garbage: no decoder is reached in time), sent bit by bit. */
function upload(length: number): Upload {
  let sent = 0;
  const req = request({
    host: '127.0.0.1',
    port: t.engine.port,
    method: 'POST',
    path: `/api/task/${taskId}/image`,
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'image/jpeg', 'content-length': length },
  });
  // The engine may answer and close before the body is all sent: that is what is tested.
  req.on('error', () => {});
  const answer = new Promise<{ status: number; code: number; msg: string; retryAfter: string | null }>(
    (resolve, reject) => {
      req.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => {
          const body = JSON.parse(text) as { code: number; msg: string };
          const retryAfter = response.headers['retry-after'];
          resolve({
            status: response.statusCode ?? 0,
            code: body.code,
            msg: body.msg,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          });
        });
        response.on('error', reject);
      });
    },
  );
  return {
    send(bytes) {
      const part = Math.min(bytes, length - sent);
      if (part > 0) req.write(Buffer.alloc(part, 0x5a));
      sent += part;
      if (sent === length) req.end();
    },
    answer,
    sent: () => sent,
  };
}

const settle = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('image upload bodies in memory, all uploads together', () => {
  it('makes uploads beyond the budget wait, then refuses them with 503 50302 before reading their body', async () => {
    // The first holds 2 of the 3 MiB and sends its body slowly.
    const first = upload(BODY);
    first.send(64 * 1024);
    await settle(500);
    // A whole body, and one that never comes: both wait for room, neither is read into memory.
    const whole = upload(BODY);
    whole.send(BODY);
    const trickle = upload(BODY);
    trickle.send(1024);
    let answered = false;
    void Promise.race([whole.answer, trickle.answer]).then(() => {
      answered = true;
    });
    await settle(2000);
    expect(answered, 'an upload was answered while the budget was full').toBe(false);

    for (const refused of await Promise.all([whole.answer, trickle.answer])) {
      expect(refused).toMatchObject({ status: 503, code: 50302, retryAfter: '1' });
      expect(refused.msg).toMatch(/other uploads fill the memory for receiving images/);
    }
    // The trickling one was refused with most of its body never sent, let alone read.
    expect(trickle.sent()).toBe(1024);

    // The first ends its body and is answered as any upload (here: not an image).
    first.send(BODY);
    const done = await first.answer;
    expect(done.status).not.toBe(503);
    expect(done.code).toBe(41502);

    // With the budget free again, the next is read and answered.
    const next = upload(BODY);
    next.send(BODY);
    expect((await next.answer).code).toBe(41502);
  }, 60_000);

  it('refuses at once a body larger than the whole budget (413)', async () => {
    const large = upload(BUDGET + 1);
    large.send(1024);
    expect(await large.answer).toMatchObject({ status: 413, code: 41301 });
  });
});
