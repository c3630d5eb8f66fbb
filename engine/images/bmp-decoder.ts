import { ThreadCalls } from '../worker-thread';

export interface BmpRequest {
  id: number;
  bytes: Uint8Array;
}

export type BmpReply =
  | { id: number; width: number; height: number; data: Uint8Array }
  | { id: number; error: string };

export interface RgbaImage {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  data: Uint8Array;
}

/**
 * Decodes BMP files on a thread of their own (sharp reads no BMP, and bmp-ts would hold the event
 * loop for up to a second on a 100 MP file). One thread, started with the first BMP and never
 * keeping the process alive; requests are answered in order. How many decode at once is bounded
 * by the caller's decode budget.
 */
export class BmpDecoder {
  private readonly thread = new ThreadCalls<Omit<BmpRequest, 'id'>, BmpReply, RgbaImage>(
    import.meta.url,
    'bmp-worker',
    'the BMP decoder',
    (reply) =>
      'error' in reply
        ? new Error(reply.error)
        : { width: reply.width, height: reply.height, data: reply.data },
  );

  decode(bytes: Uint8Array): Promise<RgbaImage> {
    return this.thread.call({ bytes });
  }
}
