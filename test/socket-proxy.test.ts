import fastifyWebsocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { PROXY_MAX_BUFFERED_BYTES, proxySocketToOwner, TOO_SLOW } from '../engine/cluster/socket-proxy';
import { freePort } from './helpers/rtmp-source';

// The video socket proxy between two real WebSocket servers on loopback: an "owner" that sends as
// fast as its socket takes it (as a video channel does to a reader that keeps up), and a node that
// proxies to it. A viewer that stops reading must be closed by the proxy, not buffered for.
const MESSAGE = Buffer.alloc(64 * 1024, 7);
/** What the owner sends at most on one socket, whatever happens: far beyond any socket buffers on loopback. */
const OWNER_LIMIT = 256 * 1024 * 1024;
let owner: WebSocketServer;
let ownerUrl: string;
let proxy: FastifyInstance;
let proxyUrl: string;
/** How each owner-side socket ended (its close code). */
const ownerEnds: Array<Promise<number>> = [];

beforeAll(async () => {
  const ownerPort = await freePort();
  owner = new WebSocketServer({ host: '127.0.0.1', port: ownerPort });
  ownerUrl = `http://127.0.0.1:${ownerPort}`;
  owner.on('connection', (socket) => {
    let sent = 0;
    // A message every 5 ms (about 13 MB/s) while its own socket keeps up: a viewer that reads keeps
    // up with it easily, one that stops fills the loopback buffers within a second or two.
    const pump = () => {
      if (socket.readyState !== WebSocket.OPEN || sent >= OWNER_LIMIT) return;
      if (socket.bufferedAmount < 1024 * 1024) {
        socket.send(MESSAGE);
        sent += MESSAGE.length;
      }
      setTimeout(pump, 5);
    };
    pump();
    ownerEnds.push(new Promise((done) => socket.on('close', (code) => done(code))));
  });
  proxy = Fastify();
  await proxy.register(fastifyWebsocket, { options: { maxPayload: 1024 } });
  proxy.addHook('preHandler', async (request, reply) =>
    proxySocketToOwner(request, reply, ownerUrl, 'owner', (error) => error),
  );
  proxy.get('/video', { websocket: true }, (socket) => socket.close(1011, 'not proxied'));
  await proxy.listen({ host: '127.0.0.1', port: 0 });
  proxyUrl = `ws://127.0.0.1:${(proxy.server.address() as { port: number }).port}/video`;
});

afterAll(async () => {
  await proxy?.close();
  await new Promise((done) => owner?.close(done));
});

describe('the video socket proxy', () => {
  it(`closes a viewer that stops reading once it is ${PROXY_MAX_BUFFERED_BYTES} bytes behind, and its owner socket`, async () => {
    const viewer = new WebSocket(proxyUrl);
    let received = 0;
    viewer.on('message', (data: Buffer) => {
      received += data.length;
    });
    await new Promise((done) => viewer.once('open', done));
    // Reads nothing for a while: the kernel's buffers fill, then the proxy's.
    viewer.pause();
    await new Promise((done) => setTimeout(done, 5_000));
    const closed = new Promise<number>((done) => viewer.once('close', (code) => done(code)));
    viewer.resume();
    expect(await closed).toBe(TOO_SLOW);
    // The owner's side of it was closed as well: the owner stops sending for it.
    expect(await ownerEnds[0]).toBe(TOO_SLOW);
    // What the viewer got before the close is what sat in the buffers, far below what the owner could send.
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(OWNER_LIMIT / 4);
  }, 30_000);

  it("passes the owner's messages to a viewer that keeps up, and the viewer's close code to the owner", async () => {
    const viewer = new WebSocket(proxyUrl);
    let received = 0;
    viewer.on('message', (data: Buffer) => {
      received += data.length;
    });
    await new Promise((done) => viewer.once('open', done));
    await new Promise((done) => setTimeout(done, 1_000));
    expect(received).toBeGreaterThan(PROXY_MAX_BUFFERED_BYTES);
    const closed = new Promise<number>((done) => viewer.once('close', (code) => done(code)));
    viewer.close(4000, 'enough');
    expect(await closed).toBe(4000);
    expect(await ownerEnds[1]).toBe(4000);
  }, 30_000);
});
