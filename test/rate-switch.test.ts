import { describe, expect, it } from 'vitest';
import { ManualClock } from '../engine/clock';
import type { SourceInfo } from '../engine/media/frame-source';
import { RateSwitch } from '../engine/media/rate-switch';

interface Fake {
  name: string;
  info: SourceInfo | null;
  started: boolean;
  start(): void;
}
interface Frame {
  receivedAt: number;
}

/** A rate switch over named fake sources at 10 fps (a frame every 100 ms when live). */
function rateSwitch(openFails = '') {
  const clock = new ManualClock(0);
  const log: string[] = [];
  const opened: Fake[] = [];
  const rates = new RateSwitch<Fake, Frame>(
    { clock, timeoutMs: 5_000, timeoutReason: 'no video frame within 5 s' },
    {
      open: (fullRate, seekS) => {
        if (openFails) throw new Error(openFails);
        const source: Fake = {
          name: `${fullRate ? 'full' : 'capped'}@${seekS}`,
          info: { width: 4, height: 2, fps: 10, source: { width: 4, height: 2 } },
          started: false,
          start() {
            this.started = true;
          },
        };
        opened.push(source);
        return source;
      },
      takeOver: (source, fullRate, seekS, frame) =>
        log.push(`takeOver ${source.name} full=${fullRate} seek=${seekS} at=${frame.receivedAt}`),
      stopAside: (source) => log.push(`stop ${source.name}`),
    },
  );
  return { clock, log, opened, rates };
}

describe('RateSwitch', () => {
  it('takes over only once the candidate’s frames come in real time, not in its first burst', async () => {
    const { log, opened, rates } = rateSwitch();
    const done = rates.begin(true, 12.5);
    const candidate = opened[0] as Fake;
    expect(candidate.started).toBe(true);
    // Buffered frames, 10 ms apart: under half a frame interval (50 ms), so not live yet.
    for (const at of [1_000, 1_010, 1_020]) rates.onFrame(candidate, { receivedAt: at });
    expect(log).toEqual([]);
    rates.onFrame(candidate, { receivedAt: 1_080 });
    await done;
    expect([log, rates.failure, rates.underWay(true)]).toEqual([
      ['takeOver full@12.5 full=true seek=12.5 at=1080'],
      '',
      undefined,
    ]);
  });

  it('gives up a candidate that gives no frame within its timeout, and says why', async () => {
    const { clock, log, rates } = rateSwitch();
    const done = rates.begin(true, 0);
    clock.advance(4_999);
    expect(log).toEqual([]);
    clock.advance(1);
    await done;
    expect([log, rates.failure, clock.pending]).toEqual([['stop full@0'], 'no video frame within 5 s', 0]);
  });

  it('gives up a candidate whose ffmpeg exits (a source that takes one client), keeping that reason', async () => {
    const { log, opened, rates } = rateSwitch();
    const done = rates.begin(true, 0);
    const other: Fake = { name: 'running', info: null, started: true, start() {} };
    expect(rates.onExit(other, 'EOF')).toBe(false);
    expect(rates.onExit(opened[0] as Fake, '453 Not Enough Bandwidth')).toBe(true);
    await done;
    expect([log, rates.failure]).toEqual([['stop full@0'], '453 Not Enough Bandwidth']);
  });

  it('joins a switch to the same rate and abandons one to the other rate without a failure', async () => {
    const { clock, log, rates } = rateSwitch();
    const done = rates.begin(true, 0);
    expect(rates.underWay(true)).toBe(done);
    expect(rates.underWay(false)).toBeUndefined();
    const back = rates.begin(false, 3);
    await done;
    expect([log, rates.failure, rates.underWay(false)]).toEqual([['stop full@0'], '', back]);
    rates.abandon();
    await back;
    expect([log, clock.pending]).toEqual([['stop full@0', 'stop capped@3'], 0]);
  });

  it('reports a source that cannot even be made', async () => {
    const { rates } = rateSwitch('spawn ffmpeg ENOENT');
    await rates.begin(true, 0);
    expect(rates.failure).toBe('spawn ffmpeg ENOENT');
  });
});
