import { describe, expect, it } from 'vitest';
import { MAX_MEDIA_LEAD_MS, RuleClock, type TimedFrame } from '../engine/pipeline/rule-clock';

/** The rule clock's readings for the frames, from an origin of 1,000,000 ms. */
function readings(frames: readonly TimedFrame[]): number[] {
  return counted(frames).readings;
}

/** The readings, and the breaks of the source's clock the rule clock counted on the way. */
function counted(frames: readonly TimedFrame[]): { readings: number[]; breaks: number } {
  const clock = new RuleClock(() => 1_000_000);
  return { readings: frames.map((frame) => clock.at(frame) - 1_000_000), breaks: clock.breaks };
}

describe('RuleClock', () => {
  it('follows one ffmpeg media clock through bursts and slow deliveries', () => {
    expect(
      readings([
        { receivedAt: 0, mediaAt: 0, mediaLine: 1 },
        { receivedAt: 1, mediaAt: 100, mediaLine: 1 }, // a burst: 0.1 s of media in 1 ms
        { receivedAt: 2, mediaAt: 200, mediaLine: 1 },
        { receivedAt: 900, mediaAt: 300, mediaLine: 1 }, // late: still 0.1 s of media
      ]),
    ).toEqual([0, 100, 200, 300]);
  });

  it('takes real time across a change of ffmpeg, black frames and timestamps that go back', () => {
    expect(
      counted([
        { receivedAt: 0, mediaAt: 5_000, mediaLine: 1 },
        { receivedAt: 100, mediaAt: 5_100, mediaLine: 1 },
        { receivedAt: 300 }, // a black frame
        { receivedAt: 400 },
        { receivedAt: 500, mediaAt: 500, mediaLine: 2 }, // a new ffmpeg, its clock 4.6 s behind the old
        { receivedAt: 600, mediaAt: 400, mediaLine: 2 }, // its timestamps step back
        { receivedAt: 700, mediaAt: 500, mediaLine: 2 },
        { receivedAt: 800, mediaAt: 9_000, mediaLine: 3 }, // another, its clock 8.5 s ahead
        { receivedAt: 900, mediaAt: 9_100, mediaLine: 3 },
      ]),
      // One break of the source's clock (the step back); a new ffmpeg's clock and black frames are none.
    ).toEqual({ readings: [0, 100, 300, 400, 500, 600, 700, 800, 900], breaks: 1 });
  });

  it('takes real time for a jump of the media clock beyond the lead a burst may have', () => {
    const jump = 200 + MAX_MEDIA_LEAD_MS + 1;
    expect(
      counted([
        { receivedAt: 0, mediaAt: 0, mediaLine: 1 },
        { receivedAt: 200, mediaAt: 200 + MAX_MEDIA_LEAD_MS, mediaLine: 1 }, // the most a burst may lead
        { receivedAt: 400, mediaAt: 200 + MAX_MEDIA_LEAD_MS + jump, mediaLine: 1 }, // a timestamp jump
        { receivedAt: 500, mediaAt: 300 + MAX_MEDIA_LEAD_MS + jump, mediaLine: 1 },
      ]),
    ).toEqual({
      readings: [0, 200 + MAX_MEDIA_LEAD_MS, 400 + MAX_MEDIA_LEAD_MS, 500 + MAX_MEDIA_LEAD_MS],
      breaks: 1, // the jump; the burst that led by the most allowed is none
    });
  });

  it('reads the wall clock once, for its origin: a step of the machine time later moves nothing', () => {
    let wall = 1_700_000_000_000;
    const clock = new RuleClock(() => wall);
    const first = clock.at({ receivedAt: 0, mediaAt: 0, mediaLine: 1 });
    wall -= 3_600_000;
    expect([first, clock.at({ receivedAt: 100, mediaAt: 100, mediaLine: 1 })]).toEqual([
      1_700_000_000_000, 1_700_000_000_100,
    ]);
  });
});
