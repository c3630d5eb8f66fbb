import { type Static, Type } from '@sinclair/typebox';
import { TASK_GPU, TASK_PRIORITY } from '../tasks/limits';

/**
 * The shapes placement reads and writes. Node cards and the plan travel between nodes over NATS as
 * JSON, so each is a schema and its type is derived from it. The objects allow properties they do not
 * name on purpose: during a rolling upgrade a newer node's card or plan, with a field this version does
 * not know, must still be read by an older placement leader, not refused.
 */

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 253, description });
const Cores = (description: string) => Type.Number({ minimum: 0, maximum: 4096, description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

/** Higher goes first, and may displace a lower one when the site is short of room (a task's priority). */
export const PRIORITY_MIN = TASK_PRIORITY.min;
export const PRIORITY_MAX = TASK_PRIORITY.max;
/** A camera whose task names no priority. */
export const PRIORITY_DEFAULT = TASK_PRIORITY.default;

/** What a node tells the placement leader about itself (its card, renewed with its lease). */
export const NodeCard = Type.Object({
  name: Name('The node name, unique in the site'),
  api_url: Type.String({ description: 'Where the other nodes reach its API' }),
  version: Type.String({ description: 'Its engine version' }),
  state: Type.Union([Type.Literal('up'), Type.Literal('draining')], {
    description: 'up takes cameras; draining takes none and gives its own away (disk full, leaving)',
  }),
  capacity_cores: Cores("Cores' worth of CPU it gives to cameras (its cores less what it keeps back)"),
  max_cameras: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Cameras it takes at most whatever they cost (--cluster max cameras); null: no count limit',
  }),
  cpu_used_cores: Cores('CPU it uses now, measured (engine, inference hosts and ffmpegs)'),
  memory: Type.Object({ total_bytes: Count('Physical memory'), free_bytes: Count('Memory free') }),
  gpu: Type.Boolean({
    description:
      'Whether its models run on a GPU provider (as its inference hosts opened them, engine/inference/gpu-use.ts): cameras that require or prefer a GPU may use it',
  }),
  models: Type.Array(Type.String(), { description: 'Models installed on it (package/model ids)' }),
  cameras: Type.Array(Type.String(), { description: 'Task ids of the cameras it runs now' }),
  demands: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object({
        cost_cores: Cores('What the camera costs here, measured (task-cost.ts)'),
        models: Type.Array(Type.String(), { description: 'Models its apps use' }),
        priority: Type.Optional(
          Type.Integer({ minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, description: "Its task's priority" }),
        ),
        // Optional: a card from a node older than GPU constraints has none (its cameras: none).
        gpu: Type.Optional(
          Type.Union(
            TASK_GPU.map((value) => Type.Literal(value)),
            { description: "Its task's GPU constraint: required, preferred or none" },
          ),
        ),
      }),
      {
        description:
          "Per camera it runs, what placement needs to place it elsewhere: read from the card a dead node left, its cameras' costs and models are still known",
      },
    ),
  ),
  started_at: Type.Optional(Type.Number({ description: 'When its engine started (ms since the epoch)' })),
  warm: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Tasks it warms up for a planned move (make-before-break) that analyse here already, their output held back: ready to be handed over',
    }),
  ),
});
export type NodeCard = Static<typeof NodeCard>;

/** One camera (a running video task) as placement sees it. */
export const CameraDemand = Type.Object({
  task_id: Name('The task'),
  cost_cores: Cores('Its measured cost: decode + inference CPU, in cores (task-cost.ts)'),
  priority: Type.Integer({ minimum: PRIORITY_MIN, maximum: PRIORITY_MAX, description: 'Higher first' }),
  needs_gpu: Type.Boolean({ description: 'Only a node with a GPU may run it (its task requires one)' }),
  prefers_gpu: Type.Optional(
    Type.Boolean({ description: 'A node with a GPU takes it when one has room (its task prefers one)' }),
  ),
  models: Type.Array(Type.String(), { description: 'Models its apps use: a node must have all of them' }),
  unreachable_on: Type.Array(Type.String(), {
    description: 'Nodes that failed to open its source (a camera on a network one node cannot reach)',
  }),
  node: Type.Union([Type.String(), Type.Null()], {
    description: 'The node that runs it now (holds its lease); null when none does',
  }),
});
export type CameraDemand = Static<typeof CameraDemand>;

