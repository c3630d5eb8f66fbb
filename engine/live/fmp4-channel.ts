/**
 * An AI video's low-latency viewers: each gets the init segment, then fragments from the next
 * keyframe on. A viewer whose socket falls behind (more than MAX_BEHIND_BYTES unsent) skips to the
 * next keyframe instead of queueing: it never holds memory, and never slows the encoder or others.
 */
import { Fmp4Splitter, type Fragment } from './fmp4';

/** What the channel needs of a viewer's socket (a ws WebSocket fits). */
export interface FragmentSink {
  send(data: Buffer): void;
  readonly bufferedAmount: number;
}

/** Unsent bytes a viewer may have before it skips to the next keyframe (about 2 s at 2 Mbit/s). */
const MAX_BEHIND_BYTES = 512 * 1024;
/** Low-latency viewers one AI video serves at once. */
export const MAX_FRAGMENT_VIEWERS = 16;

interface Viewer {
  sink: FragmentSink;
  /** Waits for a keyframe: just joined, fell behind, or the encoder restarted. */
  waiting: boolean;
  /** The init segment it has; a restarted encoder's new one is sent before its first keyframe. */
  init: Buffer | null;
}

export class Fmp4Channel {
  private readonly viewers = new Set<Viewer>();
  private init: Buffer | null = null;
  skipped = 0;

  get size(): number {
    return this.viewers.size;
  }

  /** Adds a viewer; null when the channel is full. The returned function removes it. */
  join(sink: FragmentSink): (() => void) | null {
    if (this.viewers.size >= MAX_FRAGMENT_VIEWERS) return null;
    const viewer: Viewer = { sink, waiting: true, init: null };
    this.viewers.add(viewer);
    return () => this.viewers.delete(viewer);
  }

  setInit(init: Buffer): void {
    this.init = init;
    for (const viewer of this.viewers) viewer.waiting = true;
  }

  push(fragment: Fragment): void {
    const init = this.init;
    if (!init) return;
    for (const viewer of this.viewers) {
      if (viewer.sink.bufferedAmount > MAX_BEHIND_BYTES) {
        viewer.waiting = true;
        this.skipped += 1;
        continue;
      }
      if (viewer.waiting) {
        if (!fragment.keyframe) continue;
        if (viewer.init !== init) {
          viewer.sink.send(init);
          viewer.init = init;
        }
        viewer.waiting = false;
      }
      viewer.sink.send(fragment.bytes);
    }
  }
}

/**
 * An encoder's fragmented MP4 bytes split into a channel's init segment and fragments: write() each
 * chunk, restart() when a new encoder process begins. A stream that breaks the format is dropped
 * until the encoder's restart starts a clean one. `onFragment` hears every fragment too.
 */
export function channelFeed(channel: Fmp4Channel, onFragment?: (fragment: Fragment) => void) {
  const splitter = new Fmp4Splitter(
    (init) => channel.setInit(init),
    (fragment) => {
      channel.push(fragment);
      onFragment?.(fragment);
    },
  );
  return {
    write(chunk: Buffer): void {
      try {
        splitter.push(chunk);
      } catch {
        splitter.reset();
      }
    },
    restart: () => splitter.reset(),
  };
}
