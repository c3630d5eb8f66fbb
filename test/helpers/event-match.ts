/**
 * Matching one run's events against another's (or against a scene's ground truth), for the motion
 * gate's accuracy test (issue 36): an event is one object a rule reported, at its frame's time on the
 * media clock.
 */

export interface SeenEvent {
  /** The fired rule's id (<app_id>:<class_id>): events match only within one rule. */
  rule: string;
  /** Seconds into the clip. */
  t: number;
  /** The box's centre and size, source pixels (as the callbacks report them). */
  x: number;
  y: number;
  w: number;
  h: number;
  /** The object's track id (for ground truth: which object of the scene it is). */
  track: string;
}

export interface MatchTolerance {
  /** Most seconds between two matched events. */
  withinS: number;
  /** Most distance between their centres, in the reference box's longer side. */
  withinBoxes: number;
}

export interface Matching {
  /** Pairs of a reference event and the candidate event matched to it, each event in one pair at most. */
  pairs: Array<[SeenEvent, SeenEvent]>;
  /** Matched reference events / reference events (1 with none). */
  recall: number;
  /** Matched candidate events / candidate events (1 with none). */
  precision: number;
  /**
   * Distinct candidate track ids matched to each reference track, averaged over the reference tracks
   * matched at all: 1 when every reference track (a walk, for ground truth) kept one id; more when
   * the candidate split them (0 with no pair).
   */
  idsPerTrack: number;
}

/**
 * Matches `candidate` against `reference`, one to one: same rule, within the tolerance in time and
 * place. Closest in time first (then in place), so a run of events that fire a frame later still all
 * pair up rather than each taking its neighbour's partner.
 */
export function matchEvents(
  reference: readonly SeenEvent[],
  candidate: readonly SeenEvent[],
  tolerance: MatchTolerance,
): Matching {
  const options: Array<{ r: number; c: number; dt: number; distance: number }> = [];
  reference.forEach((ref, r) => {
    const reach = tolerance.withinBoxes * Math.max(ref.w, ref.h);
    candidate.forEach((can, c) => {
      const dt = Math.abs(ref.t - can.t);
      const distance = Math.hypot(ref.x - can.x, ref.y - can.y);
      if (ref.rule === can.rule && dt <= tolerance.withinS && distance <= reach)
        options.push({ r, c, dt, distance });
    });
  });
  options.sort((a, b) => a.dt - b.dt || a.distance - b.distance);
  const takenR = new Set<number>();
  const takenC = new Set<number>();
  const pairs: Array<[SeenEvent, SeenEvent]> = [];
  for (const { r, c } of options) {
    if (takenR.has(r) || takenC.has(c)) continue;
    takenR.add(r);
    takenC.add(c);
    pairs.push([reference[r] as SeenEvent, candidate[c] as SeenEvent]);
  }
  const ids = new Map<string, Set<string>>();
  for (const [ref, can] of pairs) ids.set(ref.track, (ids.get(ref.track) ?? new Set()).add(can.track));
  const idCounts = [...ids.values()].map((set) => set.size);
  return {
    pairs,
    recall: reference.length === 0 ? 1 : pairs.length / reference.length,
    precision: candidate.length === 0 ? 1 : pairs.length / candidate.length,
    idsPerTrack: idCounts.length === 0 ? 0 : idCounts.reduce((a, b) => a + b, 0) / idCounts.length,
  };
}
