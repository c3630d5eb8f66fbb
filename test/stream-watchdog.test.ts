import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import { FramePool } from '../engine/media/frame-pool';
import type { SourceInfo } from '../engine/media/frame-source';
import type { SourceUrl } from '../engine/media/source-url';
import { StreamWatchdog, type WatchdogState } from '../engine/media/stream-watchdog';
import { FakeSource } from './helpers/fake-source';

const INFO: SourceInfo = { width: 4, height: 2, fps: 10, source: { width: 4, height: 2 } };
const RTSP: SourceUrl = { kind: 'rtsp', input: 'rtsp://cam/1' };

/** Lets the promise callbacks queued so far run (a stop() awaited inside the watchdog). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A watchdog on fake sources with every timer on one ManualClock: what it does at each moment is
 * decided by the clock and by what the test makes the sources do, never by real time.
 */
function watched(source: SourceUrl = RTSP, options: { connectTimeoutMs?: number } = {}) {
  const clock = new ManualClock(0);
  /** The engine's event-loop lateness as the watchdog reads it: moved by the test. */
  const lag = { ms: 0 };
  const sources: FakeSource[] = [];
  /** Clock time at which each source was made: the waits between tries. */
  const openedAt: number[] = [];
  const watchdog = new StreamWatchdog(source, {
    clock,
    streamClock: clock,
    backoffFirstMs: 1_000,
    backoffMaxMs: 8_000,
    connectTimeoutMs: options.connectTimeoutMs,
    loopLag: { stolenMs: () => lag.ms },
    framePool: new FramePool(1024 * 1024),
    createSource: (_url, transport, mode) => {
      const created = new FakeSource(INFO, transport, mode);
      sources.push(created);
      openedAt.push(clock.now());
      return created;
    },
  });
  const states: WatchdogState[] = [];
  const frames: { synthetic: boolean; index: number }[] = [];
  const lost: string[] = [];
  watchdog.on('state', (state) => states.push(state));
  watchdog.on('frame', ({ synthetic, index }) => frames.push({ synthetic, index }));
  watchdog.on('lost', ({ reason }) => lost.push(reason));
  const latest = () => sources.at(-1) as FakeSource;
  return { clock, lag, watchdog, sources, openedAt, states, frames, lost, latest };
}

/** A watchdog that is running: started and given its first frame. */
async function running(source?: SourceUrl) {
  const w = watched(source);
  const started = w.watchdog.start(5_000);
  w.latest().frame();
  expect(await started).toEqual(INFO);
  return w;
}

