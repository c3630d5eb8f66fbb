/**
 * The bitrates an AI video is encoded at, in kbit/s: the 1-1.5-2-3-4-6-8 series (each step at most
 * 1.5 times the one below) from 100 to 40000. Requests share an encoder when their bitrates fall on
 * one step, so a task has at most 19 bitrates for a set of applications instead of 49,901.
 */
export const BITRATE_STEPS_KBPS = [
  100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 4000, 6000, 8000, 10000, 15000, 20000, 30000,
  40000,
] as const;

/**
 * The step a requested bitrate is encoded at: the highest not above it (a push never gets more than
 * its link was budgeted for), so at most a third below what was asked; the lowest step below that.
 */
export function bitrateStep(requestedKbps: number): number {
  let step: number = BITRATE_STEPS_KBPS[0];
  for (const candidate of BITRATE_STEPS_KBPS) if (candidate <= requestedKbps) step = candidate;
  return step;
}
