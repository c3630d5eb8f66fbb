import { byName } from './placement-fit';
import { type Placed, place } from './placement-round';
import type { CameraDemand, Headroom, NodeCard } from './placement-schema';

/**
 * Could the site lose a node and still run every camera? Each node that runs cameras is taken away in
 * turn and the round the placement leader would then plan is planned (placement-round.ts: its cameras
 * moved by the same rules, room made, lower priorities displaced); a camera placed now that it leaves
 * without a place counts against that node. The verdict names the node whose loss leaves most cameras
 * out: usually the largest, but a smaller one whose cameras few nodes can run (the only GPU node) can be
 * worse. The operator is told before the failure, not after (a prototype's 24 cameras on 2 survivors of
 * capacity 10 left 4 unplaced with no word).
 */
export function headroom(
  nodes: readonly NodeCard[],
  cameras: readonly CameraDemand[],
  placed: Placed,
): Headroom {
  const running = cameras.map((camera) => ({ ...camera, node: placed.assignment[camera.task_id] ?? null }));
  let worst: Loss | undefined;
  for (const node of nodes) {
    const loss = lose(node, nodes, running, placed);
    if (loss.cameras > 0 && (!worst || worse(loss, worst))) worst = loss;
  }
  if (!worst) {
    return {
      ok: true,
      node: null,
      cameras: 0,
      would_unplace: 0,
      left_out: [],
      spare_cores: 0,
      needed_cores: 0,
      message: 'no node runs cameras',
    };
  }
  return { ...worst, ok: worst.would_unplace === 0, message: verdict(worst) };
}

type Loss = Omit<Headroom, 'ok' | 'message'> & { node: string };

function lose(
  lost: NodeCard,
  nodes: readonly NodeCard[],
  running: readonly CameraDemand[],
  placed: Placed,
): Loss {
  const survivors = nodes.filter((node) => node.name !== lost.name);
  const after = place(survivors, running, placed, placed.at);
  const orphans = running.filter((camera) => camera.node === lost.name);
  const leftOut = after.unplaced.filter((camera) => placed.assignment[camera.task_id] !== undefined);
  const spare = placed.loads
    .filter(
      (load) => load.node !== lost.name && nodes.find((node) => node.name === load.node)?.state === 'up',
    )
    .reduce((sum, load) => sum + Math.max(0, load.capacity_cores - load.load_cores), 0);
  return {
    node: lost.name,
    cameras: orphans.length,
    would_unplace: leftOut.length,
    left_out: leftOut.slice(0, MAX_LEFT_OUT).map((camera) => camera.task_id),
    spare_cores: round(spare),
    needed_cores: round(orphans.reduce((sum, camera) => sum + camera.cost_cores, 0)),
  };
}

/** Cameras a verdict names at most: the console lists them; the count says how many in all. */
const MAX_LEFT_OUT = 100;

/** More cameras left out, then the heavier node, then by name. */
const worse = (a: Loss, b: Loss): boolean =>
  a.would_unplace !== b.would_unplace
    ? a.would_unplace > b.would_unplace
    : a.needed_cores !== b.needed_cores
      ? a.needed_cores > b.needed_cores
      : byName(a.node, b.node) < 0;

const round = (cores: number): number => Math.round(cores * 100) / 100;

function verdict(loss: Loss): string {
  const figures = `its ${loss.cameras} cameras need ${loss.needed_cores.toFixed(2)} cores, the other nodes have ${loss.spare_cores.toFixed(2)} spare`;
  if (loss.would_unplace === 0) return `losing ${loss.node} leaves every camera a place: ${figures}`;
  return `losing ${loss.node} would leave ${loss.would_unplace} cameras without a place (${figures}): add a node or capacity`;
}
