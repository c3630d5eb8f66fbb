import { byName, fitsIn, placementOrder, Room, refusal, type Sized, sized } from './placement-fit';
import type { CameraDemand, Move, MoveReason, NodeCard, NodeLoad, Plan, Unplaced } from './placement-schema';

/**
 * A placement round: where every camera of the site runs (placement.ts adds the headroom verdict).
 * Same inputs, same plan: every choice is ordered, ties by name.
 *
 * A round, in order:
 * 1. Keep: a camera stays where it is (its previous plan's node, else the node running it) while that
 *    node is up and can run it, and the node's cameras cost no more than its capacity plus
 *    OVER_CAPACITY_TOLERANCE. A node past that keeps what fits its capacity, taken by priority, then
 *    cost: the lower-priority and smaller ones are the ones that go.
 * 2. Forced: a camera with no node (new, unplaced before), whose node is gone, or whose node can no
 *    longer run it goes, at once, to the eligible node it leaves least full (costliest first, as in
 *    best-fit decreasing, but to the node left with the most room rather than the tightest fit: the
 *    tightest piles cameras onto few nodes and leaves none the room a failed node's cameras need); a
 *    camera whose task prefers a GPU goes to a GPU node that has room before any other. With
 *    no room anywhere, it makes room on an eligible node by moving cameras that can run elsewhere
 *    there (they keep running: make-before-break); failing that, it displaces cameras of lower
 *    priority, which are placed in turn or left out.
 * 3. Planned, at most MAX_PLANNED_MOVES a round: cameras over their node's capacity (but those that
 *    moved within MOVE_COOLDOWN_MS), then those on a draining node, move where there is room; until
 *    then they stay where they run. The node that runs a camera runs it until its next one does
 *    (make-before-break: engine/cluster/cluster-node.ts).
 * 4. Rebalance, within the same budget: once the spread of load (the fullest node's share of its
 *    capacity less the emptiest's) passes REBALANCE_START_SPREAD, cameras move from full nodes to empty
 *    ones, each move lowering the site's imbalance by a margin, until no move does; then the spread
 *    must pass the start again. Costs that jitter inside that band move nothing. A camera that prefers
 *    a GPU is not moved off a GPU node onto one without.
 */

/**
 * Planned moves a round. Each starts a stream and a model on its target (a burst of CPU) and, being
 * make-before-break, runs the camera twice until the old node stops it: bounding the moves bounds that
 * extra load on the site. At a round every second or two a joining node still fills in seconds.
 */
export const MAX_PLANNED_MOVES = 4;
/**
 * The spread of load (fullest node's share of its capacity less the emptiest's) past which a rebalance
 * starts: a quarter of a node. Below it, measured costs can jitter without moving anything; a new
 * empty node, or one left after a failure moved cameras off it, is far past it.
 */
export const REBALANCE_START_SPREAD = 0.25;
/**
 * The share of a node's capacity by which a rebalancing move must beat an even swap: moves that only
 * trade one imbalance for a mirror image are never made, so a rebalance ends.
 */
export const REBALANCE_MIN_GAIN = 0.02;
/**
 * A camera that moved is left out of rebalancing, and of moves off a node over its capacity, this long:
 * its new node's measure of it is not settled yet, and a camera bounced between nodes costs a warm-up
 * each time. Failures and drains move it regardless.
 */
export const MOVE_COOLDOWN_MS = 120_000;
/**
 * How far past its capacity a node's cameras may cost before it gives one away; cameras only ever go
 * to a node within its capacity. Measured costs move by a few % a round (inference time, a busier
 * scene), and a node filled to its capacity would otherwise give a camera away and take one back round
 * after round (the simulated site, bench/cluster-site.ts, did at +-15 % a camera). A node past it gives
 * away down to its capacity, so the next jitter does not tip it again.
 */
export const OVER_CAPACITY_TOLERANCE = 0.1;

/** A round's plan before its headroom verdict (which is worked out by further rounds, headroom.ts). */
export type Placed = Omit<Plan, 'headroom'>;

