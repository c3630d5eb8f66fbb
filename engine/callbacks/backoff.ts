const FIRST_MS = 1000;
const MAX_MS = 5 * 60_000;

/**
 * Wait before the next attempt after `failures` failed ones: 1 s doubling up to 5 min, each spread
 * over +-20 % so receivers that recover are not hit by every engine's retries at the same instant.
 */
export function retryDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_MS, FIRST_MS * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.min(MAX_MS, Math.round(base * (0.8 + 0.4 * random())));
}
