import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { headroom } from '../engine/cluster/headroom';
import { plan } from '../engine/cluster/placement';
import { MAX_PLANNED_MOVES, MOVE_COOLDOWN_MS, place } from '../engine/cluster/placement-round';
import { type CameraDemand, NodeCard, Plan } from '../engine/cluster/placement-schema';
import { taskCost, UNMEASURED_CAMERA_CORES } from '../engine/cluster/task-cost';
import type { TaskHealth } from '../engine/contract/health';
import { random } from './helpers/change-pairs';

/**
 * Placement as the placement leader runs it, on cards and cameras built here: pure functions over
 * values, no engine, no NATS, no clock (each round is given its time). The lead carrying a plan out is
 * modelled as every camera then running where the plan put it.
 */

const node = (name: string, extra: Partial<NodeCard> = {}): NodeCard => ({
  name,
  api_url: `http://${name}:8080`,
  version: '0.1.0',
  state: 'up',
  capacity_cores: 4,
  max_cameras: null,
  cpu_used_cores: 0,
  memory: { total_bytes: 8e9, free_bytes: 4e9 },
  gpu: false,
  models: ['coco'],
  cameras: [],
  ...extra,
});

const camera = (task_id: string, extra: Partial<CameraDemand> = {}): CameraDemand => ({
  task_id,
  cost_cores: 0.25,
  priority: 50,
  needs_gpu: false,
  models: ['coco'],
  unreachable_on: [],
  node: null,
  ...extra,
});