/** One round of placement (see above). `previous` is the last round's plan, null for the first. */
export function place(
  nodes: readonly NodeCard[],
  cameras: readonly CameraDemand[],
  previous: Placed | null,
  now: number,
): Placed {
  const round = new Round(
    [...nodes].sort((a, b) => byName(a.name, b.name)),
    previous,
    now,
  );
  const items = cameras.map(sized).sort(placementOrder);
  const { forced, planned } = round.keep(items);
  round.force(forced);
  round.planned(planned);
  const rebalancing = round.rebalance(Boolean(previous?.rebalancing));
  return {
    at: now,
    assignment: round.assignmentRecord(items),
    moves: round.moves,
    unplaced: round.unplaced,
    loads: round.loads(),
    moved_at: round.movedAt(items),
    rebalancing,
  };
}

interface Pending extends Sized {
  reason: MoveReason;
}

/** Lowest priority first, then the costliest: who gives way first (displaced, rebalanced). */
const givesWayFirst = (a: Sized, b: Sized): number =>
  a.camera.priority - b.camera.priority || b.cost - a.cost || byName(a.camera.task_id, b.camera.task_id);

class Round {
  readonly moves: Move[] = [];
  readonly unplaced: Unplaced[] = [];
  private readonly room = new Room();
  private readonly assigned = new Map<string, string>();
  /** Per task: where it is meant to be (baseOf). */
  private readonly base = new Map<string, string | null>();
  private readonly items = new Map<string, Sized>();
  /** Per node: the tasks assigned to it. */
  private readonly tasksOn = new Map<string, Set<string>>();
  private readonly eligibleByTask = new Map<string, NodeCard[]>();
  private readonly byName: Map<string, NodeCard>;
  private readonly up: NodeCard[];
  private readonly moved = new Map<string, number>();
  /** The cameras the previous plan left out. */
  private readonly leftOut: Set<string>;
  private budget = MAX_PLANNED_MOVES;

  constructor(
    private readonly nodes: readonly NodeCard[],
    private readonly previous: Placed | null,
    private readonly now: number,
  ) {
    this.byName = new Map(nodes.map((node) => [node.name, node]));
    this.up = nodes.filter((node) => node.state === 'up');
    for (const [task, at] of Object.entries(previous?.moved_at ?? {})) this.moved.set(task, at);
    this.leftOut = new Set(previous?.unplaced.map((left) => left.task_id));
  }

  /** Step 1: who stays; the rest is forced (must move now) or planned (should move when it can). */
  keep(items: readonly Sized[]): { forced: Pending[]; planned: Pending[] } {
    const forced: Pending[] = [];
    const keepable: Sized[] = [];
    const draining: Pending[] = [];
    for (const item of items) {
      const task = item.camera.task_id;
      this.items.set(task, item);
      const base = this.baseOf(item.camera);
      this.base.set(task, base);
      const node = base === null ? undefined : this.byName.get(base);
      if (base === null) forced.push({ ...item, reason: 'unplaced' });
      else if (!node) forced.push({ ...item, reason: 'node_lost' });
      else if (refusal(node, item.camera) !== null) forced.push({ ...item, reason: 'not_eligible' });
      else if (node.state === 'draining') {
        draining.push({ ...item, reason: 'draining' });
        this.assign(item, node.name);
      } else keepable.push(item);
    }
    const tolerated = this.withinTolerance(keepable);
    const overCapacity: Pending[] = [];
    for (const item of keepable) {
      const node = this.byName.get(this.base.get(item.camera.task_id) as string) as NodeCard;
      if (tolerated.has(node.name) || this.room.fits(node, item.cost)) this.assign(item, node.name);
      else overCapacity.push({ ...item, reason: 'over_capacity' });
    }
    // Still running where they are until they move: counted once every camera that fits is in.
    for (const item of overCapacity) this.assign(item, this.base.get(item.camera.task_id) as string);
    return { forced, planned: [...overCapacity, ...draining] };
  }

  /**
   * Where the camera is meant to be: the previous plan's node (a move under way counts as made), else
   * the node running it; none when the previous plan left it out (it is being stopped, not kept).
   */
  private baseOf(camera: CameraDemand): string | null {
    const planned = this.previous?.assignment[camera.task_id];
    if (planned !== undefined) return planned;
    if (this.leftOut.has(camera.task_id)) return null;
    return camera.node;
  }

