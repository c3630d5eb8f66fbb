import type { IncomingMessage } from 'node:http';
import { buffer } from 'node:stream/consumers';
import type { FastifyReply, FastifyRequest } from 'fastify';
import WebSocket from 'ws';
import { PROXIED } from './owner-proxy';
import { FORWARD_TIMEOUT_MS } from './owner-routing';

/**
 * The low-latency video socket of a task another node runs (config.ownerBound 'http' on a socket
 * route), proxied to that node: this node opens the same socket on the owner with the client's
 * handshake (token, Host and Origin as sent: the owner authenticates it and serves the channel), and
 * only once the owner accepted it does it accept the client's; then the two are piped message for
 * message. A refusal of the owner's (401, 404...) reaches the client as the owner sent it. Either
 * answer names the owner in x-vc-node, as every proxied answer does.
 */

/**
 * Unsent bytes a proxied viewer may have on this node (about 4 s of a 2 Mbit/s video): a viewer
 * further behind is closed, so a slow one never makes this node buffer the owner's video for it.
 */
export const PROXY_MAX_BUFFERED_BYTES = 1024 * 1024;
/** The largest message this node takes from the owner's socket (an fMP4 fragment, a keyframe's included). */
export const PROXY_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** Close code of a proxied viewer that fell more than PROXY_MAX_BUFFERED_BYTES behind. */
export const TOO_SLOW = 4408;
/** Close code of a proxied socket whose owner went without closing it (killed, cut off). */
export const OWNER_GONE = 4503;

/** Headers that belong to the client's own connection and handshake: the owner's gets its own. */
const OWN_HANDSHAKE = new Set([
  'connection',
  'upgrade',
  'keep-alive',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
]);

/** Whether a close code may be sent in a close frame (1005, 1006 and 1015 only report one). */
const sendable = (code: number) =>
  (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
  (code >= 3000 && code <= 4999);

/**
 * Opens the request's socket on the owner's API at `apiUrl`, then accepts the client's and pipes the
 * two; `failed` answers when the owner did not answer the handshake within FORWARD_TIMEOUT_MS.
 */
export async function proxySocketToOwner(
  request: FastifyRequest,
  reply: FastifyReply,
  apiUrl: string,
  owner: string,
  failed: (error: Error) => Error,
): Promise<FastifyReply> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers))
    if (value !== undefined && !OWN_HANDSHAKE.has(name)) headers[name] = value;
  headers[PROXIED] = '1';
  // The owner's origin and this request's path, joined as text (as owner-proxy.ts does).
  const url = `${new URL(apiUrl).origin.replace(/^http/, 'ws')}${request.url}`;
  const upstream = new WebSocket(url, {
    headers,
    handshakeTimeout: FORWARD_TIMEOUT_MS,
    maxPayload: PROXY_MAX_MESSAGE_BYTES,
    perMessageDeflate: false,
  });
  const answer = await new Promise<'open' | IncomingMessage | Error>((done) => {
    upstream.once('open', () => done('open'));
    upstream.once('unexpected-response', (_request, response) => done(response));
    upstream.once('error', done);
  });
  upstream.on('error', () => {});
  if (answer instanceof Error) throw failed(answer);
  if (answer !== 'open') {
    // The owner refused the handshake: its answer (an envelope) goes back as it sent it.
    const body = await buffer(answer);
    answer.destroy();
    const retry = answer.headers['retry-after'];
    if (retry !== undefined) reply.header('retry-after', retry);
    return reply
      .code(answer.statusCode ?? 502)
      .header('x-vc-node', owner)
      .type(answer.headers['content-type'] ?? 'application/json')
      .send(body);
  }
  const socket = request.raw.socket;
  reply.hijack();
  if (!socket.writable) {
    upstream.terminate();
    return reply;
  }
  // The 101 names the owner, as a refusal above does. ws writes it within handleUpgrade (no
  // verifyClient is set), so the listener is there for this handshake alone.
  const server = request.server.websocketServer;
  const nameOwner = (headers: string[], upgrade: IncomingMessage) => {
    if (upgrade === request.raw) headers.push(`x-vc-node: ${owner}`);
  };
  server.on('headers', nameOwner);
  try {
    // A WebSocket client sends nothing before the server's 101, so no bytes follow the handshake here.
    server.handleUpgrade(request.raw, socket, Buffer.alloc(0), (client) => pipe(client, upstream, owner));
  } finally {
    server.off('headers', nameOwner);
  }
  return reply;
}

/** Messages both ways; either side closing closes the other; a viewer too far behind is closed. */
function pipe(client: WebSocket, upstream: WebSocket, owner: string): void {
  const gone = `node ${owner} went without closing the video`;
  client.on('error', () => client.terminate());
  // One the owner is closing (a refusal: 4404, 4429) reports its code with its 'close' below.
  if (upstream.readyState === WebSocket.CLOSED) {
    client.close(OWNER_GONE, gone);
    return;
  }
  upstream.on('message', (data, isBinary) => {
    if (client.readyState !== WebSocket.OPEN) return;
    if (client.bufferedAmount > PROXY_MAX_BUFFERED_BYTES) {
      client.close(TOO_SLOW, 'the viewer fell too far behind the video');
      return;
    }
    client.send(data, { binary: isBinary });
  });
  client.on('message', (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN && upstream.bufferedAmount <= PROXY_MAX_BUFFERED_BYTES)
      upstream.send(data, { binary: isBinary });
  });
  upstream.on('close', (code, reason) => {
    if (sendable(code)) client.close(code, reason);
    else client.close(OWNER_GONE, gone);
  });
  client.on('close', (code, reason) => {
    if (sendable(code)) upstream.close(code, reason);
    else upstream.close();
  });
}
