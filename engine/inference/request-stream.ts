import type { HostRequest } from './protocol';

/**
 * The framing of requests on an inference host's stdin: a 32-bit little-endian length, the request
 * as JSON, then the frame's pixels when it has any. Pixels are written from the frame's own buffer
 * and read in place on the other side (no chunks to join, no serializer), which costs one copy
 * through the kernel per frame.
 */

// A head longer than this is not one the engine wrote: the stream is out of step.
const MAX_HEAD_BYTES = 1024 * 1024;

/** The length prefix and JSON of a request; its pixels are written after it as they are. */
export function requestHead(request: HostRequest): Buffer {
  const json = Buffer.from(JSON.stringify(request), 'utf8');
  const head = Buffer.allocUnsafe(4 + json.length);
  head.writeUInt32LE(json.length, 0);
  json.copy(head, 4);
  return head;
}

/**
 * Reads requests where they belong: target() is always exactly the rest of the current part
 * (length, head or pixels), so no read runs past a request and nothing is copied twice.
 */
export class RequestReader {
  private readonly lengthBytes = new Uint8Array(4);
  private head = new Uint8Array(0);
  /** Reused between frames, grown to the largest seen. */
  private pixelBuffer = new Uint8Array(0);
  private part: 'length' | 'head' | 'pixels' = 'length';
  private filled = 0;
  private request: HostRequest | null = null;

  /**
   * @param onRequest takes each whole request; `pixels` is valid until the next request starts
   * arriving, which the engine sends only once this one is answered.
   */
  constructor(private readonly onRequest: (request: HostRequest, pixels: Uint8Array) => void) {}

  target(): Uint8Array {
    return this.current().subarray(this.filled);
  }

  /** Takes the `count` bytes just written at target(). Throws on a stream out of step. */
  advance(count: number): void {
    this.filled += count;
    const current = this.current();
    if (this.filled < current.length) return;
    this.filled = 0;
    if (this.part === 'length') {
      const length = Buffer.from(this.lengthBytes.buffer).readUInt32LE(0);
      if (length === 0 || length > MAX_HEAD_BYTES) throw new Error(`request head of ${length} bytes`);
      this.head = new Uint8Array(length);
      this.part = 'head';
    } else if (this.part === 'head') {
      const request = JSON.parse(Buffer.from(this.head).toString('utf8')) as HostRequest;
      const bytes = request.kind === 'check' ? 0 : request.bytes;
      if (bytes > this.pixelBuffer.length) this.pixelBuffer = new Uint8Array(bytes);
      this.request = request;
      this.part = 'pixels';
      if (bytes === 0) this.finish();
    } else {
      this.finish();
    }
  }

  private current(): Uint8Array {
    if (this.part === 'length') return this.lengthBytes;
    if (this.part === 'head') return this.head;
    return this.pixels();
  }

  private pixels(): Uint8Array {
    const request = this.request;
    return this.pixelBuffer.subarray(0, request && request.kind !== 'check' ? request.bytes : 0);
  }

  private finish(): void {
    const request = this.request;
    const pixels = this.pixels();
    this.request = null;
    this.part = 'length';
    if (request) this.onRequest(request, pixels);
  }
}
