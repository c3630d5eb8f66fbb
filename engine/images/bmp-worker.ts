import { parentPort } from 'node:worker_threads';
import { decode } from 'bmp-ts';
import type { BmpReply, BmpRequest } from './bmp-decoder';

/**
 * The BMP decoder's thread: bmp-ts is JavaScript and takes about 90 ms per 10 megapixels, which
 * must not stall the engine's event loop (streams, API, timers).
 */
const port = parentPort;
if (!port) throw new Error('the BMP decoder must run in a worker thread');

port.on('message', ({ id, bytes }: BmpRequest) => {
  let reply: BmpReply;
  try {
    const image = decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { toRGBA: true });
    // A view into a larger buffer cannot be handed over alone: it is copied once.
    const whole = image.data.byteOffset === 0 && image.data.byteLength === image.data.buffer.byteLength;
    const data = whole ? image.data : new Uint8Array(image.data);
    reply = { id, width: image.width, height: image.height, data };
  } catch (error) {
    reply = { id, error: String((error as Error).message ?? error) };
  }
  port.postMessage(reply, 'data' in reply ? [reply.data.buffer as ArrayBuffer] : []);
});
