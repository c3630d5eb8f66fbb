import { plan } from '../engine/cluster/placement';
import {
  type CameraDemand,
  type NodeCard,
  PLANNED_REASONS,
  type Plan,
} from '../engine/cluster/placement-schema';
import { taskCost } from '../engine/cluster/task-cost';
import type { TaskHealth } from '../engine/contract/health';
import { random } from '../test/helpers/change-pairs';

/**
 * A simulated site driven through the placement planner over simulated time: 100 stand-in cameras on
 * 10 engines (no streams, no engines, no NATS: cards and costs only), through the events a site meets
 * (engines dying and joining, costs changing, a node draining). The lead carrying a plan out is
 * modelled as every camera running where the plan put it by the next round. Each row is one event,
 * followed round by round (every ROUND_MS, costs jittering as measurements do) until a round moves
 * nothing: the moves it took, what was left unplaced, the balance reached, the headroom verdict, and
 * the planner's own time per round (the one thing measured with a real clock).
 */

const ROUND_MS = 2_000;
/** Rounds an event is followed at most; a site that has not settled by then says so (settled: no). */
const MAX_ROUNDS = 60;
/** Measured costs move this much (+-) from one round to the next. */
const JITTER = 0.15;
/** Steady running between events: past the planner's move cooldown, so every camera is settled. */
const STEADY_ROUNDS = 150;
const SEED = 32;

export interface SiteRow {
  event: string;
  rounds: number;
  settled: string;
  moves: number;
  'forced moves': number;
  unplaced: number;
  'cameras max-min': number;
  'load max-min %': number;
  headroom: string;
  'plan ms (mean)': number;
  'plan ms (max)': number;
}

/** A stand-in camera: what its health would say, turned into a cost by the engine's own taskCost. */
interface StandIn {
  demand: CameraDemand;
  health: Pick<TaskHealth, 'stream' | 'target_fps' | 'analysed_fps' | 'inference_ms' | 'ai_video'>;
  models: number;
}

const NODES = Array.from({ length: 10 }, (_, i) => `node${String(i + 1).padStart(2, '0')}`);

function card(name: string, extra: Partial<NodeCard> = {}): NodeCard {
  const index = NODES.indexOf(name);
  return {
    name,
    api_url: `http://${name}:8080`,
    version: '0.1.0',
    state: 'up',
    // 4 cores each, half a core kept for the engine's own work and the control plane.
    capacity_cores: 3.5,
    max_cameras: null,
    cpu_used_cores: 0,
    memory: { total_bytes: 16e9, free_bytes: 8e9 },
    // Two GPU machines; fire detection installed on three nodes.
    gpu: index === 0 || index === 1,
    models: index >= 2 && index <= 4 ? ['coco', 'fire'] : ['coco'],
    cameras: [],
    ...extra,
  };
}

/** The site's 100 cameras: mostly 1080p25, some 720p, a few 4K on the GPU nodes, some with AI video. */
function standIns(next: () => number): StandIn[] {
  return Array.from({ length: 100 }, (_, i) => {
    const [width, height, fps] =
      i % 10 === 9 ? [3840, 2160, 15] : i % 5 === 1 ? [1280, 720, 25] : [1920, 1080, 25];
    const gpu = i % 10 === 9;
    return {
      demand: {
        task_id: `cam${String(i + 1).padStart(3, '0')}`,
        cost_cores: 0,
        priority: i % 10 === 0 ? 90 : 50,
        needs_gpu: gpu,
        models: i % 25 === 3 ? ['coco', 'fire'] : ['coco'],
        // A VLAN the last two nodes cannot reach.
        unreachable_on: i % 12 === 5 ? ['node09', 'node10'] : [],
        node: null,
      },
      health: {
        stream: {
          state: 'running',
          width,
          height,
          fps,
          reconnects: 0,
          black_frames: 0,
          last_error: null,
          full_rate: false,
          rate_switch_error: null,
          decoder: { hwaccel: gpu ? 'cuda' : 'none', fallback: null },
        },
        target_fps: 5,
        analysed_fps: 5,
        inference_ms: 16 + 8 * next(),
        ai_video: [],
      },
      models: i % 25 === 3 ? 2 : 1,
    };
  });
}

class Site {
  private readonly next = random(SEED);
  private readonly cameras = standIns(this.next);
  nodes = NODES.map((name) => card(name));
  private previous: Plan | null = null;
  private now = 0;
  /** Extra cores of AI videos turned on, by task. */
  readonly aiVideos = new Set<string>();

