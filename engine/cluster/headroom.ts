import { bestNode, byName, placementOrder, Room, type Sized, sized } from './placement-fit';
import type { CameraDemand, Headroom, NodeCard } from './placement-schema';

/**
 * Could the site lose a node and still run every camera? Each node that runs cameras is taken away in
 * turn and its cameras packed onto the room the other up nodes have left, by the rules placement uses
 * (model, GPU, source, capacity), without displacing anyone. The verdict names the node whose loss
 * leaves most cameras without a place: usually the largest, but a smaller one whose cameras only a few
 * nodes can run (a GPU node) can be worse. The operator is told before the failure, not after (the
 * prototype's 24 cameras on 2 survivors of capacity 10 left 4 unplaced with no word).
 */
export function headroom(
  nodes: readonly NodeCard[],
  cameras: readonly CameraDemand[],
  assignment: Readonly<Record<string, string>>,
): Headroom {
  const placed = cameras
    .filter((camera) => assignment[camera.task_id] !== undefined)
    .map(sized)
    .sort(placementOrder);
  let worst: Loss | undefined;
  for (const node of nodes) {
    const loss = lose(node, nodes, placed, assignment);
    if (loss.cameras > 0 && (!worst || worse(loss, worst))) worst = loss;
  }
  if (!worst) {
    return {
      ok: true,
      node: null,
      cameras: 0,
      would_unplace: 0,
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
  placed: readonly Sized[],
  assignment: Readonly<Record<string, string>>,
): Loss {
  const room = new Room();
  const orphans: Sized[] = [];
  for (const item of placed) {
    const node = assignment[item.camera.task_id] as string;
    if (node === lost.name) orphans.push(item);
    else room.add(node, item.cost);
  }
  const survivors = nodes.filter((node) => node.state === 'up' && node.name !== lost.name);
  const spare = survivors.reduce((sum, node) => sum + room.free(node), 0);
  let unplaced = 0;
  for (const item of orphans) {
    const target = bestNode(survivors, item, room);
    if (target) room.add(target.name, item.cost);
    else unplaced += 1;
  }
  return {
    node: lost.name,
    cameras: orphans.length,
    would_unplace: unplaced,
    spare_cores: round(spare),
    needed_cores: round(orphans.reduce((sum, item) => sum + item.cost, 0)),
  };
}

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
  return `losing ${loss.node} would leave ${loss.would_unplace} of its ${loss.cameras} cameras without a place (${figures}): add a node or capacity`;
}
