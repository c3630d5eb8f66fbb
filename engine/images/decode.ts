import sharp, { type Sharp } from 'sharp';
import type { Frame } from '../vision/types';
import { BmpDecoder } from './bmp-decoder';
import { imageError } from './image-error';

/** Decoded size limit of one image: 100 megapixels (a decompression bomb is refused from its header). */
export const MAX_IMAGE_PIXELS = 100_000_000;

export type ImageFormat = 'jpeg' | 'png' | 'bmp' | 'webp';

/** An uploaded image as its header describes it, before any pixel is decoded. */
export interface EncodedImage {
  bytes: Buffer;
  /** The part it came in, for error messages ("body.image"). */
  field: string;
  format: ImageFormat;
  width: number;
  height: number;
}

export interface DecodeOptions {
  /** Brighten and stretch a dark or flat image before analysis (query enhance=1). */
  enhance: boolean;
}

/** The format by its first bytes, whatever the Content-Type claimed; null when it is none of the four. */
export function sniffFormat(bytes: Buffer): ImageFormat | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 2 && bytes.toString('latin1', 0, 2) === 'BM') return 'bmp';
  if (
    bytes.length >= 12 &&
    bytes.toString('latin1', 0, 4) === 'RIFF' &&
    bytes.toString('latin1', 8, 12) === 'WEBP'
  )
    return 'webp';
  return null;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * An upload's format and size from its first bytes and header, nothing decoded: refuses, with the
 * engine's error codes, anything that is not a JPEG, PNG, BMP or WebP of at most 100 megapixels.
 * `field` names the part in error messages ("body.image").
 */
export async function inspectImage(bytes: Buffer, field: string): Promise<EncodedImage> {
  const format = sniffFormat(bytes);
  if (format === null) {
    throw imageError('image.unsupported_type', `${field}: is not a JPEG, PNG, BMP or WebP image`, field);
  }
  const { width, height } = format === 'bmp' ? bmpSize(bytes, field) : await headerSize(bytes, format, field);
  if (width * height > MAX_IMAGE_PIXELS) {
    throw imageError(
      'image.too_large',
      `${field}: the image is ${width}x${height} (${((width * height) / 1e6).toFixed(1)} megapixels); at most 100 megapixels are accepted`,
      field,
    );
  }
  return { bytes, field, format, width, height };
}

/**
 * An inspected image as packed RGB: upright (EXIF orientation applied), first page only for animated
 * or multi-page files, transparency flattened onto black. Refuses (400) one that is not a whole image.
 */
export async function decodeImage(
  { bytes, field, format }: EncodedImage,
  options: DecodeOptions,
): Promise<Frame> {
  try {
    let pipeline =
      format === 'bmp'
        ? await bmpPipeline(bytes)
        : sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: 'warning' }).autoOrient().flatten();
    if (options.enhance) pipeline = enhance(pipeline);
    const { data, info } = await pipeline
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    return {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      width: info.width,
      height: info.height,
    };
  } catch (error) {
    throw invalid(field, format, error);
  }
}

/**
 * Low-light and low-contrast help: a light blur first, so that stretching does not turn sensor noise
 * into texture the model takes for detail, then the 1st to 99th luminance percentiles stretched to
 * the full range.
 */
function enhance(pipeline: Sharp): Sharp {
  return pipeline.blur(1).normalise({ lower: 1, upper: 99 });
}

async function headerSize(bytes: Buffer, format: ImageFormat, field: string) {
  try {
    const { width, height } = await sharp(bytes, { limitInputPixels: false }).metadata();
    return { width, height };
  } catch (error) {
    throw invalid(field, format, error);
  }
}

/** BITMAPINFOHEADER width and height (a negative height is a top-down bitmap). */
function bmpSize(bytes: Buffer, field: string) {
  if (bytes.length < 26) throw invalid(field, 'bmp', new Error('the header is cut short'));
  return { width: Math.abs(bytes.readInt32LE(18)), height: Math.abs(bytes.readInt32LE(22)) };
}

const bmpDecoder = new BmpDecoder();

/** sharp reads no BMP: bmp-ts decodes it (all bit depths, RLE) to RGBA, whose alpha BMP writers rarely fill. */
async function bmpPipeline(bytes: Buffer): Promise<Sharp> {
  const image = await bmpDecoder.decode(bytes);
  return sharp(image.data, { raw: { width: image.width, height: image.height, channels: 4 } }).removeAlpha();
}

function invalid(field: string, format: ImageFormat, error: unknown) {
  const reason = String((error as Error).message ?? error).split('\n')[0];
  return imageError(
    'image.invalid',
    `${field}: the ${format.toUpperCase()} image cannot be decoded (${reason})`,
    field,
  );
}