export const MoveReason = Type.Union([
  Type.Literal('unplaced'),
  Type.Literal('node_lost'),
  Type.Literal('not_eligible'),
  Type.Literal('displaced'),
  Type.Literal('make_room'),
  Type.Literal('over_capacity'),
  Type.Literal('draining'),
  Type.Literal('rebalance'),
]);
/**
 * Why a camera goes to a node this round. Forced (not counted against the round's planned moves):
 * unplaced (new, or found no room before), node_lost (its node is gone), not_eligible (its node can no
 * longer run it: its source failed to open there, or the model or GPU is gone), displaced (a camera of
 * higher priority took its room), make_room (moved, still running, to make room on the only kind of node
 * a camera that fits nowhere else can run on). Planned, at most a few a round: over_capacity (its node's
 * cameras cost more than it has), draining, rebalance.
 */
export type MoveReason = Static<typeof MoveReason>;
/** The reasons of planned moves: at most MAX_PLANNED_MOVES of them a round (placement-round.ts). */
export const PLANNED_REASONS: readonly MoveReason[] = ['over_capacity', 'draining', 'rebalance'];

/**
 * A camera to start on `to`. Make-before-break: start it on `to` first, then stop it on `from` once it
 * runs there; `from` is null when it runs nowhere now.
 */
export const Move = Type.Object({
  task_id: Type.String(),
  from: Type.Union([Type.String(), Type.Null()]),
  to: Type.String(),
  reason: MoveReason,
});
export type Move = Static<typeof Move>;

/** A camera no node takes this round, and why, in words for the operator. */
export const Unplaced = Type.Object({
  task_id: Type.String(),
  reason: Type.Union([Type.Literal('no_eligible_node'), Type.Literal('no_capacity')]),
  detail: Type.String(),
});
export type Unplaced = Static<typeof Unplaced>;

/** Whether the site survives losing a node: the verdict of headroom.ts. */
export const Headroom = Type.Object({
  ok: Type.Boolean({ description: 'Whether the other nodes could absorb the cameras of any one node' }),
  node: Type.Union([Type.String(), Type.Null()], {
    description: 'The node whose loss leaves most cameras without a place (null: no node runs cameras)',
  }),
  cameras: Count('Cameras that node runs'),
  would_unplace: Count(
    'Cameras running now that its loss would leave without a place: its own, or lower-priority ones they would displace',
  ),
  // Optional: a plan an older leader wrote has none.
  left_out: Type.Optional(
    Type.Array(Type.String(), {
      maxItems: 100,
      description:
        'Which cameras (task ids) its loss would leave without a place, the first 100: the lowest priorities, since higher ones are placed first and take their room',
    }),
  ),
  spare_cores: Cores('Free capacity of the other up nodes'),
  needed_cores: Cores("What that node's cameras cost"),
  message: Type.String({ description: 'The verdict in words, for the console' }),
});
export type Headroom = Static<typeof Headroom>;

export const NodeLoad = Type.Object({
  node: Type.String(),
  cameras: Count('Cameras assigned to it by the plan'),
  load_cores: Cores('Their cost'),
  capacity_cores: Cores('Its capacity'),
});
export type NodeLoad = Static<typeof NodeLoad>;

/**
 * One placement round's result, and the state the next round starts from (it is the `previous` of the
 * next plan, so a new placement leader picks up where the last one left off).
 */
export const Plan = Type.Object({
  at: Type.Number({ description: 'When it was planned (ms, the clock the caller passed)' }),
  assignment: Type.Record(Type.String(), Type.String(), {
    description: 'Every placed camera: task id -> node; unplaced cameras are absent',
  }),
  moves: Type.Array(Move, {
    description: 'What changed since the previous plan, in the order to start them',
  }),
  unplaced: Type.Array(Unplaced),
  headroom: Headroom,
  loads: Type.Array(NodeLoad, { description: 'Up and draining nodes by name' }),
  moved_at: Type.Record(Type.String(), Type.Number(), {
    description: 'When each camera last moved (ms): a recently moved camera is left out of rebalancing',
  }),
  rebalancing: Type.Boolean({
    description: 'Whether a rebalance is under way: it starts past one spread and runs until no move helps',
  }),
});
export type Plan = Static<typeof Plan>;