  /** The nodes whose cameras that may stay cost no more than their capacity plus the tolerance. */
  private withinTolerance(keepable: readonly Sized[]): Set<string> {
    const loads = new Room();
    for (const item of keepable) loads.add(this.base.get(item.camera.task_id) as string, item.cost);
    const tolerated = this.up.filter(
      (node) =>
        loads.load(node.name) <= node.capacity_cores * (1 + OVER_CAPACITY_TOLERANCE) &&
        (node.max_cameras === null || loads.count(node.name) <= node.max_cameras),
    );
    return new Set(tolerated.map((node) => node.name));
  }

  /** Step 2: every forced camera gets a node now, displacing lower priority if it must, or a why. */
  force(forced: Pending[]): void {
    const queue = [...forced];
    for (let item = queue.shift(); item; item = queue.shift()) {
      const target = this.bestNode(item, this.room) ?? this.makeRoom(item) ?? this.displaceFor(item, queue);
      if (target) this.moveTo(item, target.name, item.reason);
      else this.unplaced.push(this.why(item));
    }
  }

  /** Step 3: planned moves off over-full and draining nodes, within the round's budget. */
  planned(planned: readonly Pending[]): void {
    for (const item of planned) {
      if (this.budget === 0) return;
      // A camera that just moved is measured afresh where it runs now (a new stream and pipeline cost
      // more for their first seconds): it is not sent on over that, only off a draining node.
      if (item.reason === 'over_capacity' && this.coolingDown(item)) continue;
      const from = this.base.get(item.camera.task_id) as string;
      // Moved in step 2 (to make room) or displaced by a camera of higher priority: dealt with there.
      if (this.assigned.get(item.camera.task_id) !== from) continue;
      const target = this.bestNode(item, this.room, from);
      if (!target) continue;
      this.moveTo(item, target.name, item.reason);
      this.budget -= 1;
    }
  }

  /** Step 4: rebalance within what is left of the budget; says whether it is still under way. */
  rebalance(wasRebalancing: boolean): boolean {
    if (!wasRebalancing && this.spread() <= REBALANCE_START_SPREAD) return false;
    while (this.budget > 0) {
      const step = this.rebalancingMove();
      if (!step) return false;
      this.moveTo(step.item, step.to, 'rebalance');
      this.budget -= 1;
    }
    return true;
  }

  assignmentRecord(items: readonly Sized[]): Record<string, string> {
    const record: Record<string, string> = {};
    for (const { camera } of items) {
      const node = this.assigned.get(camera.task_id);
      if (node !== undefined) record[camera.task_id] = node;
    }
    return record;
  }

  loads(): NodeLoad[] {
    return this.nodes.map((node) => ({
      node: node.name,
      cameras: this.room.count(node.name),
      load_cores: Math.round(this.room.load(node.name) * 1000) / 1000,
      capacity_cores: node.capacity_cores,
    }));
  }

  /** Move times still inside the cooldown, of cameras that still exist: the state stays bounded. */
  movedAt(items: readonly Sized[]): Record<string, number> {
    const record: Record<string, number> = {};
    for (const { camera } of items) {
      const at = this.moved.get(camera.task_id);
      if (at !== undefined && this.now - at < MOVE_COOLDOWN_MS) record[camera.task_id] = at;
    }
    return record;
  }

  private assign(item: Sized, node: string): void {
    this.assigned.set(item.camera.task_id, node);
    this.room.add(node, item.cost);
    const tasks = this.tasksOn.get(node) ?? new Set<string>();
    this.tasksOn.set(node, tasks.add(item.camera.task_id));
  }

  private unassign(item: Sized): void {
    const node = this.assigned.get(item.camera.task_id);
    if (node === undefined) return;
    this.assigned.delete(item.camera.task_id);
    this.room.remove(node, item.cost);
    this.tasksOn.get(node)?.delete(item.camera.task_id);
  }

  /** Puts the camera on `to` and records the move, unless it runs there already. */
  private moveTo(item: Sized, to: string, reason: MoveReason): void {
    this.unassign(item);
    this.assign(item, to);
    const task = item.camera.task_id;
    const running = item.camera.node !== null && this.byName.has(item.camera.node) ? item.camera.node : null;
    if (to === running) return;
    this.moves.push({ task_id: task, from: running, to, reason });
    this.moved.set(task, this.now);
  }

