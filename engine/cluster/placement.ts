import { headroom } from './headroom';
import { place } from './placement-round';
import type { CameraDemand, NodeCard, Plan } from './placement-schema';

/**
 * The placement leader's round: where every camera of the site runs, and whether the site could lose
 * a node. Pure: the leader passes the node cards it holds (nodes whose lease lapsed are simply not
 * passed), the cameras with their measured costs (task-cost.ts), the previous round's plan (null for
 * the first; a new leader passes the last plan it can read) and the time, and gets the whole new plan:
 * the assignment, the moves to make (start on `to`, then stop on `from`), the cameras left out and why,
 * and the headroom verdict. How a round decides: placement-round.ts.
 */
export function plan(
  nodes: readonly NodeCard[],
  cameras: readonly CameraDemand[],
  previous: Plan | null,
  now: number,
): Plan {
  const placed = place(nodes, cameras, previous, now);
  return { ...placed, headroom: headroom(nodes, cameras, placed) };
}
