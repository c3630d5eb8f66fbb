/**
 * What the console shows of a cluster site (GET /api/cluster), worked out from the engine's answer
 * without React: the nodes' rows, the placement verdict in the operator's language, and which node
 * runs a camera (GET /api/tasks of a cluster names it).
 */
import type { SiteView, TaskSummary } from '../api';
import { formatBytes, formatNumber, type Language, type Translate } from '../i18n';

export type Site = Extract<SiteView, { enabled: true }>;
type Member = Site['nodes'][number];
type Placement = NonNullable<Site['placement']>;

/**
 * Which node runs a listed task, in words; null on a single workstation, or while no node runs it.
 * A node that did not answer the listing is said so: the task's figures are then not live.
 */
export function nodeLabel(task: Pick<TaskSummary, 'node' | 'node_answered'>, t: Translate): string | null {
  if (!task.node) return null;
  return t(task.node_answered === false ? 'site.nodeUnanswered' : 'site.nodeLabel', { node: task.node });
}

export interface NodeRow {
  name: string;
  state: Member['state'];
  /** It places the site's cameras now. */
  leader: boolean;
  /** The node the console talks to. */
  answering: boolean;
  /** "used / capacity" cores. */
  cpu: string;
  /** "used of total" memory. */
  memory: string;
  cameras: number;
  version: string;
}

/** One row per node, by name as the operator reads it. */
export function nodeRows(site: Site, language: Language, t: Translate): NodeRow[] {
  const cores = (value: number) => formatNumber(language, value, 2);
  return [...site.nodes]
    .sort((a, b) => a.node.localeCompare(b.node, language, { numeric: true }))
    .map((member) => ({
      name: member.node,
      state: member.state,
      leader: member.node === site.leader,
      answering: member.node === site.node,
      cpu: t('site.cpuFigures', {
        used: cores(member.cpu_used_cores),
        capacity: cores(member.capacity_cores),
      }),
      memory: t('site.memoryFigures', {
        used: formatBytes(language, member.memory.total_bytes - member.memory.free_bytes),
        total: formatBytes(language, member.memory.total_bytes),
      }),
      cameras: member.tasks.length,
      version: member.version,
    }));
}

/**
 * Where the placement verdict (headroom, unplaced cameras) is: the leader keeps it and any node
 * answers with it (it asks the leader); `elsewhere`: the leader did not answer it or has not planned
 * yet (the console names the leader); `pending`: this node leads but has not planned yet;
 * `no_leader`: none holds the lease.
 */
export type PlacementState =
  | { kind: 'here'; placement: Placement }
  | { kind: 'pending' }
  | { kind: 'elsewhere'; leader: string; apiUrl: string | null }
  | { kind: 'no_leader' };

export function placementState(site: Site): PlacementState {
  if (site.placement) return { kind: 'here', placement: site.placement };
  if (site.leader === null) return { kind: 'no_leader' };
  if (site.leader === site.node) return { kind: 'pending' };
  const leader = site.nodes.find((member) => member.node === site.leader);
  return { kind: 'elsewhere', leader: site.leader, apiUrl: leader?.api_url ?? null };
}

/** The headroom verdict in words: whether the others could take the cameras of the node worst to lose. */
export function headroomText(headroom: Placement['headroom'], language: Language, t: Translate): string {
  if (headroom.node === null) return t('site.headroomIdle');
  const figures = {
    node: headroom.node,
    cameras: headroom.cameras,
    needed: formatNumber(language, headroom.needed_cores, 2),
    spare: formatNumber(language, headroom.spare_cores, 2),
  };
  return headroom.ok
    ? t('site.headroomOk', figures)
    : t('site.headroomShort', { ...figures, count: headroom.would_unplace });
}

/**
 * A camera no node takes, and why: the reason in the operator's language, the engine's detail (which
 * node lacks what) as it wrote it.
 */
export function unplacedText(unplaced: Placement['unplaced'][number], title: string, t: Translate): string {
  return t('site.unplacedItem', {
    camera: title,
    reason: t(unplaced.reason === 'no_capacity' ? 'site.reason.noCapacity' : 'site.reason.noEligibleNode'),
    detail: unplaced.detail,
  });
}