describe('StreamWatchdog on a ManualClock', () => {
  it('rejects start() when no frame comes within its timeout, and leaves nothing running', async () => {
    const w = watched();
    const started = w.watchdog.start(2_000).catch((error: Error) => error.message);
    w.clock.advance(1_999);
    expect(w.watchdog.state).toBe('connecting');
    w.clock.advance(1);
    expect(await started).toBe('no video frame within 2 s');
    expect([w.watchdog.state, w.sources.map((s) => s.stopped), w.clock.pending]).toEqual([
      'closed',
      [true],
      0,
    ]);
  });

  it('retries a network source that refuses every 500 ms of the clock, switching RTSP transport', async () => {
    const w = watched();
    const started = w.watchdog.start(2_000).catch((error: Error) => error.message);
    for (let attempt = 0; attempt < 4; attempt++) {
      w.latest().fail('Connection refused');
      w.clock.advance(500);
    }
    w.clock.advance(1_000);
    expect(await started).toBe('no video frame within 2 s: Connection refused');
    // The retry due at 2 s falls with the pull timeout, armed first: none is made then.
    expect(w.openedAt).toEqual([0, 500, 1_000, 1_500]);
    expect(w.sources.map((s) => s.transport)).toEqual(['tcp', 'udp', 'tcp', 'udp']);
    expect(w.clock.pending).toBe(0);
  });

  it('declares a silent stream stalled after its window, on the clock', async () => {
    const w = await running();
    // 10 frames at 10 fps is 1 s, under the 3 s minimum: the window is 3 s of silence.
    w.clock.advance(2_000);
    w.latest().frame();
    w.clock.advance(2_999);
    expect([w.watchdog.state, w.lost]).toEqual(['running', []]);
    w.clock.advance(1);
    expect([w.watchdog.state, w.lost]).toEqual(['stalled', ['no frame for 3 s']]);
    expect(w.sources[0]?.stopped).toBe(true);
    await settle();
    expect(w.states).toEqual(['connecting', 'running', 'stalled', 'reconnecting']);
  });

  it('puts a silence down to the engine’s own lateness: overloaded, not stalled, while a silent source still is', async () => {
    const w = await running();
    expect(w.watchdog.overload).toBeNull();
    // 3 s without a frame, 2.5 s of them with the engine's loop behind: it could not have read one.
    w.lag.ms += 2_500;
    w.clock.advance(3_000);
    expect([w.watchdog.state, w.lost, w.sources.length]).toEqual(['running', [], 1]);
    expect(w.watchdog.overload).toBe("no frame for 3.0 s while the engine's event loop was 2.5 s behind");
    // The frames that waited in the pipe come; the stream goes on as before, overloaded for 10 s
    // after the last excused silence.
    w.latest().frame();
    for (let i = 0; i < 4; i++) {
      expect(w.watchdog.overload).not.toBeNull();
      w.clock.advance(2_900);
      w.latest().frame();
    }
    expect([w.watchdog.state, w.lost, w.watchdog.overload]).toEqual(['running', [], null]);
    // A silence the engine was there for is a stall, as ever.
    w.clock.advance(3_000);
    expect([w.watchdog.state, w.lost]).toEqual(['stalled', ['no frame for 3 s']]);
    expect(w.sources[0]?.stopped).toBe(true);
  });

  it('reconnects after 1, 2, 4, 8, 8 s of failed tries and starts from 1 s again once healthy', async () => {
    const w = await running();
    const failedAt = [w.clock.now()];
    w.latest().fail('EOF');
    expect([w.watchdog.state, w.lost]).toEqual(['reconnecting', ['EOF']]);
    for (let failed = 0; failed < 5; failed++) {
      w.clock.advance(8_000);
      failedAt.push(w.clock.now());
      w.latest().fail('Connection refused');
    }
    const waits = w.openedAt.slice(1).map((at, i) => at - (failedAt[i] as number));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(w.watchdog.lastError).toBe('Connection refused');

    w.clock.advance(8_000);
    w.latest().frame();
    expect([w.watchdog.state, w.watchdog.reconnects]).toEqual(['running', 1]);
    w.latest().fail('EOF');
    const lostAgainAt = w.clock.now();
    w.clock.advance(1_000);
    expect(w.openedAt.at(-1) as number).toBe(lostAgainAt + 1_000);
  });

  it('fills the loss with black frames at the stream rate until a real frame is back', async () => {
    const w = await running();
    w.latest().fail('EOF');
    w.clock.advance(1_000);
    const black = w.frames.filter((frame) => frame.synthetic);
    expect(black.length).toBe(10);
    expect(w.frames.map((frame) => frame.index)).toEqual(w.frames.map((_, i) => i));

    // The reconnect made a source at 1 s; its first frame ends the filling.
    w.latest().frame();
    const before = w.frames.length;
    w.clock.advance(2_000);
    expect(w.frames.length).toBe(before);
    expect(w.frames.at(-1)?.synthetic).toBe(false);
  });

  it('gives up a reconnect attempt that says nothing within the connect timeout', async () => {
    const w = watched(RTSP, { connectTimeoutMs: 4_000 });
    const started = w.watchdog.start(5_000);
    w.latest().frame();
    await started;
    w.latest().fail('EOF');
    w.clock.advance(1_000);
    const attempt = w.latest();
    w.clock.advance(3_999);
    expect([w.watchdog.state, attempt.stopped]).toEqual(['connecting', false]);
    w.clock.advance(1);
    expect([w.watchdog.state, attempt.stopped, w.watchdog.lastError]).toEqual([
      'stalled',
      true,
      'no video frame within 4 s',
    ]);
    await settle();
    expect(w.watchdog.state).toBe('reconnecting');
  });

  it('closes from reconnecting with no timer left on the clock', async () => {
    const w = await running();
    w.latest().fail('EOF');
    await w.watchdog.close();
    expect([w.watchdog.state, w.clock.pending]).toEqual(['closed', 0]);
    w.clock.advance(60_000);
    expect(w.sources.length).toBe(1);
  });
});
