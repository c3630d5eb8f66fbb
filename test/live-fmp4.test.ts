import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startsWithKeyframe } from '../engine/live/fmp4';
import { Fmp4Channel } from '../engine/live/fmp4-channel';
import { startTestEngine, type TestEngine, VIDEO } from './helpers/engine';

/**
 * The AI video's low-latency path: fragmented MP4 over a WebSocket from a real encoder. A viewer
 * gets the init segment, then one moof+mdat per frame starting at a keyframe.
 */

let t: TestEngine;
let taskId: string;
let stream: string;

beforeAll(async () => {
  t = await startTestEngine();
  const started = await t.call('POST', '/api/task', {
    json: { zapk_id: 'builtin', app_ids: ['motion'], video_url: VIDEO },
  });
  taskId = (started.body.data as { task_id: string }).task_id;
  const live = await t.call('POST', `/api/task/${taskId}/ailive`, { json: { app_ids: ['motion'] } });
  expect(live.body.code, live.body.msg).toBe(0);
  stream = (live.body.data as { stream: string }).stream;
}, 60_000);

afterAll(async () => t?.stop());

const socketUrl = (path: string) => `${t.engine.url.replace(/^http/, 'ws')}${path}`;
const boxTypes = (data: Buffer) => {
  const types: string[] = [];
  for (let at = 0; at + 8 <= data.length; at += data.readUInt32BE(at)) {
    types.push(data.toString('latin1', at + 4, at + 8));
    if (data.readUInt32BE(at) < 8) break;
  }
  return types;
};

describe('fragmented MP4 over a WebSocket', () => {
  it('sends the init segment, then a fragment per frame from a keyframe', async () => {
    const socket = new WebSocket(
      socketUrl(`/api/task/${taskId}/livestream/${stream}/socket?token=${encodeURIComponent(t.token)}`),
      { headers: { origin: t.engine.url } },
    );
    const messages: Buffer[] = [];
    await new Promise<void>((done, fail) => {
      socket.on('message', (data: Buffer) => {
        messages.push(data);
        if (messages.length === 26) done();
      });
      socket.on('error', fail);
      setTimeout(() => fail(new Error(`${messages.length} messages in 20 s`)), 20_000);
    });
    socket.close();
    const [init, first, ...rest] = messages as [Buffer, Buffer, ...Buffer[]];
    expect(boxTypes(init)).toEqual(['ftyp', 'moov']);
    expect(boxTypes(first)).toEqual(['moof', 'mdat']);
    expect(startsWithKeyframe(first)).toBe(true);
    for (const fragment of rest) expect(boxTypes(fragment)).toEqual(['moof', 'mdat']);
    // The encoder's keyframe interval is one second (the source's 10 fps): the 11th fragment is one.
    expect(rest.map(startsWithKeyframe).indexOf(true)).toBe(9);
  }, 40_000);

  it('refuses a socket without a token, and closes one for a stream that is not there', async () => {
    const refused = await new Promise<number>((done) => {
      const socket = new WebSocket(socketUrl(`/api/task/${taskId}/livestream/${stream}/socket`));
      socket.on('unexpected-response', (_request, response) => done(response.statusCode ?? 0));
      socket.on('error', () => {});
    });
    expect(refused).toBe(401);
    const closed = await new Promise<number>((done) => {
      const socket = new WebSocket(
        socketUrl(`/api/task/${taskId}/livestream/nope/socket?token=${encodeURIComponent(t.token)}`),
      );
      socket.on('close', (code) => done(code));
      socket.on('error', () => {});
    });
    expect(closed).toBe(4404);
  });
});

describe('a slow viewer', () => {
  it('skips to the next keyframe instead of queueing, and never holds back the others', () => {
    const init = Buffer.from('init');
    const frame = (n: number, keyframe: boolean) => ({ bytes: Buffer.from(`f${n}`), keyframe });
    const sink = (behind: () => number) => {
      const got: string[] = [];
      return {
        got,
        send: (data: Buffer) => got.push(String(data)),
        get bufferedAmount() {
          return behind();
        },
      };
    };
    let slowBehind = 0;
    const fast = sink(() => 0);
    const slow = sink(() => slowBehind);
    const channel = new Fmp4Channel();
    channel.join(fast);
    channel.join(slow);
    channel.setInit(init);
    channel.push(frame(1, false));
    channel.push(frame(2, true));
    channel.push(frame(3, false));
    slowBehind = 10_000_000;
    channel.push(frame(4, false));
    slowBehind = 0;
    channel.push(frame(5, false));
    channel.push(frame(6, true));
    expect(fast.got).toEqual(['init', 'f2', 'f3', 'f4', 'f5', 'f6']);
    expect(slow.got).toEqual(['init', 'f2', 'f3', 'f6']);
    expect(channel.skipped).toBe(1);
  });
});

describe('a viewer that joins a running video', () => {
  it('gets the fragments since the last keyframe with the next one, not a second later', () => {
    const frame = (n: number, keyframe: boolean) => ({ bytes: Buffer.from(`f${n}`), keyframe });
    const got: string[] = [];
    const channel = new Fmp4Channel();
    channel.setInit(Buffer.from('init'));
    channel.push(frame(1, true));
    channel.push(frame(2, false));
    channel.join({ send: (data) => got.push(String(data)), bufferedAmount: 0 });
    channel.push(frame(3, false));
    channel.push(frame(4, false));
    expect(got).toEqual(['init', 'f1', 'f2', 'f3', 'f4']);
  });
});
