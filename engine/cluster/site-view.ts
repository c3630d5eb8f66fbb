import { type Static, Type } from '@sinclair/typebox';
import { Headroom, Unplaced } from './placement-schema';

const Assignment = Type.Object({
  node: Type.String({ description: 'The node that runs the task' }),
  epoch: Type.Integer({ minimum: 1, description: 'Counts the owners the task had: each move adds one' }),
  next: Type.Optional(
    Type.String({
      description:
        'A planned move under way (make-before-break): the node that warms the task up (opens its source and analyses, its output held back) before it takes the task over at the next epoch',
    }),
  ),
  parked: Type.Optional(
    Type.Literal(true, {
      description:
        'No node has room for it (cameras of higher priority took it): it runs nowhere until one has; node is where it ran last',
    }),
  ),
  taking: Type.Optional(
    Type.Literal(true, {
      description:
        'The node leaving the site takes this task out with it (POST /api/cluster/leave, take): it warms up there (next) and is handed over by that node, which the leader leaves alone while it is up',
    }),
  ),
});

const Member = Type.Object({
  node: Type.String(),
  api_url: Type.String({ description: "Where the other nodes reach this node's API" }),
  version: Type.String(),
  state: Type.Union([Type.Literal('up'), Type.Literal('silent'), Type.Literal('gone')], {
    description:
      'up: its heartbeat goes on; silent: none for 3 s of time the site could write (frozen or cut off: its tasks move); gone: its connection to NATS is gone (killed: its tasks move at once)',
  }),
  tasks: Type.Array(Type.String(), { description: 'Tasks whose events this node appends now' }),
  capacity_cores: Type.Number({ minimum: 0, description: "Cores' worth of CPU it gives to cameras" }),
  cpu_used_cores: Type.Number({ minimum: 0, description: 'CPU in use on its machine (1-minute load)' }),
  memory: Type.Object({
    total_bytes: Type.Integer({ minimum: 0 }),
    free_bytes: Type.Integer({ minimum: 0 }),
  }),
  gpu: Type.Boolean({
    description:
      'Whether its models run on a GPU provider: cameras whose task requires a GPU go only to such nodes',
  }),
});

/** GET /api/cluster: the site as the answering node sees it. */
export const SiteView = Type.Union([
  Type.Object({ enabled: Type.Literal(false) }),
  Type.Object({
    enabled: Type.Literal(true),
    node: Type.String({ description: 'The node that answered' }),
    leader: Type.Union([Type.String(), Type.Null()], { description: 'The node that places tasks now' }),
    nodes: Type.Array(Member),
    assignments: Type.Record(Type.String(), Assignment, { description: 'Which node runs each task' }),
    placement: Type.Union(
      [
        Type.Object({
          at: Type.Number({ description: 'When the leader last planned (ms since the epoch)' }),
          rebalancing: Type.Boolean({ description: 'Whether cameras are being moved to even the load' }),
          unplaced: Type.Array(Unplaced, { description: 'Cameras no node can take now, and why' }),
          headroom: Headroom,
        }),
        Type.Null(),
      ],
      {
        description:
          "The last placement round, as the leader planned it (another node asks the leader); null before the leader's first round or when it does not answer",
      },
    ),
  }),
]);
export type SiteView = Static<typeof SiteView>;
export type Assignment = Static<typeof Assignment>;
export type MemberView = Static<typeof Member>;

/** GET /api/cluster/tasks: every task the site knows, as shared, and the node that runs it. */
export const SiteTask = Type.Object({
  task_id: Type.String(),
  name: Type.String(),
  mode: Type.String({ description: 'video, image or diff' }),
  zapk_id: Type.String(),
  status: Type.String({
    description:
      'As last shared by the node that ran it: running (whatever its stream does now: ask the task itself) or closed',
  }),
  created_at: Type.Integer({ description: 'ms since the epoch' }),
  node: Type.Union([Type.String(), Type.Null()], { description: 'The node that runs it; null once closed' }),
  epoch: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
});
export type SiteTask = Static<typeof SiteTask>;

/** POST /api/cluster/leave: where the node stands in leaving its site. */
export const LeaveState = Type.Object({
  node: Type.String({ description: 'The node asked' }),
  state: Type.Union([Type.Literal('member'), Type.Literal('draining'), Type.Literal('left')], {
    description:
      'draining: its cameras move to the other nodes; left: it holds none, is out of the site and disconnected from it',
  }),
  tasks: Type.Integer({ minimum: 0, description: 'Tasks it still runs, warms up or hands over' }),
  taking: Type.Optional(
    Type.Array(Type.String(), {
      description: 'The tasks it takes out of the site with it: they run on here once it left',
    }),
  ),
});
export type LeaveState = Static<typeof LeaveState>;

/** Tasks one leave may take out of the site at most (each is a planned move to the leaving node). */
export const MAX_TAKE = 256;

/** POST /api/cluster/leave: which tasks the node takes out of the site with it (none by default). */
export const LeaveBody = Type.Object(
  {
    take: Type.Optional(
      Type.Union(
        [
          Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: MAX_TAKE, uniqueItems: true }),
          Type.Literal('all-mine'),
        ],
        {
          description:
            'Task ids, or "all-mine": the tasks this node brought into the site (their chains begin with it). They move here first (make-before-break), then leave the site with the node and run on here as a workstation\'s',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type LeaveBody = Static<typeof LeaveBody>;
