import type { Frame } from '../vision/types';
import { type FramePool, framePool } from './frame-pool';
import { DEFAULT_MAX_SOURCE_PIXELS } from './source-limits';

// "P6 <w> <h> <maxval>" and the single whitespace byte that ends a binary PPM header.
const HEADER = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/;
// A header longer than this is not one ffmpeg wrote: the stream is corrupt.
const MAX_HEADER_BYTES = 64;
const MAX_SIDE = 16384;

export interface PooledFrame extends Frame {
  /** Gives the pixel buffer back to the reader's pool (see FramePool for who calls it). */
  release: () => void;
}

/**
 * Splits ffmpeg's `-f image2pipe -c:v ppm -pix_fmt rgb24` output into frames. Chunks may end
 * anywhere, even inside a header, and each frame may have its own size. Pixels land once in a
 * buffer of the frame's own, taken from a pool.
 *
 * Two ways in: push() copies chunks that were read elsewhere, while target() and advance() let the
 * socket read straight into the frame being filled (or a small header buffer between frames).
 */
export class PpmFrameReader {
  private header = '';
  private frame: PooledFrame | null = null;
  private filled = 0;
  private readonly headerBuffer = new Uint8Array(MAX_HEADER_BYTES);

  /** `maxPixels`: ffmpeg's decoder refuses larger frames already; a header beyond it is a broken stream. */
  constructor(
    private readonly pool: FramePool = framePool,
    private readonly maxPixels = DEFAULT_MAX_SOURCE_PIXELS,
  ) {}

  /** Where the next bytes of the stream belong: the rest of the current frame, or a header buffer. */
  target(): Uint8Array {
    return this.frame ? this.frame.data.subarray(this.filled) : this.headerBuffer;
  }

  /** Takes the `count` bytes just written at target(); returns the frames they completed. Throws on a corrupt stream. */
  advance(count: number): PooledFrame[] {
    if (this.frame) {
      this.filled += count;
      return this.completed();
    }
    // Header bytes, and maybe the start of the pixels after them, are in the header buffer.
    const bytes = this.headerBuffer.subarray(0, count);
    const used = this.readHeader(bytes);
    return used < count ? this.push(bytes.subarray(used)) : [];
  }

  /** Consumes a chunk and returns the frames it completed, in order. Throws on a corrupt stream. */
  push(chunk: Uint8Array): PooledFrame[] {
    const frames: PooledFrame[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (!this.frame) {
        offset += this.readHeader(chunk.subarray(offset));
        continue;
      }
      const count = Math.min(this.frame.data.length - this.filled, chunk.length - offset);
      this.frame.data.set(chunk.subarray(offset, offset + count), this.filled);
      this.filled += count;
      offset += count;
      frames.push(...this.completed());
    }
    return frames;
  }

  private completed(): PooledFrame[] {
    const frame = this.frame;
    if (!frame || this.filled < frame.data.length) return [];
    this.frame = null;
    return [frame];
  }

  /** Reads header bytes from the start of bytes; returns how many it used. */
  private readHeader(bytes: Uint8Array): number {
    const available = Math.min(bytes.length, MAX_HEADER_BYTES - this.header.length);
    const text = this.header + Buffer.from(bytes.buffer, bytes.byteOffset, available).toString('latin1');
    const match = HEADER.exec(text);
    if (!match) {
      if (text.length >= MAX_HEADER_BYTES || !'P6'.startsWith(text.slice(0, 2)))
        throw new Error(`not a binary PPM header: ${JSON.stringify(text.slice(0, 16))}`);
      this.header = text;
      return available;
    }
    const [width, height, maxValue] = [Number(match[1]), Number(match[2]), Number(match[3])];
    if (maxValue !== 255) throw new Error(`PPM with max value ${maxValue}, expected 255 (rgb24)`);
    if (!(width > 0 && height > 0 && width <= MAX_SIDE && height <= MAX_SIDE))
      throw new Error(`PPM of implausible size ${width}x${height}`);
    if (width * height > this.maxPixels)
      throw new Error(`PPM of ${width}x${height}, more than the ${this.maxPixels} pixels a frame may have`);
    const used = match[0].length - this.header.length;
    this.header = '';
    const data = this.pool.take(width * height * 3);
    this.frame = { data, width, height, release: this.pool.releaser(data) };
    this.filled = 0;
    return used;
  }
}
