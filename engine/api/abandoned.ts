import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * A request whose client may go away before its answer (a console's Cancel, a closed tab): `signal`
 * aborts then, so a long wait (a source being probed, a package being checked) is dropped rather than
 * finished for nobody. `end()` stops listening; `drop()` answers nobody, once the work has stopped.
 */
export interface Abandoned {
  readonly signal: AbortSignal;
  end(): void;
  /** Logs the abandonment once, at info level (a client's choice, no fault), and closes the socket. */
  drop(what: string, error: unknown): FastifyReply;
}

export function whenAbandoned(request: FastifyRequest, reply: FastifyReply): Abandoned {
  const controller = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) controller.abort();
  };
  reply.raw.on('close', onClose);
  return {
    signal: controller.signal,
    end: () => reply.raw.off('close', onClose),
    drop(what, error) {
      request.log.info(`${what} was abandoned by its client: ${(error as Error).message}`);
      reply.hijack();
      reply.raw.destroy();
      return reply;
    },
  };
}
