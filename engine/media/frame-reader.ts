import type { Frame } from '../inference/types';

// "P6 <w> <h> <maxval>" and the single whitespace byte that ends a binary PPM header.
const HEADER = /^P6\s+(\d+)\s+(\d+)\s+(\d+)\s/;
// A header longer than this is not one ffmpeg wrote: the stream is corrupt.
const MAX_HEADER_BYTES = 64;
const MAX_SIDE = 16384;

/**
 * Splits ffmpeg's `-f image2pipe -c:v ppm -pix_fmt rgb24` output into frames. Chunks may end
 * anywhere, even inside a header, and each frame may have its own size. Pixels are copied once,
 * from the chunk into a buffer that belongs to that frame alone (frames are transferred to
 * worker threads, which detaches their buffers).
 */
export class PpmFrameReader {
  private header = '';
  private frame: Frame | null = null;
  private filled = 0;

  /** Consumes a chunk and returns the frames it completed, in order. Throws on a corrupt stream. */
  push(chunk: Uint8Array): Frame[] {
    const frames: Frame[] = [];
    let offset = 0;
    while (offset < chunk.length) {
      if (!this.frame) {
        offset += this.readHeader(chunk, offset);
        continue;
      }
      const count = Math.min(this.frame.data.length - this.filled, chunk.length - offset);
      this.frame.data.set(chunk.subarray(offset, offset + count), this.filled);
      this.filled += count;
      offset += count;
      if (this.filled === this.frame.data.length) {
        frames.push(this.frame);
        this.frame = null;
      }
    }
    return frames;
  }

  /** Reads header bytes from chunk at offset; returns how many it used. */
  private readHeader(chunk: Uint8Array, offset: number): number {
    const available = Math.min(chunk.length - offset, MAX_HEADER_BYTES - this.header.length);
    const text =
      this.header + Buffer.from(chunk.buffer, chunk.byteOffset + offset, available).toString('latin1');
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
    const used = match[0].length - this.header.length;
    this.header = '';
    this.frame = { data: new Uint8Array(width * height * 3), width, height };
    this.filled = 0;
    return used;
  }
}
