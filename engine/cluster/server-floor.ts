/**
 * The lowest NATS server a cluster runs on. Measured on this project's machines: Debian bookworm's
 * 2.9.10 let more than one of three racing writers win a compare-and-set (kv.update from one
 * revision) in 582 of 1,000 rounds, and accepted racing appends fenced by the expected last subject
 * sequence in 633; trixie's 2.10.27 and sid's 2.15.1 had exactly one winner in every round. Every
 * lease and fenced append of cluster mode rests on that, so a server below the floor is refused.
 * Features newer than the floor (per-key TTL, Nats-TTL of 2.11) are not relied on.
 */
export const NATS_SERVER_FLOOR = '2.10.27';

/** Whether a server's version (as its INFO reports it, e.g. "2.10.27" or "2.11.0-RC.1") is below the floor. */
export function belowFloor(version: string, floor: string = NATS_SERVER_FLOOR): boolean {
  const parse = (text: string) => (/^v?(\d+)\.(\d+)\.(\d+)/.exec(text) ?? []).slice(1, 4).map(Number);
  const have = parse(version);
  const need = parse(floor);
  if (have.length < 3) return true;
  for (let i = 0; i < 3; i++) {
    if ((have[i] as number) !== (need[i] as number)) return (have[i] as number) < (need[i] as number);
  }
  // A pre-release of the floor itself (2.10.27-RC.1) comes before the release.
  return /^v?\d+\.\d+\.\d+-/.test(version) && !/^v?\d+\.\d+\.\d+-/.test(floor);
}
