import { decode as decodeBmp } from 'bmp-ts';
import { describe, expect, it } from 'vitest';
import { decodeImage, inspectImage } from '../engine/images/decode';

/** A BMP of the given size and bit depth (1, 8 or 24) with a grey palette and a pattern of pixels. */
function bmpFile(width: number, height: number, bits: 1 | 8 | 24): Buffer {
  const rowBytes = Math.ceil((width * bits) / 32) * 4;
  const colours = bits <= 8 ? 2 ** bits : 0;
  const offset = 14 + 40 + colours * 4;
  const file = Buffer.alloc(offset + rowBytes * height);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(file.length, 2);
  file.writeUInt32LE(offset, 10);
  file.writeUInt32LE(40, 14);
  file.writeInt32LE(width, 18);
  file.writeInt32LE(height, 22);
  file.writeUInt16LE(1, 26);
  file.writeUInt16LE(bits, 28);
  file.writeUInt32LE(rowBytes * height, 34);
  for (let i = 0; i < colours; i++)
    file.writeUInt32LE(Math.round((i * 255) / (colours - 1)) * 0x010101, 54 + i * 4);
  for (let i = offset; i < file.length; i += 7) file[i] = (i * 31) & 255;
  return file;
}

describe('BMP uploads', () => {
  it('decode to the pixels bmp-ts gives, as packed RGB', async () => {
    for (const bits of [1, 8, 24] as const) {
      const file = bmpFile(37, 23, bits);
      const frame = await decodeImage(await inspectImage(file, 'body.image'), { enhance: false });
      const rgba = decodeBmp(file, { toRGBA: true });
      const rgb = new Uint8Array(37 * 23 * 3);
      for (let p = 0; p < 37 * 23; p++) rgb.set(rgba.data.subarray(p * 4, p * 4 + 3), p * 3);
      expect({ bits, width: frame.width, height: frame.height }).toEqual({ bits, width: 37, height: 23 });
      expect(Buffer.from(frame.data).equals(Buffer.from(rgb)), `${bits}-bit pixels`).toBe(true);
    }
  });

  it('are decoded off the event loop: a 100-megapixel 1-bit file (12 MB) does not stall it', async () => {
    const file = bmpFile(10_000, 10_000, 1);
    const image = await inspectImage(file, 'body.image');
    // bmp-ts takes about a second for this file on the engine's thread; the loop must keep turning.
    let last = performance.now();
    let longest = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 10);
    const frame = await decodeImage(image, { enhance: false });
    clearInterval(ticker);
    expect(frame.data.length).toBe(10_000 * 10_000 * 3);
    expect(longest, 'longest event-loop stall, ms').toBeLessThan(300);
  });

  it('that are broken are refused as invalid images, and the decoder goes on', async () => {
    const broken = bmpFile(64, 64, 24).subarray(0, 40);
    const image = { bytes: broken, field: 'body.image', format: 'bmp' as const, width: 64, height: 64 };
    await expect(decodeImage(image, { enhance: false })).rejects.toMatchObject({ kind: 'image.invalid' });
    const frame = await decodeImage(await inspectImage(bmpFile(8, 8, 8), 'body.image'), { enhance: false });
    expect(frame.width).toBe(8);
  });
});
