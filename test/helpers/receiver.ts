import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventBus } from '../../engine/events/bus';
import type { DeliveryRecord } from '../../engine/events/delivery';
import type { CallbackBody, NewEvent } from '../../engine/events/schema';

/** How the receiver answers the next callbacks. */
export type ReceiverMode =
  | { kind: 'ok' }
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number };

export interface Request {
  event_id: string;
  task_id: string;
  seq: number;
  /** The parsed body and raw headers; left out with keepBodies: false (benchmarks). */
  body?: CallbackBody;
  raw?: string;
  headers?: IncomingHttpHeaders;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /** What became of it: the status answered, 'hung' (never answered) or 'aborted' (the engine hung up first). */
  outcome: number | 'hung' | 'aborted';
}

/**
 * A callback receiver on loopback, as a caller of the engine runs one: it records every request and
 * answers as told (200 with {code, msg}, another status, never, or after a delay).
 */
export class Receiver {
  readonly requests: Request[] = [];
  mode: ReceiverMode = { kind: 'ok' };
  private readonly hung = new Set<ServerResponse>();
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly keepBodies: boolean,
  ) {}

  static async start(options: { keepBodies?: boolean } = {}): Promise<Receiver> {
    const server = createServer();
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const receiver = new Receiver(server, `http://127.0.0.1:${port}/callback`, options.keepBodies ?? true);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.handle(Buffer.concat(chunks).toString('utf8'), req.headers, res));
    });
    return receiver;
  }

  /** Bodies answered 2xx, in the order they were answered: what the caller actually has. */
  get accepted(): Request[] {
    return this.requests.filter((r) => typeof r.outcome === 'number' && r.outcome >= 200 && r.outcome < 300);
  }

  /** Resolves once the check holds (tested after every request), or fails naming what it waited for. */
  async waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
    if (check()) return;
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        fail(new Error(`receiver: timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        done();
      };
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private handle(raw: string, headers: IncomingHttpHeaders, res: ServerResponse): void {
    const body = JSON.parse(raw) as CallbackBody;
    const request: Request = {
      event_id: body.event_id,
      task_id: body.task_id,
      seq: body.seq,
      receivedAt: Date.now(),
      ...(this.keepBodies ? { body, raw, headers } : {}),
      outcome: 'hung',
    };
    this.requests.push(request);
    const mode = this.mode;
    const answer = (status: number) => {
      if (res.destroyed || res.socket?.destroyed) {
        request.outcome = 'aborted';
      } else {
        request.outcome = status;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(status < 300 ? { code: 0, msg: 'received' } : { code: status, msg: 'failing' }),
        );
      }
      this.notify();
    };
    if (mode.kind === 'ok') answer(200);
    else if (mode.kind === 'status') answer(mode.status);
    else if (mode.kind === 'slow') setTimeout(() => answer(200), mode.ms);
    else {
      this.hung.add(res);
      res.once('close', () => {
        this.hung.delete(res);
        request.outcome = 'aborted';
        this.notify();
      });
      this.notify();
    }
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

/** A result event as the analysis hands it over: one fired rule with a snapshot of imageChars characters. */
export function message(taskId: string, frame: number, imageChars = 8, appId = 'person'): NewEvent {
  return {
    event: 'message',
    task_id: taskId,
    app_id: appId,
    business_id: 'gate-a',
    timestamp: 1_780_000_000_000 + frame,
    data: {
      frame: { width: 768, height: 576, id: frame },
      rules: [
        {
          id: `${appId}:0`,
          class_id: '0',
          image: 'A'.repeat(imageChars),
          objects: [
            {
              track_id: String(frame),
              x: 100,
              y: 200,
              w: 40,
              h: 80,
              score: 0.9,
              class_id: '0',
              name: 'person',
            },
          ],
        },
      ],
    },
  };
}

/** The next delivery change on the bus that passes the check (an attempt recorded, a redelivery). */
export function nextDelivery(
  bus: EventBus,
  check: (record: DeliveryRecord) => boolean,
  timeoutMs = 20_000,
): Promise<DeliveryRecord> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      bus.off('delivery', listener);
      fail(new Error(`no matching delivery change within ${timeoutMs} ms`));
    }, timeoutMs);
    const listener = (record: DeliveryRecord) => {
      if (!check(record)) return;
      clearTimeout(timer);
      bus.off('delivery', listener);
      done(record);
    };
    bus.on('delivery', listener);
  });
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
