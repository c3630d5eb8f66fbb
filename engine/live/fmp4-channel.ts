/**
 * An AI video's low-latency viewers: each gets the init segment, then fragments from a keyframe on:
 * a viewer that joins a running video gets, with the next fragment, those since the last keyframe
 * (its player jumps to the newest), so it shows a picture at once instead of up to a second later;
 * one that joins before any keyframe waits for the first. A viewer whose socket falls behind (more than MAX_BEHIND_BYTES unsent) skips to the
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
/**
 * Bytes of fragments since the last keyframe kept for a joining viewer (a 1 s group at 2 Mbit/s is
 * about 250 KiB); a longer group is not kept, and joiners wait for the next keyframe.
 */
const MAX_GROUP_BYTES = 1024 * 1024;
/** Low-latency viewers one AI video serves at once. */
export const MAX_FRAGMENT_VIEWERS = 16;

interface Viewer {
  sink: FragmentSink;
  /** Waits for a keyframe: just joined, fell behind, or the encoder restarted. */
  waiting: boolean;
  /** The init segment it has; a restarted encoder's new one is sent before its first keyframe. */
  init: Buffer | null;
  /** Just joined: may start from the group of pictures under way rather than wait for the next. */
  fresh: boolean;
}

export class Fmp4Channel {
  private readonly viewers = new Set<Viewer>();
  private init: Buffer | null = null;
  /** The fragments since the last keyframe, that keyframe first; empty when none or too long. */
  private group: Buffer[] = [];
  private groupBytes = 0;
  skipped = 0;

  get size(): number {
    return this.viewers.size;
  }

  /** Adds a viewer; null when the channel is full. The returned function removes it. */
  join(sink: FragmentSink): (() => void) | null {
    if (this.viewers.size >= MAX_FRAGMENT_VIEWERS) return null;
    const viewer: Viewer = { sink, waiting: true, init: null, fresh: true };
    this.viewers.add(viewer);
    return () => this.viewers.delete(viewer);
  }

  setInit(init: Buffer): void {
    this.init = init;
    this.group = [];
    this.groupBytes = 0;
    for (const viewer of this.viewers) viewer.waiting = true;
  }

  push(fragment: Fragment): void {
    const init = this.init;
    if (!init) return;
    this.keep(fragment);
    for (const viewer of this.viewers) {
      if (viewer.sink.bufferedAmount > MAX_BEHIND_BYTES) {
        viewer.waiting = true;
        viewer.fresh = false;
        this.skipped += 1;
        continue;
      }
      if (viewer.waiting && !fragment.keyframe && viewer.fresh && this.group.length > 0) {
        // The group ends with this fragment: the viewer is then at the live edge like the others.
        viewer.sink.send(init);
        viewer.init = init;
        for (const bytes of this.group) viewer.sink.send(bytes);
        viewer.waiting = false;
        viewer.fresh = false;
        continue;
      }
      if (viewer.waiting) {
        if (!fragment.keyframe) continue;
        viewer.fresh = false;
        if (viewer.init !== init) {
          viewer.sink.send(init);
          viewer.init = init;
        }
        viewer.waiting = false;
      }
      viewer.sink.send(fragment.bytes);
    }
  }

  private keep(fragment: Fragment): void {
    if (fragment.keyframe) {
      this.group = [fragment.bytes];
      this.groupBytes = fragment.bytes.length;
    } else if (this.group.length > 0) {
      this.groupBytes += fragment.bytes.length;
      if (this.groupBytes <= MAX_GROUP_BYTES) this.group.push(fragment.bytes);
      else this.group = [];
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
