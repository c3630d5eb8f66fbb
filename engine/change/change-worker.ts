import { parentPort } from 'node:worker_threads';
import { alignFrames } from './align';
import type { ChangeReply, ChangeRequest } from './change-thread';
import { detectChanges } from './detect';
import { loadOpenCv } from './opencv';
import { NotRegisteredError } from './register';

/**
 * The change detector's thread: registration (OpenCV's WebAssembly build) and the change map take
 * tens to hundreds of milliseconds a pair, which must not stall the engine's event loop. OpenCV is
 * loaded here, once, with the first pair (it also hooks the process's uncaught-error events, which
 * in a worker are the thread's own).
 */
const port = parentPort;
if (!port) throw new Error('the change detector must run in a worker thread');

port.on('message', async (request: ChangeRequest) => {
  const { id } = request;
  let reply: ChangeReply;
  try {
    const cv = await loadOpenCv();
    reply =
      request.kind === 'detect'
        ? { id, regions: detectChanges(cv, request.reference, request.current) }
        : { id, aligned: alignFrames(cv, request.reference, request.current) };
  } catch (error) {
    reply = {
      id,
      error: String((error as Error).message ?? error),
      notRegistered: error instanceof NotRegisteredError,
    };
  }
  // The aligned pixels are handed over, not copied.
  const transfer = 'aligned' in reply ? [reply.aligned.warped.buffer, reply.aligned.valid.buffer] : [];
  port.postMessage(reply, transfer as ArrayBuffer[]);
});