  /** One round: costs measured (with jitter), cards built, the plan made and carried out. */
  round(): { plan: Plan; ms: number } {
    const demands = this.cameras.map(({ demand, health, models }) => {
      const aiVideo = this.aiVideos.has(demand.task_id) ? [{} as TaskHealth['ai_video'][number]] : [];
      const cost = taskCost({ health: { ...health, ai_video: aiVideo }, models });
      return { ...demand, cost_cores: cost * (1 - JITTER + 2 * JITTER * this.next()) };
    });
    const cards = this.nodes.map((node) => {
      const mine = demands.filter((demand) => demand.node === node.name);
      const used = mine.reduce((sum, demand) => sum + demand.cost_cores, 0);
      return { ...node, cameras: mine.map((demand) => demand.task_id), cpu_used_cores: used };
    });
    const started = performance.now();
    const done = plan(cards, demands, this.previous, this.now);
    const ms = performance.now() - started;
    for (const standIn of this.cameras) {
      const node = done.assignment[standIn.demand.task_id] ?? null;
      standIn.demand = { ...standIn.demand, node };
    }
    this.previous = done;
    this.now += ROUND_MS;
    return { plan: done, ms };
  }

  /** Rounds until one moves nothing (at most MAX_ROUNDS), summed into the event's row. */
  follow(event: string, rounds = MAX_ROUNDS, untilQuiet = true): SiteRow {
    let moves = 0;
    let forced = 0;
    const times: number[] = [];
    let last: Plan | undefined;
    let quiet = false;
    for (let round = 0; round < rounds; round += 1) {
      const { plan: done, ms } = this.round();
      last = done;
      times.push(ms);
      moves += done.moves.length;
      forced += done.moves.filter((move) => !PLANNED_REASONS.includes(move.reason)).length;
      quiet = done.moves.length === 0;
      if (quiet && untilQuiet) break;
    }
    return this.row(event, last as Plan, times, moves, forced, quiet);
  }

  private row(
    event: string,
    done: Plan,
    times: number[],
    moves: number,
    forced: number,
    quiet: boolean,
  ): SiteRow {
    const up = done.loads.filter(
      (load) => this.nodes.find((node) => node.name === load.node)?.state === 'up',
    );
    const cameras = up.map((load) => load.cameras);
    const shares = up.map((load) => load.load_cores / load.capacity_cores);
    const fixed = (value: number, digits: number) => Number(value.toFixed(digits));
    return {
      event,
      rounds: times.length,
      settled: quiet ? 'yes' : 'no',
      moves,
      'forced moves': forced,
      unplaced: done.unplaced.length,
      'cameras max-min': Math.max(...cameras) - Math.min(...cameras),
      'load max-min %': fixed((Math.max(...shares) - Math.min(...shares)) * 100, 1),
      headroom: done.headroom.ok
        ? `ok (worst: ${done.headroom.node})`
        : `WARN ${done.headroom.node}: ${done.headroom.would_unplace} left out (it runs ${done.headroom.cameras})`,
      'plan ms (mean)': fixed(times.reduce((sum, ms) => sum + ms, 0) / times.length, 2),
      'plan ms (max)': fixed(Math.max(...times), 2),
    };
  }

  set(name: string, extra: Partial<NodeCard> | null): void {
    const others = this.nodes.filter((node) => node.name !== name);
    this.nodes = extra === null ? others : [...others, card(name, extra)];
  }
}

/** The site's events, one row each; steady stretches in between show nothing moves while costs jitter. */
export function benchClusterSite(): SiteRow[] {
  const site = new Site();
  const steady = () =>
    site.follow(
      `steady ${(STEADY_ROUNDS * ROUND_MS) / 60_000} min, costs +-${JITTER * 100} %`,
      STEADY_ROUNDS,
      false,
    );
  const rows = [site.follow('start: 100 cameras on 10 nodes'), steady()];
  site.set('node03', null);
  rows.push(site.follow('node03 dies'), steady());
  site.set('node03', {});
  rows.push(site.follow('node03 comes back (empty)'), steady());
  for (const task of ['cam012', 'cam022', 'cam032', 'cam042', 'cam052', 'cam062', 'cam072', 'cam082']) {
    site.aiVideos.add(task);
  }
  rows.push(site.follow('8 cameras gain an AI video (+0.25 cores each)'), steady());
  site.set('node05', { state: 'draining' });
  rows.push(site.follow('node05 drains (disk full)'), steady());
  site.set('node05', {});
  rows.push(site.follow('node05 up again'), steady());
  site.set('node07', null);
  site.set('node08', null);
  rows.push(site.follow('node07 and node08 die together'), steady());
  site.set('node01', null);
  rows.push(site.follow('node01 (a GPU node) dies too'), steady());
  for (const name of ['node01', 'node07', 'node08']) site.set(name, {});
  rows.push(site.follow('all three come back'), steady());
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(
    `\nSimulated site: 100 stand-in cameras, 10 engines of 3.5 cores for cameras, a round every ${ROUND_MS / 1000} s`,
  );
  console.table(benchClusterSite());
}