  /**
   * Room for a camera that fits nowhere, made by moving cameras that can run elsewhere off an eligible
   * node (a GPU node full of cameras that need none, for a camera that needs one): the node needing the
   * fewest such moves, ties by name. They move make-before-break and keep running; lowest priority and
   * costliest go first.
   */
  private makeRoom(item: Pending): NodeCard | undefined {
    let best: { node: NodeCard; moves: Array<{ item: Sized; to: string }> } | undefined;
    for (const node of this.eligible(item)) {
      const moves = this.relocationsOn(node, item);
      if (moves && (!best || moves.length < best.moves.length)) best = { node, moves };
    }
    for (const move of best?.moves ?? []) this.moveTo(move.item, move.to, 'make_room');
    return best?.node;
  }

  /** The moves off the node, each to where it fits, that make room for the item; undefined if none do. */
  private relocationsOn(node: NodeCard, item: Sized): Array<{ item: Sized; to: string }> | undefined {
    const trial = this.room.clone();
    const moves: Array<{ item: Sized; to: string }> = [];
    for (const other of this.onNode(node.name).sort(givesWayFirst)) {
      if (trial.fits(node, item.cost)) return moves;
      const to = this.bestNode(other, trial, node.name);
      if (!to) continue;
      trial.remove(node.name, other.cost);
      trial.add(to.name, other.cost);
      moves.push({ item: other, to: to.name });
    }
    return trial.fits(node, item.cost) ? moves : undefined;
  }

  /**
   * Room for a camera that fits nowhere: the eligible up node where evicting cameras of lower priority
   * (lowest first, costliest first) makes room with the fewest evicted; ties by fewer cores evicted,
   * then name. The evicted go back in the queue, in placement order, as displaced.
   */
  private displaceFor(item: Pending, queue: Pending[]): NodeCard | undefined {
    let best: { node: NodeCard; victims: Sized[]; cores: number } | undefined;
    for (const node of this.eligible(item)) {
      const victims = this.victimsOn(node, item);
      if (!victims) continue;
      const cores = victims.reduce((sum, victim) => sum + victim.cost, 0);
      const fewer =
        !best ||
        victims.length < best.victims.length ||
        (victims.length === best.victims.length && cores < best.cores);
      if (fewer) best = { node, victims, cores };
    }
    if (!best) return undefined;
    for (const victim of best.victims) {
      this.unassign(victim);
      queue.push({ ...victim, reason: 'displaced' });
    }
    queue.sort(placementOrder);
    return best.node;
  }

  /** The lower-priority cameras on the node whose eviction makes room; undefined if evicting all does not. */
  private victimsOn(node: NodeCard, item: Sized): Sized[] | undefined {
    const candidates = this.onNode(node.name)
      .filter((other) => other.camera.priority < item.camera.priority)
      .sort(givesWayFirst);
    let load = this.room.load(node.name);
    let count = this.room.count(node.name);
    const victims: Sized[] = [];
    for (const victim of candidates) {
      if (fitsIn(node, load, count, item.cost)) return victims;
      load -= victim.cost;
      count -= 1;
      victims.push(victim);
    }
    return fitsIn(node, load, count, item.cost) ? victims : undefined;
  }

  private onNode(node: string): Sized[] {
    return [...(this.tasksOn.get(node) ?? [])].map((task) => this.items.get(task) as Sized);
  }

  /** The up nodes that can run the camera, whatever their load. */
  private eligible(item: Sized): NodeCard[] {
    const task = item.camera.task_id;
    let nodes = this.eligibleByTask.get(task);
    if (!nodes) {
      nodes = this.up.filter((node) => refusal(node, item.camera) === null);
      this.eligibleByTask.set(task, nodes);
    }
    return nodes;
  }

