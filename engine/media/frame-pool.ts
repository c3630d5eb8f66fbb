/**
 * Recycles the pixel buffers of one stream's frames. A 768x576 stream at 40 fps would otherwise
 * allocate 50 MB/s of fresh buffers, and V8 answers that much external memory with a full
 * mark-compact of the main heap many times a second. The buffers are shared memory, so a frame
 * sent to an inference thread is shared rather than transferred, and comes back the same buffer.
 *
 * Ownership: whoever took a frame's buffer (the task's pipeline) gives it back once it is done
 * with it; anyone else may read a frame only during the event that hands it over, and copies what
 * it keeps. A buffer that is never given back is simply garbage collected.
 */
export class FramePool {
  private readonly free: Uint8Array[] = [];

  /** @param keep most idle buffers held for reuse; more are left to the garbage collector. */
  constructor(private readonly keep = 4) {}

  take(byteLength: number): Uint8Array {
    // Buffers of another size are from before a resolution change: they will not fit again.
    while (this.free.length > 0) {
      const buffer = this.free.pop() as Uint8Array;
      if (buffer.byteLength === byteLength) return buffer;
    }
    return new Uint8Array(new SharedArrayBuffer(byteLength));
  }

  /** The release of one frame: gives its buffer back once, however often it is called. */
  releaser(buffer: Uint8Array): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.free.length < this.keep) this.free.push(buffer);
    };
  }

  get idle(): number {
    return this.free.length;
  }
}
