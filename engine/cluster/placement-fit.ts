import type { CameraDemand, NodeCard } from './placement-schema';
import { MIN_CAMERA_CORES } from './task-cost';

/**
 * Where a camera may go and how full each node is, shared by the plan (placement.ts) and its headroom
 * verdict (headroom.ts) so both pack by the same rules.
 */

/** A camera with the cost it is packed at (never below the least a camera costs). */
export interface Sized {
  camera: CameraDemand;
  cost: number;
}

export const sized = (camera: CameraDemand): Sized => ({
  camera,
  cost: Math.max(MIN_CAMERA_CORES, camera.cost_cores),
});

/** Plain code-unit order: the same on every node, whatever its locale. */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Placement order: higher priority first, then the costlier (decreasing fit), then by task id. */
export const placementOrder = (a: Sized, b: Sized): number =>
  b.camera.priority - a.camera.priority || b.cost - a.cost || byName(a.camera.task_id, b.camera.task_id);

/** Float sums of costs drift; a camera that fits to within this many cores fits. */
const EPSILON = 1e-9;

/** Why the node cannot run the camera whatever its load; null when it can (its state aside). */
export function refusal(node: NodeCard, camera: CameraDemand): string | null {
  if (camera.needs_gpu && !node.gpu) return 'no GPU';
  const missing = camera.models.filter((model) => !node.models.includes(model));
  if (missing.length > 0) return `lacks model ${missing.join(', ')}`;
  if (camera.unreachable_on.includes(node.name)) return 'could not open its source';
  return null;
}

/** The planned load of each node: the cores and count of the cameras assigned to it. */
export class Room {
  private readonly cores = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  clone(): Room {
    const copy = new Room();
    for (const [node, cores] of this.cores) copy.cores.set(node, cores);
    for (const [node, count] of this.counts) copy.counts.set(node, count);
    return copy;
  }

  add(node: string, cost: number): void {
    this.cores.set(node, this.load(node) + cost);
    this.counts.set(node, this.count(node) + 1);
  }

  remove(node: string, cost: number): void {
    this.cores.set(node, this.load(node) - cost);
    this.counts.set(node, this.count(node) - 1);
  }

  load(node: string): number {
    return this.cores.get(node) ?? 0;
  }

  count(node: string): number {
    return this.counts.get(node) ?? 0;
  }

  free(node: NodeCard): number {
    return Math.max(0, node.capacity_cores - this.load(node.name));
  }

  /** Its load as a share of its capacity; a node of no capacity counts as full. */
  fraction(node: NodeCard, extra = 0): number {
    if (node.capacity_cores <= 0) return Number.POSITIVE_INFINITY;
    return (this.load(node.name) + extra) / node.capacity_cores;
  }

  fits(node: NodeCard, cost: number): boolean {
    return fitsIn(node, this.load(node.name), this.count(node.name), cost);
  }
}

/** Whether a camera of `cost` fits on the node beside `count` cameras of `load` cores. */
export function fitsIn(node: NodeCard, load: number, count: number, cost: number): boolean {
  const underCount = node.max_cameras === null || count < node.max_cameras;
  return underCount && load + cost <= node.capacity_cores + EPSILON;
}
