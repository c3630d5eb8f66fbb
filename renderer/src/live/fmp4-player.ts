/**
 * Plays the engine's fragmented MP4 from a WebSocket through Media Source Extensions, kept at the
 * live edge: a frame shows as soon as it is decoded, never behind a playlist and segments. The
 * socket gives an init segment, then a fragment per frame from a keyframe on (engine/live/fmp4*).
 */

/** Behind the newest frame by more than this, playback jumps to it. */
const MAX_LATENCY_S = 0.3;
/** Where a jump lands, behind the newest frame (a little room against a stall). */
const JUMP_BEHIND_S = 0.05;
/** Decoded video kept behind playback; older is removed so memory stays flat. */
const KEEP_BEHIND_S = 10;

export type PlayerState = 'connecting' | 'playing' | 'closed';

/** The close code of a socket whose stream the engine does not have (ended, or the engine restarted). */
export const STREAM_GONE = 4404;

/** The codec string of an H.264 init segment (avc1.PPCCLL from its avcC box), or null. */
export function codecOf(init: Uint8Array): string | null {
  for (let i = 4; i + 8 < init.length; i++) {
    // 'avcC', then configurationVersion, profile, compatibility, level.
    if (init[i] === 0x61 && init[i + 1] === 0x76 && init[i + 2] === 0x63 && init[i + 3] === 0x43) {
      const hex = (n: number | undefined) => (n ?? 0).toString(16).padStart(2, '0');
      return `avc1.${hex(init[i + 5])}${hex(init[i + 6])}${hex(init[i + 7])}`;
    }
  }
  return null;
}

/** Where playback should be, given what is buffered: null to stay. */
export function liveEdgeSeek(currentTime: number, bufferedEnd: number): number | null {
  return bufferedEnd - currentTime > MAX_LATENCY_S ? Math.max(0, bufferedEnd - JUMP_BEHIND_S) : null;
}

export class Fmp4Player {
  private readonly source = new MediaSource();
  private buffer: SourceBuffer | null = null;
  private readonly queue: ArrayBuffer[] = [];
  private socket: WebSocket | null = null;
  private closed = false;

  constructor(
    private readonly video: HTMLVideoElement,
    private readonly url: string,
    private readonly onState: (state: PlayerState, detail?: string, code?: number) => void,
  ) {}

  static supported(): boolean {
    return typeof MediaSource !== 'undefined' && typeof WebSocket !== 'undefined';
  }

  start(): void {
    this.onState('connecting');
    this.video.src = URL.createObjectURL(this.source);
    this.source.addEventListener('sourceopen', () => this.connect(), { once: true });
  }

  stop(): void {
    this.closed = true;
    this.socket?.close();
    URL.revokeObjectURL(this.video.src);
    this.video.removeAttribute('src');
    this.video.load();
  }

  private connect(): void {
    const socket = new WebSocket(this.url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.onmessage = (event) => this.receive(event.data as ArrayBuffer);
    socket.onclose = (event) => {
      if (!this.closed) this.onState('closed', event.reason || `socket closed (${event.code})`, event.code);
    };
  }

  private receive(data: ArrayBuffer): void {
    if (!this.buffer) {
      const codec = codecOf(new Uint8Array(data));
      const type = `video/mp4; codecs="${codec ?? 'avc1.42e01e'}"`;
      if (!MediaSource.isTypeSupported(type)) {
        this.onState('closed', `this browser cannot play ${type}`);
        this.socket?.close();
        return;
      }
      this.buffer = this.source.addSourceBuffer(type);
      this.buffer.mode = 'segments';
      this.buffer.addEventListener('updateend', () => this.afterUpdate());
    }
    this.queue.push(data);
    this.pump();
  }

  /**
   * Starts the buffer's next operation, when it has none under way: a due trim first, else the next
   * fragment. The one place that calls remove() or appendBuffer(): both throw while the buffer is
   * updating, and a fragment received between an update's end and its updateend event has started
   * another update by the time that event is handled.
   */
  private pump(): void {
    const buffer = this.buffer;
    if (!buffer || buffer.updating || this.closed) return;
    const { buffered } = buffer;
    if (buffered.length > 0) {
      const start = buffered.start(0);
      if (this.video.currentTime - start > KEEP_BEHIND_S) {
        buffer.remove(start, this.video.currentTime - KEEP_BEHIND_S / 2);
        return;
      }
    }
    const next = this.queue.shift();
    if (next) buffer.appendBuffer(next);
  }

  private afterUpdate(): void {
    const buffer = this.buffer;
    if (!buffer || this.closed) return;
    const { buffered } = buffer;
    if (buffered.length > 0) {
      const seek = liveEdgeSeek(this.video.currentTime, buffered.end(buffered.length - 1));
      if (seek !== null) this.video.currentTime = seek;
      if (this.video.paused) {
        this.video.play().then(
          () => this.onState('playing'),
          () => {
            // A muted video may play; a refused play() leaves the controls to the operator.
          },
        );
      }
    }
    this.pump();
  }
}
