import { describe, expect, it } from 'vitest';
import {
  PERSISTENT_RECONNECT_POLICY,
  RECONNECT_POLICY,
  ReconnectBackoff,
  reconnectDelayMs,
  reconnectPolicyOf,
} from '../engine/media/reconnect-policy';

describe('the reconnect policy', () => {
  it('waits 1 s, doubles after each failed try and stops at 30 s', () => {
    expect(RECONNECT_POLICY).toEqual({ firstMs: 1_000, maxMs: 30_000 });
    const waits = Array.from({ length: 8 }, (_, retry) => reconnectDelayMs(RECONNECT_POLICY, retry));
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it('stays at the cap however long the source stays away', () => {
    expect(reconnectDelayMs({ firstMs: 300, maxMs: 600 }, 2_000)).toBe(600);
  });

  it('gives the waits in turn for one source and starts over once it is healthy', () => {
    const backoff = new ReconnectBackoff({ firstMs: 500, maxMs: 3_000 });
    const firstLoss = [backoff.next(), backoff.next(), backoff.next(), backoff.next(), backoff.next()];
    backoff.reset();
    const secondLoss = [backoff.next(), backoff.next()];
    expect({ firstLoss, secondLoss }).toEqual({
      firstLoss: [500, 1_000, 2_000, 3_000, 3_000],
      secondLoss: [500, 1_000],
    });
  });

  it('defaults to the one policy', () => {
    const backoff = new ReconnectBackoff();
    expect([backoff.next(), backoff.next()]).toEqual([
      RECONNECT_POLICY.firstMs,
      2 * RECONNECT_POLICY.firstMs,
    ]);
  });

  it("tries an operator's camera (a persistent task) every 3 s at most, for as long as it is lost", () => {
    expect(reconnectPolicyOf(true)).toEqual({ firstMs: 1_000, maxMs: 3_000 });
    expect(reconnectPolicyOf(false)).toBe(RECONNECT_POLICY);
    expect(reconnectDelayMs(PERSISTENT_RECONNECT_POLICY, 10_000)).toBe(3_000);
  });

  it('reads a policy given as a function at each wait: a task made persistent waits by the short one next', () => {
    let persistent = false;
    const backoff = new ReconnectBackoff(() => reconnectPolicyOf(persistent));
    const before = Array.from({ length: 6 }, () => backoff.next());
    persistent = true;
    expect({ before, after: backoff.next() }).toEqual({
      before: [1_000, 2_000, 4_000, 8_000, 16_000, 30_000],
      after: 3_000,
    });
  });
});