const ids = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(3, '0')}`);
const cams = (prefix: string, n: number, extra: Partial<CameraDemand> = {}) =>
  ids(prefix, n).map((id) => camera(id, extra));

/** Every camera running where the plan put it (unplaced ones stopped). */
const carriedOut = (cameras: readonly CameraDemand[], done: Plan): CameraDemand[] =>
  cameras.map((c) => ({ ...c, node: done.assignment[c.task_id] ?? null }));

const counts = (done: Plan) => Object.fromEntries(done.loads.map((load) => [load.node, load.cameras]));

const ROUND_MS = 2_000;

/** Rounds, each carried out, until one moves nothing; the moves of each round. */
function settle(nodes: NodeCard[], start: CameraDemand[], previous: Plan | null, at: number) {
  let cameras = start;
  let last = previous;
  let now = at;
  const movesPerRound: number[] = [];
  for (let round = 0; round < 100; round += 1) {
    const next = plan(nodes, cameras, last, now);
    cameras = carriedOut(cameras, next);
    last = next;
    now += ROUND_MS;
    movesPerRound.push(next.moves.length);
    if (next.moves.length === 0) break;
  }
  return { plan: last as Plan, cameras, movesPerRound, now };
}

const spreadOf = (done: Plan, nodes: readonly string[]) => {
  const byNode = counts(done);
  const values = nodes.map((name) => byNode[name] ?? 0);
  return Math.max(...values) - Math.min(...values);
};

describe('balance: equal nodes, 18 cameras', () => {
  const three = [node('a'), node('b'), node('c')];

  it('places 6, 6 and 6, each a start from nowhere', () => {
    const done = plan(three, cams('cam', 18), null, 0);
    expect(counts(done)).toEqual({ a: 6, b: 6, c: 6 });
    expect(done.moves.map((move) => [move.from, move.reason])).toEqual(
      Array.from({ length: 18 }, () => [null, 'unplaced']),
    );
    expect(done.unplaced).toEqual([]);
    expect(Value.Check(Plan, done)).toBe(true);
  });

  it('with measured costs that differ (0.15 to 0.35 cores): max - min <= 1 camera', () => {
    const next = random(7);
    const cameras = cams('cam', 18).map((c) => ({ ...c, cost_cores: 0.15 + 0.2 * next() }));
    expect(spreadOf(plan(three, cameras, null, 0), ['a', 'b', 'c'])).toBeLessThanOrEqual(1);
  });

  it('a node lost and back: 9 and 9, then 6, 6 and 6 again, a few planned moves a round', () => {
    const start = settle(three, cams('cam', 18), null, 0);
    // Hours later (every camera settled, past the cooldown) b is lost, and back shortly after.
    const lost = settle([node('a'), node('c')], start.cameras, start.plan, start.now + MOVE_COOLDOWN_MS);
    expect(counts(lost.plan)).toEqual({ a: 9, c: 9 });
    const back = settle(three, lost.cameras, lost.plan, lost.now);
    expect(counts(back.plan)).toEqual({ a: 6, b: 6, c: 6 });
    expect(back.movesPerRound).toEqual([4, 2, 0]);
    expect(back.plan.rebalancing).toBe(false);
  });
});

describe('rebalancing with hysteresis: a node joins, costs are noisy', () => {
  const jitter = (next: () => number, cameras: CameraDemand[], base: Map<string, number>, band: number) =>
    cameras.map((c) => ({
      ...c,
      cost_cores: (base.get(c.task_id) as number) * (1 - band + 2 * band * next()),
    }));

  it('18 cameras on 2 nodes, a third joins: max - min <= 1 camera, then 300 noisy rounds move nothing more', () => {
    const next = random(5);
    const two = [node('a'), node('b')];
    // Cameras alike, their measured costs jittering +-20 % a round.
    const base = new Map(ids('cam', 18).map((id) => [id, 0.25]));
    const start = settle(two, jitter(next, cams('cam', 18), base, 0), null, 0);
    expect(spreadOf(start.plan, ['a', 'b'])).toBeLessThanOrEqual(1);
    const three = [...two, node('c')];
    let cameras = start.cameras;
    let last = start.plan;
    const movesOf = new Map<string, number>();
    const reasons = new Set<string>();
    for (let round = 1; round <= 300; round += 1) {
      cameras = jitter(next, cameras, base, 0.2);
      last = plan(three, cameras, last, start.now + MOVE_COOLDOWN_MS + round * ROUND_MS);
      cameras = carriedOut(cameras, last);
      for (const move of last.moves) {
        movesOf.set(move.task_id, (movesOf.get(move.task_id) ?? 0) + 1);
        reasons.add(move.reason);
      }
    }
    expect(spreadOf(last, ['a', 'b', 'c'])).toBeLessThanOrEqual(1);
    // Only the joining node's share moved, each camera once, all of it rebalancing: no flapping.
    expect([...reasons]).toEqual(['rebalance']);
    expect([...movesOf.values()].every((n) => n === 1)).toBe(true);
    expect(counts(last).c).toBe(movesOf.size);
    expect(last.rebalancing).toBe(false);
  });

  it('a site evened out stays put when the spread stays under the start: the cost of one camera swings', () => {
    const two = [node('a'), node('b')];
    const start = settle(two, cams('cam', 8), null, 0);
    // One camera of a's doubles its cost: a's share rises by 0.06, far under the start of a rebalance.
    const onA = Object.keys(start.plan.assignment).find((task) => start.plan.assignment[task] === 'a');
    const swung = start.cameras.map((c) => (c.task_id === onA ? { ...c, cost_cores: 0.5 } : c));
    expect(plan(two, swung, start.plan, start.now + MOVE_COOLDOWN_MS).moves).toEqual([]);
  });
});

describe('failure and drain', () => {
  const three = [node('a'), node('b'), node('c')];

  it("a dead node's cameras go to the survivors now; no other camera moves", () => {
    const start = settle(three, cams('cam', 18), null, 0);
    const onB = Object.keys(start.plan.assignment).filter((task) => start.plan.assignment[task] === 'b');
    const done = plan([node('a'), node('c')], start.cameras, start.plan, start.now);
    // Forced moves are not held to the planned budget: all six at once, from nowhere (b is gone).
    expect(done.moves.map((move) => [move.task_id, move.from, move.reason])).toEqual(
      onB.map((task) => [task, null, 'node_lost']),
    );
    const others = (record: Record<string, string>) =>
      Object.fromEntries(Object.entries(record).filter(([task]) => !onB.includes(task)));
    expect(others(done.assignment)).toEqual(others(start.plan.assignment));
    expect(counts(done)).toEqual({ a: 9, c: 9 });
  });

  it('a draining node is emptied by planned moves, at most MAX_PLANNED_MOVES a round, make-before-break', () => {
    const start = settle(three, cams('cam', 18), null, 0);
    const drained = [node('a'), node('b', { state: 'draining' }), node('c')];
    const first = plan(drained, start.cameras, start.plan, start.now);
    expect(first.moves.map((move) => [move.from, move.reason])).toEqual(
      Array.from({ length: MAX_PLANNED_MOVES }, () => ['b', 'draining']),
    );
    const done = settle(drained, start.cameras, start.plan, start.now);
    expect(done.movesPerRound).toEqual([4, 2, 0]);
    expect(counts(done.plan)).toEqual({ a: 9, b: 0, c: 9 });
  });

  it('a node over its capacity (its cameras cost more now) gives away the ones that no longer fit', () => {
    const two = [node('a', { capacity_cores: 2 }), node('b', { capacity_cores: 2 })];
    const start = settle(two, cams('cam', 8), null, 0);
    const onA = Object.keys(start.plan.assignment).filter((task) => start.plan.assignment[task] === 'a');
    const dearer = start.cameras.map((c) => (onA.includes(c.task_id) ? { ...c, cost_cores: 0.6 } : c));
    // Within the cooldown of their placement, the measure of a camera just started is not trusted.
    expect(plan(two, dearer, start.plan, start.now).moves).toEqual([]);
    const done = plan(two, dearer, start.plan, start.now + MOVE_COOLDOWN_MS);
    // 3 x 0.6 fit in 2 cores, the fourth (last by id) does not; b has room.
    expect(done.moves).toEqual([{ task_id: onA[3], from: 'a', to: 'b', reason: 'over_capacity' }]);
    expect(done.loads).toEqual([
      { node: 'a', cameras: 3, load_cores: 1.8, capacity_cores: 2 },
      { node: 'b', cameras: 5, load_cores: 1.6, capacity_cores: 2 },
    ]);
  });

  it('a planned move under way (runs on one node, planned on another) is not decided again', () => {
    const start = settle(three, cams('cam', 3), null, 0);
    const moving = { ...start.plan, assignment: { ...start.plan.assignment, cam001: 'b' } };
    const done = plan(three, start.cameras, moving, start.now);
    expect(done.moves).toEqual([]);
    expect(done.assignment.cam001).toBe('b');
  });

  it('a planned move whose target dies: the camera stays where it runs, which is no move', () => {
    const start = settle(three, cams('cam', 3), null, 0);
    const moving = { ...start.plan, assignment: { ...start.plan.assignment, cam001: 'b' } };
    const done = plan([node('a'), node('c')], start.cameras, moving, start.now);
    expect(done.moves).toEqual([{ task_id: 'cam002', from: null, to: 'a', reason: 'node_lost' }]);
    expect(done.assignment).toEqual({ cam001: 'a', cam002: 'a', cam003: 'c' });
  });
});

describe('constraints', () => {
  it('a GPU camera on a GPU node, a model where it is installed, a source where it opens; else why not', () => {
    const nodes = [
      node('a', { gpu: true }),
      node('b', { models: ['coco', 'fire'] }),
      node('c'),
      node('d', { state: 'draining', gpu: true, models: ['coco', 'fire'] }),
    ];
    const done = plan(
      nodes,
      [
        camera('gpu', { needs_gpu: true }),
        camera('fire', { models: ['coco', 'fire'] }),
        camera('far', { unreachable_on: ['a', 'b'] }),
        camera('none', { needs_gpu: true, models: ['fire'] }),
      ],
      null,
      0,
    );
    expect(done.assignment).toEqual({ gpu: 'a', fire: 'b', far: 'c' });
    expect(done.unplaced).toEqual([
      {
        task_id: 'none',
        reason: 'no_eligible_node',
        detail: 'no up node can run it (a: lacks model fire; b: no GPU; c: no GPU)',
      },
    ]);
  });

  it('a running camera whose source no longer opens on its node moves at once', () => {
    const nodes = [node('a'), node('b')];
    const start = settle(nodes, cams('cam', 4), null, 0);
    const cameras = start.cameras.map((c) => (c.task_id === 'cam001' ? { ...c, unreachable_on: ['a'] } : c));
    expect(start.plan.assignment.cam001).toBe('a');
    expect(plan(nodes, cameras, start.plan, start.now).moves).toEqual([
      { task_id: 'cam001', from: 'a', to: 'b', reason: 'not_eligible' },
    ]);
  });

  it('a node takes no more than its camera limit, and a full site says how full', () => {
    const nodes = [node('a', { max_cameras: 1, capacity_cores: 10 }), node('b', { capacity_cores: 0.5 })];
    const done = plan(nodes, cams('cam', 4), null, 0);
    expect(counts(done)).toEqual({ a: 1, b: 2 });
    expect(done.unplaced).toEqual([
      {
        task_id: 'cam004',
        reason: 'no_capacity',
        detail:
          'needs 0.25 cores; the nodes that can run it are full (a: at its 1-camera limit; b: 0.00 free)',
      },
    ]);
  });

  it('no node up: every camera unplaced, saying so', () => {
    expect(plan([node('a', { state: 'draining' })], [camera('cam')], null, 0).unplaced).toEqual([
      { task_id: 'cam', reason: 'no_eligible_node', detail: 'no node is up' },
    ]);
  });
});

describe('priority', () => {
  const two = [node('a', { capacity_cores: 1 }), node('b', { capacity_cores: 1 })];

  it('short of room, higher priority is placed first; the lowest-priority, last by id, are left out', () => {
    // 'vip' sorts after 'low': only priority puts them first.
    const cameras = [...cams('low', 8, { priority: 10 }), ...cams('vip', 2, { priority: 90 })];
    const done = plan(two, cameras, null, 0);
    expect(Object.keys(done.assignment)).toEqual(['vip001', 'vip002', ...ids('low', 6)]);
    expect(done.unplaced.map((u) => [u.task_id, u.reason])).toEqual([
      ['low007', 'no_capacity'],
      ['low008', 'no_capacity'],
    ]);
  });

  it('a new camera of higher priority displaces a running lower one when the site is full', () => {
    const start = settle(two, cams('low', 8, { priority: 10 }), null, 0);
    const done = plan(two, [...start.cameras, camera('high', { priority: 90 })], start.plan, start.now);
    const victim = Object.keys(start.plan.assignment)
      .filter((task) => start.plan.assignment[task] === 'a')
      .sort()[0];
    expect(done.moves).toEqual([{ task_id: 'high', from: null, to: 'a', reason: 'unplaced' }]);
    expect(done.unplaced).toEqual([
      {
        task_id: victim,
        reason: 'no_capacity',
        detail: 'needs 0.25 cores; the nodes that can run it are full (a: 0.00 free; b: 0.00 free)',
      },
    ]);
    expect(done.assignment[victim as string]).toBeUndefined();
    // The next round, before its node has stopped it: it is still out, not kept where it runs.
    const slow = [...start.cameras, camera('high', { priority: 90, node: 'a' })];
    const next = plan(two, slow, done, start.now + ROUND_MS);
    expect([next.moves, next.assignment[victim as string], next.unplaced.map((u) => u.task_id)]).toEqual([
      [],
      undefined,
      [victim],
    ]);
  });

  it('a camera that fits nowhere makes room where only it can run: the camera there moves on, still running', () => {
    const nodes = [node('a', { capacity_cores: 0.5, gpu: true }), node('b', { capacity_cores: 1 })];
    const start = settle(nodes, cams('cam', 2), null, 0);
    expect(start.plan.assignment).toEqual({ cam001: 'b', cam002: 'a' });
    // Same priority: nothing may be displaced, but cam002 needs no GPU and b has room.
    const gpu = camera('gpu', { needs_gpu: true, cost_cores: 0.5 });
    const done = plan(nodes, [...start.cameras, gpu], start.plan, start.now);
    expect(done.moves).toEqual([
      { task_id: 'cam002', from: 'a', to: 'b', reason: 'make_room' },
      { task_id: 'gpu', from: null, to: 'a', reason: 'unplaced' },
    ]);
    expect(done.unplaced).toEqual([]);
  });
});

describe('a task that prefers or requires a GPU', () => {
  const nodes = [node('a'), node('b', { gpu: true }), node('c')];

  it('a camera that prefers a GPU goes to a GPU node with room before emptier ones; to any node once those are full', () => {
    const busy = cams('busy', 3, { node: 'b', cost_cores: 1 });
    const done = plan(nodes, [...busy, camera('pref', { prefers_gpu: true }), camera('plain')], null, 0);
    // a and c are empty, b holds 3 of its 4 cores: only the preference sends a camera there.
    expect(done.assignment).toMatchObject({ pref: 'b', plain: 'a' });
    const full = plan(
      nodes,
      [...cams('busy', 4, { node: 'b', cost_cores: 1 }), camera('pref', { prefers_gpu: true })],
      null,
      0,
    );
    expect(full.assignment).toMatchObject({ pref: 'a' });
    expect(full.unplaced).toEqual([]);
  });

  it('a rebalance evens cameras out, but never a preferring one off its GPU node onto one without', () => {
    // b holds 3.6 of its 4 cores, a and c nothing: far past the spread at which a rebalance starts.
    const start = [
      ...cams('pref', 6, { node: 'b', cost_cores: 0.45, prefers_gpu: true }),
      ...cams('plain', 2, { node: 'b', cost_cores: 0.45 }),
    ];
    const done = settle(nodes, start, null, 0);
    // The plain ones moved out to the empty nodes; every preferring one stayed on the GPU.
    expect(done.movesPerRound[0]).toBeGreaterThan(0);
    for (const id of ids('pref', 6)) expect(done.plan.assignment[id]).toBe('b');
    for (const id of ids('plain', 2)) expect(done.plan.assignment[id]).not.toBe('b');
  });

  it('a camera that requires a GPU leaves a node without one for a GPU node, and with none up is left out, saying why', () => {
    const running = camera('req', { needs_gpu: true, node: 'a' });
    const moved = plan(nodes, [running], null, 0);
    expect(moved.moves).toEqual([{ task_id: 'req', from: 'a', to: 'b', reason: 'not_eligible' }]);
    const noGpu = plan([node('a'), node('c')], [running], null, 0);
    expect(noGpu.assignment).toEqual({});
    expect(noGpu.unplaced).toEqual([
      { task_id: 'req', reason: 'no_eligible_node', detail: 'no up node can run it (a: no GPU; c: no GPU)' },
    ]);
  });
});

describe('priority under shortage', () => {
  const three = ['a', 'b', 'c'].map((name) => node(name, { capacity_cores: 2 }));
  // 6 cameras of priority 90 and 12 of 10, 0.3 cores each: 6 a node, 1.8 of 2 cores.
  const cameras = [
    ...cams('low', 12, { priority: 10, cost_cores: 0.3 }),
    ...cams('vip', 6, { priority: 90, cost_cores: 0.3 }),
  ];

  it('the headroom verdict names the cameras a loss would leave out: the lowest priorities', () => {
    const start = settle(three, cameras, null, 0);
    expect(counts(start.plan)).toEqual({ a: 6, b: 6, c: 6 });
    const verdict = start.plan.headroom;
    // Losing a node of 6: the 2 survivors have 0.2 spare cores each, room for none of them.
    expect([verdict.ok, verdict.would_unplace, verdict.left_out?.length]).toEqual([false, 6, 6]);
    expect(verdict.left_out?.every((task) => task.startsWith('low'))).toBe(true);
  });

  it('after the loss, every camera of priority 90 runs; cameras of priority 10 make room and stay unplaced', () => {
    const start = settle(three, cameras, null, 0);
    // a is lost: the node the verdict named.
    expect(start.plan.headroom.node).toBe('a');
    const done = plan(three.slice(1), start.cameras, start.plan, start.now);
    const placed = Object.keys(done.assignment);
    expect(ids('vip', 6).every((task) => placed.includes(task))).toBe(true);
    expect(done.unplaced.map((u) => [u.task_id.slice(0, 3), u.reason])).toEqual(
      Array.from({ length: 6 }, () => ['low', 'no_capacity']),
    );
    // What was predicted before the loss is what happened.
    expect(done.unplaced.map((u) => u.task_id).sort()).toEqual(
      [...(start.plan.headroom.left_out ?? [])].sort(),
    );
  });
});

describe('hysteresis', () => {
  const ten = ids('node', 10).map((name) => node(name));

  it('costs jittering +-40 % every round for 100 rounds move no camera', () => {
    const next = random(42);
    const start = settle(ten, cams('cam', 100), null, 0);
    let cameras = start.cameras;
    let last = start.plan;
    const moves: number[] = [];
    for (let round = 1; round <= 100; round += 1) {
      cameras = cameras.map((c) => ({ ...c, cost_cores: 0.25 * (0.6 + 0.8 * next()) }));
      last = plan(ten, cameras, last, start.now + MOVE_COOLDOWN_MS + round * ROUND_MS);
      cameras = carriedOut(cameras, last);
      moves.push(last.moves.length);
    }
    expect(moves).toEqual(Array.from({ length: 100 }, () => 0));
  });

  it('a full site (10, 10 and 9 cameras on nodes of 2.5 cores) with costs jittering +-15 % moves nothing', () => {
    const three = ['a', 'b', 'c'].map((name) => node(name, { capacity_cores: 2.5 }));
    const next = random(11);
    const start = settle(three, cams('cam', 29), null, 0);
    expect(counts(start.plan)).toEqual({ a: 10, b: 10, c: 9 });
    let cameras = start.cameras;
    let last = start.plan;
    let moves = 0;
    for (let round = 1; round <= 100; round += 1) {
      cameras = cameras.map((c) => ({ ...c, cost_cores: 0.25 * (0.85 + 0.3 * next()) }));
      last = plan(three, cameras, last, start.now + MOVE_COOLDOWN_MS + round * ROUND_MS);
      cameras = carriedOut(cameras, last);
      moves += last.moves.length;
    }
    expect([moves, last.unplaced]).toEqual([0, []]);
  });

  it('a camera that moved is not rebalanced again within the cooldown', () => {
    const start = settle([node('a'), node('b')], cams('cam', 8), null, 0);
    // b is lost, its cameras move to a; b comes back at once: only a's own four may rebalance.
    const lost = plan([node('a')], start.cameras, start.plan, start.now + MOVE_COOLDOWN_MS);
    const moved = lost.moves.map((move) => move.task_id);
    const back = settle([node('a'), node('b')], carriedOut(start.cameras, lost), lost, lost.at + 1);
    expect(back.now - lost.at).toBeLessThan(MOVE_COOLDOWN_MS);
    expect(counts(back.plan)).toEqual({ a: 4, b: 4 });
    expect(moved.every((task) => back.plan.assignment[task] === 'a')).toBe(true);
  });

  it('a rebalance under way stops at one camera of difference: one more move would only mirror it', () => {
    const two = [node('a'), node('b')];
    const start = settle(two, cams('cam', 9), null, 0);
    expect(counts(start.plan)).toEqual({ a: 5, b: 4 });
    const done = plan(two, start.cameras, { ...start.plan, rebalancing: true }, start.now + MOVE_COOLDOWN_MS);
    expect([done.moves, done.rebalancing]).toEqual([[], false]);
  });

  it('the same inputs in any order give the same plan', () => {
    const nodes = [node('a'), node('b', { gpu: true }), node('c', { capacity_cores: 2 })];
    const next = random(3);
    const cameras = cams('cam', 30).map((c, i) => ({
      ...c,
      cost_cores: Math.round((0.1 + 0.3 * next()) * 100) / 100,
      priority: i % 3 === 0 ? 80 : 50,
      needs_gpu: i % 7 === 0,
    }));
    const forward = plan(nodes, cameras, null, 0);
    const shuffled = plan(
      [...nodes].reverse(),
      [...cameras.slice(11), ...cameras.slice(0, 11)].reverse(),
      null,
      0,
    );
    expect(shuffled).toEqual(forward);
  });
});

describe('headroom: could the other nodes absorb a lost one', () => {
  const three = [
    node('a', { capacity_cores: 10 }),
    node('b', { capacity_cores: 10 }),
    node('c', { capacity_cores: 10 }),
  ];

  it('24 cameras on 3 nodes of capacity 10: warned before the loss; after it, 4 unplaced and why', () => {
    const start = settle(three, cams('cam', 24, { cost_cores: 1 }), null, 0);
    expect(counts(start.plan)).toEqual({ a: 8, b: 8, c: 8 });
    const onA = Object.keys(start.plan.assignment).filter((task) => start.plan.assignment[task] === 'a');
    expect(start.plan.headroom).toEqual({
      ok: false,
      node: 'a',
      cameras: 8,
      would_unplace: 4,
      // Which: equal priorities and costs, the last four by id are placed last.
      left_out: onA.slice(4),
      spare_cores: 4,
      needed_cores: 8,
      message:
        'losing a would leave 4 cameras without a place (its 8 cameras need 8.00 cores, the other nodes have 4.00 spare): add a node or capacity',
    });
    const onC = Object.keys(start.plan.assignment).filter((task) => start.plan.assignment[task] === 'c');
    const done = plan(three.slice(0, 2), start.cameras, start.plan, start.now);
    expect(done.moves.map((move) => move.task_id)).toEqual(onC.slice(0, 4));
    expect(done.unplaced).toEqual(
      onC.slice(4).map((task_id) => ({
        task_id,
        reason: 'no_capacity',
        detail: 'needs 1.00 cores; the nodes that can run it are full (a: 0.00 free; b: 0.00 free)',
      })),
    );
    expect(done.headroom).toMatchObject({
      ok: false,
      node: 'a',
      cameras: 10,
      would_unplace: 10,
      spare_cores: 0,
    });
  });

  it('enough room: the verdict says so, with the figures', () => {
    const done = plan(three, cams('cam', 12, { cost_cores: 1 }), null, 0);
    expect(done.headroom).toEqual({
      ok: true,
      node: 'a',
      cameras: 4,
      would_unplace: 0,
      left_out: [],
      spare_cores: 12,
      needed_cores: 4,
      message:
        'losing a leaves every camera a place: its 4 cameras need 4.00 cores, the other nodes have 12.00 spare',
    });
  });

  it('the worst loss is not always the largest node: the only GPU node, though smaller', () => {
    const nodes = [
      node('a', { gpu: true }),
      node('b', { capacity_cores: 10 }),
      node('c', { capacity_cores: 10 }),
    ];
    // The GPU cameras cost more, so they are placed first and fill most of a.
    const cameras = [
      ...cams('gpu', 2, { needs_gpu: true, cost_cores: 1.5 }),
      ...cams('cam', 10, { cost_cores: 1 }),
    ];
    const done = plan(nodes, cameras, null, 0);
    expect(counts(done)).toEqual({ a: 2, b: 5, c: 5 });
    expect(done.headroom).toMatchObject({ ok: false, node: 'a', cameras: 2, would_unplace: 2 });
    expect(headroom(nodes, cameras, place(nodes, [], null, 0))).toMatchObject({
      ok: true,
      node: null,
      message: 'no node runs cameras',
    });
  });
});

describe('task cost: cores from what the engine measures', () => {
  const health = (
    extra: Partial<TaskHealth> = {},
    stream: Partial<NonNullable<TaskHealth['stream']>> = {},
  ) => ({
    stream: {
      state: 'running' as const,
      width: 1920,
      height: 1080,
      fps: 25,
      reconnects: 0,
      black_frames: 0,
      last_error: null,
      full_rate: false,
      rate_switch_error: null,
      decoder: { hwaccel: 'none' as const, fallback: null },
      ...stream,
    },
    analysed_fps: 4.2,
    target_fps: 5,
    inference_ms: 20,
    ai_video: [],
    ...extra,
  });
  const cost = (...args: Parameters<typeof taskCost>) => Math.round(taskCost(...args) * 10_000) / 10_000;

  it('decode by pixel rate and path, inference at the target rate per model, measured ffmpeg CPU first', () => {
    expect({
      unmeasured: cost({ health: null, models: 1 }),
      '1080p25 software, 5 fps, 20 ms': cost({ health: health(), models: 1 }),
      'on cuda': cost({ health: health({}, { decoder: { hwaccel: 'cuda', fallback: null } }), models: 1 }),
      '720p25': cost({ health: health({}, { width: 1280, height: 720 }), models: 1 }),
      'two models': cost({ health: health(), models: 2 }),
      'a 2 fps source caps the rate': cost({ health: health({}, { fps: 2 }), models: 1 }),
      'before its first frame and inference': cost({
        health: health({ inference_ms: null }, { width: null, height: null, fps: 0 }),
        models: 1,
      }),
      'measured ffmpeg 0.3 cores': cost({ health: health(), models: 1, ffmpegCores: 0.3 }),
      'an AI video': cost({
        health: health({ ai_video: [{} as TaskHealth['ai_video'][number]] }),
        models: 1,
      }),
      'a still 0.1 fps camera': cost({
        health: health({ target_fps: 0.1, inference_ms: 5 }, { fps: 0.1, width: 640, height: 360 }),
        models: 1,
      }),
    }).toEqual({
      unmeasured: UNMEASURED_CAMERA_CORES,
      '1080p25 software, 5 fps, 20 ms': 0.25,
      'on cuda': 0.1525,
      '720p25': 0.1667,
      'two models': 0.35,
      'a 2 fps source caps the rate': 0.052,
      'before its first frame and inference': 0.25,
      'measured ffmpeg 0.3 cores': 0.4,
      'an AI video': 0.5,
      'a still 0.1 fps camera': 0.02,
    });
  });
});

describe('wire shapes', () => {
  it('a node card is checked by its schema; a newer node may add fields; a wrong state is refused', () => {
    expect(Value.Check(NodeCard, node('a'))).toBe(true);
    expect(Value.Check(NodeCard, { ...node('a'), disk_free_bytes: 1 })).toBe(true);
    expect(Value.Check(NodeCard, { ...node('a'), state: 'gone' })).toBe(false);
    expect(Value.Check(NodeCard, { ...node('a'), capacity_cores: -1 })).toBe(false);
  });
});