  /**
   * The eligible node with room for the camera that it leaves least full (spreading, so every node
   * keeps headroom for a failed one's cameras); ties by name. A camera that prefers a GPU takes a GPU
   * node with room before any other.
   */
  private bestNode(item: Sized, room: Room, except?: string): NodeCard | undefined {
    const open = this.eligible(item).filter((node) => node.name !== except && room.fits(node, item.cost));
    const gpu = item.camera.prefers_gpu ? open.filter((node) => node.gpu) : [];
    return leastFull(gpu.length > 0 ? gpu : open, room, item.cost);
  }

  /** The fullest up node's share of its capacity less the emptiest's. */
  private spread(): number {
    const fractions = this.up
      .filter((node) => node.capacity_cores > 0)
      .map((node) => this.room.fraction(node));
    return fractions.length < 2 ? 0 : Math.max(...fractions) - Math.min(...fractions);
  }

  /**
   * The first move, from the fullest node down, that lowers the site's imbalance by a margin: moving c
   * cores from A to B lowers sum(load^2 / capacity) exactly when A's share exceeds B's by more than
   * c * (1/capA + 1/capB) / 2, so with steady costs a rebalance always ends. Only settled cameras move
   * (running where planned, not moved within the cooldown), lowest priority first, then the costliest.
   */
  private rebalancingMove(): { item: Sized; to: string } | undefined {
    const sources = this.up
      .filter((node) => node.capacity_cores > 0)
      .sort((a, b) => this.room.fraction(b) - this.room.fraction(a) || byName(a.name, b.name));
    for (const from of sources) {
      const movable = this.onNode(from.name)
        .filter((item) => this.settled(item, from.name))
        .sort(givesWayFirst);
      for (const item of movable) {
        const to = this.bestNode(item, this.room, from.name);
        // A camera that prefers a GPU is not evened out onto a node without one.
        if (!to || (item.camera.prefers_gpu && from.gpu && !to.gpu)) continue;
        const evenSwap = (item.cost / from.capacity_cores + item.cost / to.capacity_cores) / 2;
        if (this.room.fraction(from) - this.room.fraction(to) > evenSwap + REBALANCE_MIN_GAIN)
          return { item, to: to.name };
      }
    }
    return undefined;
  }

  private settled(item: Sized, node: string): boolean {
    return item.camera.node === node && !this.coolingDown(item);
  }

  /** Whether the camera moved within MOVE_COOLDOWN_MS. */
  private coolingDown(item: Sized): boolean {
    const at = this.moved.get(item.camera.task_id);
    return at !== undefined && this.now - at < MOVE_COOLDOWN_MS;
  }

  /** Why no node takes the camera, in words for the operator. */
  private why(item: Sized): Unplaced {
    const task_id = item.camera.task_id;
    if (this.up.length === 0) return { task_id, reason: 'no_eligible_node', detail: 'no node is up' };
    const eligible = this.eligible(item);
    if (eligible.length === 0) {
      const refusals = this.up.map((node) => `${node.name}: ${refusal(node, item.camera)}`);
      return { task_id, reason: 'no_eligible_node', detail: `no up node can run it (${list(refusals)})` };
    }
    const full = eligible.map((node) =>
      node.max_cameras !== null && this.room.count(node.name) >= node.max_cameras
        ? `${node.name}: at its ${node.max_cameras}-camera limit`
        : `${node.name}: ${this.room.free(node).toFixed(2)} free`,
    );
    return {
      task_id,
      reason: 'no_capacity',
      detail: `needs ${item.cost.toFixed(2)} cores; the nodes that can run it are full (${list(full)})`,
    };
  }
}

/** The node the camera's cost leaves least full; the first of equals (they come in name order). */
function leastFull(nodes: readonly NodeCard[], room: Room, cost: number): NodeCard | undefined {
  let best: NodeCard | undefined;
  let bestFraction = Number.POSITIVE_INFINITY;
  for (const node of nodes) {
    const fraction = room.fraction(node, cost);
    if (fraction < bestFraction) {
      best = node;
      bestFraction = fraction;
    }
  }
  return best;
}

/** At most LISTED entries, then how many more: a site of 50 nodes still gets a readable line. */
const LISTED = 5;
const list = (entries: string[]): string =>
  entries.length <= LISTED
    ? entries.join('; ')
    : `${entries.slice(0, LISTED).join('; ')}; and ${entries.length - LISTED} more`;
