import { parentPort } from 'node:worker_threads';
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

port.on('message', async ({ id, reference, current }: ChangeRequest) => {
  let reply: ChangeReply;
  try {
    reply = { id, regions: detectChanges(await loadOpenCv(), reference, current) };
  } catch (error) {
    reply = {
      id,
      error: String((error as Error).message ?? error),
      notRegistered: error instanceof NotRegisteredError,
    };
  }
  port.postMessage(reply);
});
