import replyFrom from '@fastify/reply-from';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FORWARD_TIMEOUT_MS } from './owner-routing';

/**
 * The task routes whose request or answer a NATS message cannot carry (an image upload, a video
 * playlist and its segments, a dataset zip, a sample's picture: config.ownerBound 'http'), proxied
 * to the owner's API over HTTP, streamed both ways. The request goes as the client sent it, its
 * token included: tokens are the site's, so the owner authenticates it itself, and its Host and
 * Origin stay the client's, so the URLs the owner answers with lead back through this node.
 */

/** Marks a request one node proxied to another: it is answered where it lands, never sent on (no loops). */
export const PROXIED = 'x-vc-proxied';

/** How many connections a node keeps open to each other node's API, for proxied requests. */
export const PROXY_CONNECTIONS_PER_NODE = 32;

/** Registers the HTTP client that proxies owner-bound routes; call before the routes are added. */
export async function registerOwnerProxy(app: FastifyInstance): Promise<void> {
  await app.register(replyFrom, {
    undici: { connections: PROXY_CONNECTIONS_PER_NODE, headersTimeout: FORWARD_TIMEOUT_MS },
    disableRequestLogging: true,
  });
}

/** Whether a request was proxied here by another node of the site. */
export const proxiedHere = (request: FastifyRequest) => request.headers[PROXIED] !== undefined;

/** Streams the request to the owner's API at `apiUrl` and its answer back; `failed` answers when the owner did not. */
export function proxyToOwner(
  request: FastifyRequest,
  reply: FastifyReply,
  apiUrl: string,
  owner: string,
  failed: (error: Error) => Error,
): FastifyReply {
  // A multipart upload is parsed by its handler, so its body is still unread: send it as a stream.
  if (request.body === undefined && request.isMultipart()) request.body = request.raw;
  // The owner's origin and this request's path, joined as text: a path that reads as a URL of its own
  // ("//elsewhere/...") must never choose the host.
  return reply.from(`${new URL(apiUrl).origin}${request.url}`, {
    rewriteRequestHeaders: (_request, headers) => ({
      ...headers,
      host: request.headers.host,
      [PROXIED]: '1',
    }),
    rewriteHeaders: (headers) => ({ ...headers, 'x-vc-node': owner }),
    onError: (answer, { error }) => answer.send(failed(error)),
  });
}
