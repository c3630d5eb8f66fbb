/**
 * Fragmented MP4 as ffmpeg writes it with empty_moov+default_base_moof+frag_every_frame: an init
 * segment (ftyp, moov), then one moof+mdat pair per frame. The splitter cuts a byte stream into
 * those pieces and says which fragments start with a keyframe (a player can join there). Only box
 * headers and the few fields that carry sample flags are read.
 */

export interface Fragment {
  bytes: Buffer;
  keyframe: boolean;
}

/** Largest box accepted: a frame of a 4K stream at a generous bitrate. */
/**
 * The fragmented MP4 output of an encoder as one output of ffmpeg's tee muxer, on fd 3: an init
 * segment first, then a moof+mdat per frame, each decodable from its own moof.
 */
export const FMP4_TEE_OUTPUT = '[f=mp4:movflags=empty_moov+default_base_moof+frag_every_frame]pipe:3';

const MAX_BOX_BYTES = 16 * 1024 * 1024;

/** Children of a container box (its payload from `start` to `end`): type and payload range. */
function* boxes(
  data: Buffer,
  start: number,
  end: number,
): Generator<{ type: string; from: number; to: number }> {
  let at = start;
  while (at + 8 <= end) {
    const size = data.readUInt32BE(at);
    if (size < 8 || at + size > end) return;
    yield { type: data.toString('latin1', at + 4, at + 8), from: at + 8, to: at + size };
    at += size;
  }
}

/** ISO BMFF sample_is_non_sync_sample, in a 32-bit sample_flags value. */
const NON_SYNC = 0x10000;

/** Whether a moof's first sample is a sync sample (keyframe), from its trun or tfhd flags. */
export function startsWithKeyframe(moof: Buffer): boolean {
  for (const traf of boxes(moof, 8, moof.length)) {
    if (traf.type !== 'traf') continue;
    let defaultFlags: number | null = null;
    for (const box of boxes(moof, traf.from, traf.to)) {
      const flags = moof.readUInt32BE(box.from) & 0xffffff;
      if (box.type === 'tfhd') {
        // track_ID, then optional fields in order; default_sample_flags is the last of them.
        let at = box.from + 8;
        if (flags & 0x1) at += 8;
        if (flags & 0x2) at += 4;
        if (flags & 0x8) at += 4;
        if (flags & 0x10) at += 4;
        if (flags & 0x20) defaultFlags = moof.readUInt32BE(at);
      } else if (box.type === 'trun') {
        let at = box.from + 8;
        if (flags & 0x1) at += 4;
        if (flags & 0x4) return (moof.readUInt32BE(at) & NON_SYNC) === 0;
        if (flags & 0x400) {
          // Per-sample fields before the flags: duration, size.
          if (flags & 0x100) at += 4;
          if (flags & 0x200) at += 4;
          return (moof.readUInt32BE(at) & NON_SYNC) === 0;
        }
        return defaultFlags !== null && (defaultFlags & NON_SYNC) === 0;
      }
    }
  }
  return false;
}

export class Fmp4Splitter {
  private pending: Buffer = Buffer.alloc(0);
  private initParts: Buffer[] = [];
  private moof: Buffer | null = null;
  init: Buffer | null = null;

  constructor(
    private readonly onInit: (init: Buffer) => void,
    private readonly onFragment: (fragment: Fragment) => void,
  ) {}

  /** Bytes from the encoder; a stream that breaks the format throws (the caller restarts it). */
  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(0);
      if (size < 8 || size > MAX_BOX_BYTES) throw new Error(`fragmented MP4: a box of ${size} bytes`);
      if (this.pending.length < size) return;
      const box = this.pending.subarray(0, size);
      this.pending = this.pending.subarray(size);
      this.take(box.toString('latin1', 4, 8), Buffer.from(box));
    }
  }

  /** A new encoder process starts a new stream: its init segment comes again. */
  reset(): void {
    this.pending = Buffer.alloc(0);
    this.initParts = [];
    this.moof = null;
  }

  private take(type: string, box: Buffer): void {
    if (type === 'ftyp') this.initParts = [box];
    else if (type === 'moov') {
      this.init = Buffer.concat([...this.initParts, box]);
      this.initParts = [];
      this.onInit(this.init);
    } else if (type === 'moof') this.moof = box;
    else if (type === 'mdat' && this.moof) {
      this.onFragment({ bytes: Buffer.concat([this.moof, box]), keyframe: startsWithKeyframe(this.moof) });
      this.moof = null;
    }
  }
}
