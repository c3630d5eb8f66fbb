import type { DeliveryRecord } from '../../engine/events/delivery';
import type { CallbackBody } from '../../engine/events/schema';

export interface Frame {
  id?: string;
  event?: string;
  data?: string;
}

/** An SSE client over fetch, as the web console's EventSource reads the stream. */
export class FeedClient {
  readonly frames: Frame[] = [];
  ended = false;
  /** The answer's text when the stream was refused. */
  body = '';

  private constructor(
    readonly status: number,
    private readonly abort: AbortController,
  ) {}

  /** `pauseMs`: a console that waits this long after each chunk it reads (a slow one). */
  static async open(url: string, headers: Record<string, string> = {}, pauseMs = 0): Promise<FeedClient> {
    const abort = new AbortController();
    const response = await fetch(url, { headers, signal: abort.signal });
    const client = new FeedClient(response.status, abort);
    if (response.ok && response.body) void client.read(response.body, pauseMs);
    else client.body = await response.text();
    return client;
  }

  callbacks(): { id: number; body: CallbackBody }[] {
    return this.frames
      .filter((f) => f.event === 'callback')
      .map((f) => ({ id: Number(f.id), body: JSON.parse(f.data ?? '') as CallbackBody }));
  }

  deliveries(): DeliveryRecord[] {
    return this.frames
      .filter((f) => f.event === 'delivery')
      .map((f) => JSON.parse(f.data ?? '') as DeliveryRecord);
  }

  async until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`feed: timed out waiting for ${what}`);
      await new Promise((done) => setTimeout(done, 10));
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async read(body: ReadableStream<Uint8Array>, pauseMs: number): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body) {
        if (pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const frame: Frame = {};
          for (const line of buffer.slice(0, end).split('\n')) {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            if (field === 'id' || field === 'event' || field === 'data') frame[field] = line.slice(colon + 2);
          }
          buffer = buffer.slice(end + 2);
          if (frame.event || frame.data) this.frames.push(frame);
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
  }
}
