import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ClusterConnection } from './connection';

/**
 * Answers of the routes a task's owner answers (its state, snapshot, heatmap, counts, update, close),
 * asked of any node. The node that got the request authenticates it as usual, then sends it over NATS
 * (request/reply: the nodes are already authenticated to one another there) to the node that runs the
 * task, which answers it through its own router as the same user. An answer bigger than a NATS
 * message (1 MiB by default) is refused with the owner's URL rather than cut.
 */

/**
 * The task's owner did not answer a forwarded request in time; a task a leaving node was asked to
 * take out of the site cannot be taken (unknown, closed, no room, source not reachable from it).
 */
export type ClusterErrorKind = 'cluster.owner_unreachable' | 'cluster.take_refused';

/** How long a forwarded request waits for the owner's answer. */
export const FORWARD_TIMEOUT_MS = 5_000;
/**
 * Marks a request the owner injects into its own router: its value is a secret made at start that
 * never leaves the process, so no client can send it; the user rides along beside it.
 */
const FORWARDED = 'x-vc-forwarded';
const FORWARDED_USER = 'x-vc-forwarded-user';

/** What travels over NATS: the request as the router matched it, and its answer. */
interface Forwarded {
  method: string;
  url: string;
  username: string;
  body: unknown;
}
interface Answer {
  status: number;
  type: string;
  body: string;
}

export class OwnerRouting {
  private readonly secret = randomBytes(32).toString('base64url');

  constructor(
    private readonly conn: ClusterConnection,
    private readonly node: string,
  ) {}

  /** Answers the requests other nodes forward to this one, through `app`'s own routes. */
  serve(app: FastifyInstance): void {
    this.conn.nc.subscribe(`vc.node.${this.node}.api`, {
      callback: (_error, message) => {
        void (async () => {
          const request = message.json<Forwarded>();
          const answer = await app.inject({
            method: request.method as 'GET',
            url: request.url,
            headers: {
              [FORWARDED]: this.secret,
              [FORWARDED_USER]: request.username,
              ...(request.body === null ? {} : { 'content-type': 'application/json' }),
            },
            payload: request.body === null ? undefined : JSON.stringify(request.body),
          });
          const reply: Answer = {
            status: answer.statusCode,
            type: String(answer.headers['content-type'] ?? 'application/json'),
            body: answer.rawPayload.toString('base64'),
          };
          message.respond(JSON.stringify(reply));
        })().catch(() => message.respond(JSON.stringify({ status: 502, type: 'text/plain', body: '' })));
      },
    });
  }

  /** The user a request forwarded by another node of the site is made as; undefined for any other request. */
  forwardedUser(request: FastifyRequest): string | undefined {
    const given = request.headers[FORWARDED];
    const user = request.headers[FORWARDED_USER];
    if (typeof given !== 'string' || typeof user !== 'string') return undefined;
    const a = Buffer.from(given);
    const b = Buffer.from(this.secret);
    return a.length === b.length && timingSafeEqual(a, b) ? user : undefined;
  }

  /** Sends a request to the node that runs its task and relays that node's answer. */
  async forward(request: FastifyRequest, reply: FastifyReply, owner: string): Promise<FastifyReply> {
    const forwarded: Forwarded = {
      method: request.method,
      url: request.url,
      username: request.username ?? '',
      body: request.body ?? null,
    };
    const message = await this.conn.nc.request(`vc.node.${owner}.api`, JSON.stringify(forwarded), {
      timeout: FORWARD_TIMEOUT_MS,
    });
    const answer = message.json<Answer>();
    return reply
      .code(answer.status)
      .header('x-vc-node', owner)
      .type(answer.type)
      .send(Buffer.from(answer.body, 'base64'));
  }
}
