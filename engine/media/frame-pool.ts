/**
 * Recycles the pixel buffers of video frames. A 768x576 stream at 40 fps would otherwise allocate
 * 50 MB/s of fresh buffers, and V8 answers that much external memory with a full mark-compact of
 * the main heap many times a second. A frame sent to an inference host is copied to it straight
 * from its buffer, which stays the pipeline's.
 *
 * Ownership: whoever took a frame's buffer (the task's pipeline) gives it back once it is done
 * with it; anyone else may read a frame only during the event that hands it over, and copies what
 * it keeps. A buffer that is never given back is simply garbage collected.
 */
export class FramePool {
  private readonly free = new Map<number, Uint8Array[]>();
  private idleBytes = 0;

  /**
   * @param maxIdleBytes most bytes of idle buffers kept for reuse; more are left to the garbage
   * collector. One pool serves every stream, so a reconnect or a new task reuses what a closed one
   * left instead of adding to the process's memory.
   */
  constructor(private readonly maxIdleBytes: number) {}

  take(byteLength: number): Uint8Array {
    const buffer = this.free.get(byteLength)?.pop();
    if (!buffer) return new Uint8Array(new SharedArrayBuffer(byteLength));
    this.idleBytes -= byteLength;
    return buffer;
  }

  /** The release of one frame: gives its buffer back once, however often it is called. */
  releaser(buffer: Uint8Array): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.idleBytes + buffer.byteLength > this.maxIdleBytes) return;
      this.idleBytes += buffer.byteLength;
      const list = this.free.get(buffer.byteLength);
      if (list) list.push(buffer);
      else this.free.set(buffer.byteLength, [buffer]);
    };
  }
}

/** The engine's pool: room for about 24 idle 768x576 frames, or 5 of 1920x1080. */
export const framePool = new FramePool(32 * 1024 * 1024);
