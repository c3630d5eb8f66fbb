import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Fmp4Player } from '../renderer/src/live/fmp4-player';

/**
 * The live player trims old video behind playback with SourceBuffer.remove(), which throws (as
 * appendBuffer does) while the buffer is updating. A stand-in for the browser's Media Source
 * Extensions, which Node has not: the buffer keeps the browser's rules (an update ends, then its
 * updateend event fires as a task of its own, so a fragment can arrive and start another update in
 * between) and throws as Chromium does. The browser test (console-live-video) plays the real thing.
 */

class FakeBuffer extends EventTarget {
  mode = 'segments';
  updating = false;
  /** Seconds of video buffered: [0, end). Each fragment adds one second. */
  start = 0;
  end = 0;
  readonly calls: string[] = [];
  readonly buffered = {
    get length() {
      return 1;
    },
    start: () => this.start,
    end: () => this.end,
  };

  appendBuffer(_data: ArrayBuffer): void {
    this.begin('append');
    this.finishSoon(() => {
      this.end += 1;
    });
  }

  remove(start: number, end: number): void {
    this.begin(`remove ${start}-${end}`);
    this.finishSoon(() => {
      this.start = end;
    });
  }

  private begin(call: string): void {
    if (this.updating)
      throw new DOMException(
        `Failed to execute '${call.split(' ')[0]}' on 'SourceBuffer': This SourceBuffer is still processing an 'appendBuffer' or 'remove' operation.`,
        'InvalidStateError',
      );
    this.calls.push(call);
    this.updating = true;
  }

  /** The update ends in one task; its updateend event fires in a later one. */
  private finishSoon(apply: () => void): void {
    setTimeout(() => {
      apply();
      this.updating = false;
      setTimeout(() => this.dispatchEvent(new Event('updateend')), 0);
    }, 0);
  }
}

let buffer: FakeBuffer;
let socket: FakeSocket;

class FakeMediaSource extends EventTarget {
  static isTypeSupported = () => true;
  addSourceBuffer(): FakeBuffer {
    return buffer;
  }
}

class FakeSocket {
  binaryType = '';
  onmessage: ((event: { data: ArrayBuffer }) => void) | null = null;
  onclose: (() => void) | null = null;
  constructor(readonly url: string) {
    socket = this;
  }
  close(): void {}
}

const globals = globalThis as Record<string, unknown>;
const saved = { MediaSource: globals.MediaSource, WebSocket: globals.WebSocket };

beforeEach(() => {
  buffer = new FakeBuffer();
  globals.MediaSource = FakeMediaSource;
  globals.WebSocket = FakeSocket;
});

afterEach(() => {
  globals.MediaSource = saved.MediaSource;
  globals.WebSocket = saved.WebSocket;
});

/** A video element that plays along: playback stays at the live edge the player seeks to. */
function fakeVideo() {
  return {
    currentTime: 0,
    paused: false,
    src: '',
    play: async () => undefined,
    removeAttribute: () => undefined,
    load: () => undefined,
  } as unknown as HTMLVideoElement;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the live player trimming its buffer', () => {
  it('never calls remove() or appendBuffer() while the buffer updates, and trims behind playback', async () => {
    const errors: unknown[] = [];
    const onError = (error: unknown) => errors.push(error);
    process.on('uncaughtException', onError);
    try {
      const video = fakeVideo();
      const player = new Fmp4Player(video, 'ws://engine/live', () => undefined);
      // start() asks for an object URL of the MediaSource; connect as 'sourceopen' would.
      (player as unknown as { connect(): void }).connect();
      // 40 one-second fragments, each arriving in the task between an update's end and its updateend.
      for (let i = 0; i < 40; i++) {
        socket.onmessage?.({ data: new ArrayBuffer(8) });
        await tick();
      }
      for (let i = 0; i < 20; i++) await tick();
      player.stop();
      expect(errors).toEqual([]);
      // Every fragment went in, and video more than 10 s behind playback was removed.
      expect(buffer.calls.filter((call) => call === 'append')).toHaveLength(40);
      expect(buffer.calls.some((call) => call.startsWith('remove'))).toBe(true);
      expect(buffer.end).toBe(40);
      expect(video.currentTime - buffer.start).toBeLessThanOrEqual(10);
    } finally {
      process.off('uncaughtException', onError);
    }
  });
});
