import { randomUUID } from 'node:crypto';
import { availableParallelism, freemem, hostname, loadavg, totalmem } from 'node:os';
import type { KV } from '@nats-io/kv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { LoginLimits } from '../auth/login-limiter';
import type { HeldEvents } from '../callbacks/held-events';
import type { MqttPublisher } from '../callbacks/mqtt';
import type { EventPage, EventQuery, Outbox, ReportTarget } from '../callbacks/outbox';
import type { DeliveryWorker } from '../callbacks/worker';
import { DomainError } from '../domain-error';
import type { EventBus } from '../events/bus';
import type { DeliveryRecord, DeliveryState } from '../events/delivery';
import { CallbackBody } from '../events/schema';
import type { PackageRegistry } from '../packages/registry';
import { compileCheck } from '../schema/ajv';
import type { SettingsRepository } from '../store/settings-repository';
import { TASK_GPU_DEFAULT, TASK_LIMITS } from '../tasks/limits';
import type { TaskLeases, TaskRegistry } from '../tasks/registry';
import type { TaskRow } from '../tasks/task-repository';
import { ChainAppender } from './chain-appender';
import { type ClusterConnection, connectCluster } from './connection';
import { chainTail, readChain, readSubject, Superseded, TaskChain } from './event-chain';
import { BEAT_MS, LEASE_MS, Liveness } from './liveness';
import type { ClusterOptions } from './options';
import { proxiedHere, proxyToOwner } from './owner-proxy';
import { type ClusterErrorKind, OwnerRouting } from './owner-routing';
import { plan } from './placement';
import { MAX_PLANNED_MOVES } from './placement-round';
import { type CameraDemand, type NodeCard, type Plan, PRIORITY_DEFAULT } from './placement-schema';
import { SiteEventLog } from './site-feed';
import { mergeHistory, readChainPage } from './site-history';
import { LISTING_TIMEOUT_MS, type SiteIndex, SiteListing } from './site-listing';
import { openSiteLogins, type SiteLoginBuckets, SiteLogins } from './site-logins';
import { openSitePackages, type SitePackageBuckets } from './site-package-buckets';
import { SitePackages } from './site-packages';
import { openSiteRules, SiteRules } from './site-rules';
import { chainable, LATE_STREAM, lateSubject, openSiteStore, type SiteStore } from './site-store';
import type { Assignment, LeaveBody, LeaveState, MemberView, SiteTask, SiteView } from './site-view';
import { proxySocketToOwner } from './socket-proxy';
import { taskCost, UNMEASURED_CAMERA_CORES } from './task-cost';

/** How often a node reconciles what it runs with the assignments, and the leader checks the nodes. */
const TICK_MS = 500;
/** Late events come from other nodes: each is checked as the callback body it must be. */
const checkLateBody = compileCheck<CallbackBody>(CallbackBody, 'late event');
/**
 * A node whose subscriptions are gone ("no responders") this long is dead: long enough for a client
 * whose NATS server died to reconnect to another (well under a second, measured), short enough that
 * a killed engine's cameras move at once.
 */
export const GONE_CONFIRM_MS = 1_000;
/**
 * Chain entries a node reads of a task it takes over: what was not delivered comes from them. Events
 * beyond it stay in the chain (and delivered to nobody from here): a bound on one takeover's memory.
 */
const MAX_CHAIN_IMPORT = 10_000;
/** How often the leader looks for task definitions to purge. */
const PURGE_EVERY_MS = 60 * 60_000;
/** Tasks GET /api/cluster/tasks reads at most (each one KV read). */
const MAX_SITE_TASKS = 2_000;
/** Late events of one task taken in per reconciliation; more wait for the next. */
const MAX_LATE_PER_TICK = 1_000;
/** Cores a node keeps for its API, delivery and the control plane: not given to cameras. */
const RESERVED_CORES = 0.5;
/**
 * How long a planned move's target may take to warm a camera up (open its source, analyse a frame:
 * a source gets 15 s to open, TASK_LIMITS.pullTimeoutMs) before the leader calls the move off; the
 * camera runs on where it was all along.
 */
const WARM_TIMEOUT_MS = 30_000;
/**
 * The leader plans each camera at its measured cost smoothed over about this long: a camera's cost
 * jitters (a busier scene, CPU its node's other cameras take, a warm-up's first seconds), and the
 * rebalance must judge the load, not its noise.
 */
const COST_SMOOTHING_MS = 10_000;
/** A node that could not warm a camera up is not given that camera again for this long. */
const WARM_FAILED_MS = 10 * 60_000;
/** Sources a leaving node opens at once to check it can run the tasks it takes (each up to 15 s). */
const TAKE_PROBES = 4;

/** A node name as NATS subjects and KV keys take it: letters, digits, - and _. */
export function nodeNameOf(options: ClusterOptions): string {
  const name = (options.nodeName ?? hostname()).replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64);
  if (!name) throw new Error('cluster: the node name is empty');
  return name;
}

/**
 * How recently a node must have read the assignments to publish its tasks' events on MQTT: a node
 * that was frozen or cut off while another took its task publishes nothing before it reads again.
 */
const OWNERSHIP_FRESH_MS = 2 * TICK_MS;
/** Where the site records how far MQTT published a task's events: beside its delivery mark (vc_delivery). */
const publishedKey = (taskId: string) => `${taskId}.mqtt`;

/** A task's delivery progress as the site records it (vc_delivery). */
interface DeliveryMark {
  seq: number;
  stream_seq: number;
}

interface Deps {
  tasks: TaskRegistry;
  mqtt: MqttPublisher;
  /** Events waiting in memory while the data disk is full: a node with any is draining. */
  held: HeldEvents;
  packages: PackageRegistry;
  /** The node's settings: which site package each installed copy came from (site-packages.ts). */
  settings: SettingsRepository;
  tmpDir: string;
  outbox: Outbox;
  delivery: DeliveryWorker;
  bus: EventBus;
  log: Logger;
  version: string;
  /** The failed-login limits, counted site-wide too (site-logins.ts). */
  login: LoginLimits;
  /** Whether its models run on a GPU provider now (engine/inference/gpu-use.ts): its card says so. */
  gpu: () => boolean;
  /**
   * Opens a video source as a task here would and reads its first frame (TASK_LIMITS.pullTimeoutMs at
   * most); rejects with why not. A leaving node checks with it that it can run a task it takes.
   */
  probeSource: (videoUrl: string) => Promise<void>;
}

/**
 * One engine's part in a cluster: its heartbeat, the tasks assigned to it (taken over when assigned,
 * released when assigned elsewhere), its tasks' event chains, and, while it holds the leader's lease,
 * the reassignment of a dead, frozen or cut-off node's tasks. Analysis is never stopped on a timer:
 * a node stops a task when it sees it assigned elsewhere or when the chain refuses its append.
 */
export class ClusterNode implements SiteIndex {
  private readonly liveness = new Liveness();
  private readonly appender: ChainAppender;
  private readonly gone = new Map<string, number>();
  private readonly adopting = new Set<string>();
  /**
   * Tasks warming up here for a planned move (make-before-break): they analyse, their output fenced
   * (the owner reports what they see) until the task is handed over; when each first analysed here.
   */
  private readonly warming = new Map<string, number | null>();
  /** This leader's planned moves under way: when each target was asked to warm its camera up. */
  private readonly warmAsked = new Map<string, number>();
  /** Per task, the nodes that could not warm it up, until when they are not tried again. */
  private readonly warmFailed = new Map<string, Map<string, number>>();
  /** Leaving the site (POST /api/cluster/leave): draining, then gone from the site once empty. */
  private leaving: 'draining' | 'left' | null = null;
  /**
   * The tasks this node takes out of the site as it leaves: moved here make-before-break (it hands
   * each over itself), then taken out of the site's store with their chain's history, running on here.
   */
  private readonly taking = new Set<string>();
  /** The tasks taken out of the site's store: running here as a workstation's, never shared again. */
  private readonly takenOut = new Set<string>();
  /** A leave's take is being checked (its sources opened): no other leave call is decided meanwhile. */
  private checkingTake = false;
  /** Called once, when the node has left its site (engine.ts stops what still follows the site). */
  onLeft?: () => void;
  /** Events of tasks this node lost, not yet handed to their new owners. */
  private readonly handovers = new Map<string, CallbackBody[]>();
  /** Tasks being shared with the site right now (started here, or found running here unshared). */
  private readonly sharing = new Set<string>();
  /** Tasks stored here that ran elsewhere while this node was down: their events are settled at start. */
  private readonly strays = new Set<string>();
  /** Tasks another node took from this one: nothing of theirs goes out from here. */
  private readonly lost = new Map<string, number>();
  /** Delivery progress not yet recorded for the site, by task; written with each beat. */
  private readonly deliveredMarks = new Map<string, DeliveryMark>();
  /** MQTT progress not yet recorded for the site, by task; written with each beat. */
  private readonly publishedMarks = new Map<string, DeliveryMark>();
  /** Per task taken over: the seq up to which an earlier owner's broker acknowledged its events. */
  private readonly publishedBefore = new Map<string, number>();
  /** When the assignments in hand were asked for (MQTT's ownership check). */
  private assignmentsReadAt = 0;
  private members = new Map<string, { card: NodeCard; revision: number }>();
  /** The last placement round, this leader's or its predecessor's (read from the site at takeover). */
  private lastPlan: Plan | null = null;
  /** The placement leader as last read from its lease. */
  private leaderName?: string;
  /** When this leader last purged expired task definitions. */
  private purgedAt = 0;
  /**
   * What each camera cost and needed where it last ran, from every node's card (a dead node's too):
   * a camera that just moved is planned at its known cost, not at the unmeasured default, which would
   * make the site look unbalanced and move cameras back and forth.
   */
  private readonly knownDemands = new Map<string, NonNullable<NodeCard['demands']>[string]>();
  /** Each camera's cost as the leader plans it: measured, smoothed (COST_SMOOTHING_MS). */
  private readonly smoothedCosts = new Map<string, { cores: number; at: number }>();
  private assignments = new Map<string, { value: Assignment; revision: number }>();
  private beatTimer?: NodeJS.Timeout;
  /** The beat under way: a node leaving the site waits for it, so that no beat writes its card back. */
  private beating: Promise<void> = Promise.resolve();
  private tickTimer?: NodeJS.Timeout;
  private ticking = false;
  private closed = false;
  private readonly startedAt = Date.now();
  /** Where the other nodes reach this node's API; known once it listens. */
  private apiUrl = '';
  private readonly unsubscribe: () => void;
  readonly routing: OwnerRouting;
  /** Every task's events in the site's order: the console's feed on this node reads them. */
  readonly events: SiteEventLog;
  /** GET /api/tasks of the whole site. */
  readonly listing: SiteListing;
  /** The site's packages: the package store of a node (uploads, removals and rule edits go through it). */
  readonly packages: SitePackages;
  /** The site's apps' names and rules: an edit on any node applies on every node. */
  private readonly rules: SiteRules;
  /** The site's count of failed logins, shared by every node. */
  readonly logins: SiteLogins;

  private constructor(
    readonly node: string,
    private readonly conn: ClusterConnection,
    readonly site: SiteStore,
    private readonly deps: Deps,
    packageBuckets: SitePackageBuckets,
    rules: KV,
    loginBuckets: SiteLoginBuckets,
    private readonly limits: Pick<ClusterOptions, 'maxCameras' | 'capacityCores'> = {},
  ) {
    this.routing = new OwnerRouting(conn, node);
    this.logins = new SiteLogins(loginBuckets, deps.login, deps.log);
    this.events = new SiteEventLog(conn, node, deps.bus, (error) =>
      deps.log.warn({ err: error }, 'cluster: the event feed waits for NATS'),
    );
    this.listing = new SiteListing(conn, this, deps.tasks);
    this.rules = new SiteRules(rules, { node, registry: deps.packages, log: deps.log });
    this.packages = new SitePackages(packageBuckets, {
      node,
      rules: this.rules,
      registry: deps.packages,
      settings: deps.settings,
      siteTasks: () => this.siteTasks(),
      tmpDir: deps.tmpDir,
      log: deps.log,
    });
    this.appender = new ChainAppender(
      (taskId, held, chained, error) => void this.superseded(taskId, held, chained, error),
      (error, taskId) => deps.log.warn({ err: error }, `cluster: the events of task ${taskId} wait for NATS`),
      (taskId) => {
        deps.delivery.kick(taskId);
        deps.mqtt.fill();
      },
    );
    // An event of a task this node owns goes out once its chain holds it: were the task taken over
    // meanwhile, the new owner numbers it anew (late), and a receiver must never see one seq twice
    // with two event_ids.
    deps.delivery.gate = (taskId, seq) => this.mayGoOut(taskId, seq) === 'send';
    deps.mqtt.gate = (taskId, seq) => this.mayPublish(taskId, seq);
    deps.mqtt.published = (taskId, seq) => this.published(taskId, seq);
    // A task warming up here sees what its owner sees and reports: nothing of it is stored here.
    deps.held.fenced = (taskId) => this.warming.has(taskId);
    const onEvent = (event: { body: CallbackBody }) => this.appender.stored(event.body);
    deps.bus.on('event', onEvent);
    const onDelivery = (record: DeliveryRecord) => this.delivered(record);
    deps.bus.on('delivery', onDelivery);
    const onStarted = (view: { task_id: string }) => void this.started(view.task_id);
    const onChanged = (view: { task_id: string }) => void this.share(view.task_id);
    const onClosed = (view: { task_id: string }) => void this.closedHere(view.task_id);
    const onPurged = (view: { task_id: string }) => void this.purgedHere(view.task_id);
    deps.tasks.on('started', onStarted);
    deps.tasks.on('updated', onChanged);
    deps.tasks.on('closed', onClosed);
    deps.tasks.on('purged', onPurged);
    this.unsubscribe = () => {
      deps.bus.off('event', onEvent);
      deps.bus.off('delivery', onDelivery);
      deps.tasks.off('started', onStarted);
      deps.tasks.off('updated', onChanged);
      deps.tasks.off('closed', onClosed);
      deps.tasks.off('purged', onPurged);
    };
  }

  /** Connects, opens the site's store and reads the assignments; the node runs once start() is called. */
  static async join(options: ClusterOptions, deps: Deps): Promise<ClusterNode> {
    const node = nodeNameOf(options);
    const conn = await connectCluster(options, `vision-console:${node}`);
    try {
      const replicas = Math.min(3, options.servers.length);
      const site = await openSiteStore(conn, replicas);
      const packages = await openSitePackages(conn, replicas);
      const rules = await openSiteRules(conn, replicas);
      const logins = await openSiteLogins(conn, replicas, deps.login.windowMs);
      const member = new ClusterNode(node, conn, site, deps, packages, rules, logins, options);
      await member.readAssignments();
      await member.events.start();
      return member;
    } catch (error) {
      await conn.close();
      throw error;
    }
  }

  /**
   * Forwards a request of a route its task's owner answers (config.ownerBound) to that node, when the
   * task runs on another node of the site; does nothing otherwise (the route answers here).
   */
  async answerFromOwner(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (this.closed) return;
    const bound = request.routeOptions.config.ownerBound;
    if (!bound || this.routing.forwardedUser(request) !== undefined || proxiedHere(request)) return;
    const taskId = (request.params as { task_id?: string }).task_id;
    // A copy warming up here is not the task: its owner answers.
    if (!taskId || (this.deps.tasks.storedRow(taskId) && !this.warming.has(taskId))) return;
    const owner = this.assignments.get(taskId)?.value.node ?? (await this.closedHolder(taskId));
    if (!owner || owner === this.node) return;
    const unreachable = (error: Error) =>
      new DomainError<ClusterErrorKind>(
        'cluster.owner_unreachable',
        `task ${taskId} runs on node ${owner}, which did not answer: ${error.message}`,
      );
    if (bound === 'http') {
      const apiUrl = this.members.get(owner)?.card.api_url;
      if (!apiUrl) throw unreachable(new Error('its API address is not known here'));
      if (request.ws) return proxySocketToOwner(request, reply, apiUrl, owner, unreachable);
      return proxyToOwner(request, reply, apiUrl, owner, unreachable);
    }
    try {
      return await this.routing.forward(request, reply, owner);
    } catch (error) {
      throw unreachable(error as Error);
    }
  }

  /**
   * The node that holds a closed task of the site (the one that closed it; a closed task has no
   * assignment), found by asking the nodes that are up: a purge or a read of it from any node goes
   * there. Undefined where the site has no closed task of that id (the route answers here: 404).
   */
  private async closedHolder(taskId: string): Promise<string | undefined> {
    if (!chainable(taskId)) return undefined;
    // NATS away: the route answers from what this node stores.
    const definition = await this.site.tasks.get(taskId).catch(() => null);
    if (definition?.operation !== 'PUT' || definition.json<TaskRow>().status !== 'closed') return undefined;
    const others = [...this.members.keys()].filter((node) => node !== this.node && this.isUp(node));
    const { holder, unanswered } = await this.listing.holderOf(taskId, others);
    if (holder) return holder;
    throw new DomainError<ClusterErrorKind>(
      'cluster.owner_unreachable',
      unanswered.length > 0
        ? `task ${taskId} is closed on another node, and nodes ${unanswered.join(', ')} did not answer`
        : `task ${taskId} is closed, and no node of the site that is up holds it (the node that closed it is down or left the site); the site lists it until 24 h after it closed`,
    );
  }

  /**
   * The leases of the tasks this node stored, at its start: one assigned to another node meanwhile
   * (it ran elsewhere while this node was down) is not resumed here, and nothing of it goes out
   * from here; its events this node stored and never chained go to its owner (start()).
   */
  leases(): TaskLeases {
    return {
      acquire: (taskId) => {
        const assigned = this.assignments.get(taskId);
        if (!assigned || assigned.value.node === this.node) return true;
        // What this node chained of it is unknown here: nothing of it goes out (start() settles it).
        this.lost.set(taskId, 0);
        this.strays.add(taskId);
        return false;
      },
    };
  }

  /** Whether a stored event goes out from this node now, once its chain holds it, or never. */
  private mayGoOut(taskId: string, seq: number): 'send' | 'wait' | 'skip' {
    const chainedUpTo = this.lost.get(taskId);
    if (chainedUpTo !== undefined) return seq <= chainedUpTo ? 'send' : 'skip';
    const chain = this.appender.chainOf(taskId);
    return !chain || chain.seq >= seq ? 'send' : 'wait';
  }

  /**
   * Whether a stored event is published on MQTT from this node now, later, or never: by the task's
   * owner only, once its chain holds it, and only while the owner read within OWNERSHIP_FRESH_MS
   * that the task is still its own. A node that lost the task, or was fenced while frozen or cut
   * off, publishes none of it: its new owner publishes from the site's MQTT mark on (adopt).
   */
  private mayPublish(taskId: string, seq: number): 'send' | 'wait' | 'skip' {
    if (this.lost.has(taskId)) return 'skip';
    const chain = this.appender.chainOf(taskId);
    if (!chain) return 'send';
    if (seq <= (this.publishedBefore.get(taskId) ?? 0)) return 'skip';
    const fresh = Date.now() - this.assignmentsReadAt <= OWNERSHIP_FRESH_MS;
    if (!fresh || this.assignments.get(taskId)?.value.node !== this.node) return 'wait';
    return chain.seq >= seq ? 'send' : 'wait';
  }

  /** Starts the heartbeat and the reconciliation; tasks resumed here get their chains claimed. */
  start(apiUrl: string, app: FastifyInstance): void {
    this.apiUrl = apiUrl;
    this.routing.serve(app);
    this.listing.serve();
    this.conn.nc.subscribe(`vc.node.${this.node}.placement`, {
      callback: (_error, message) => {
        message.respond(JSON.stringify(this.view().placement));
      },
    });
    void this.settleStrays();
    this.packages.start();
    this.rules.start();
    this.conn.nc.subscribe(`vc.node.${this.node}.alive`, {
      callback: (_error, message) => {
        message.respond('ok');
      },
    });
    this.beating = this.beat();
    this.beatTimer = setInterval(() => {
      this.beating = this.beat();
    }, BEAT_MS);
    this.tickTimer = setInterval(() => void this.tick(), TICK_MS);
  }

  /** The site as this node sees it: its nodes, the leader, and which node runs each task. */
  view(): Omit<Extract<SiteView, { enabled: true }>, 'enabled'> {
    const nodes = [...this.members.values()].map(({ card }) => ({
      node: card.name,
      api_url: card.api_url,
      version: card.version,
      state: this.stateOf(card.name),
      tasks: card.cameras,
      capacity_cores: card.capacity_cores,
      cpu_used_cores: card.cpu_used_cores,
      memory: card.memory,
      gpu: card.gpu,
    }));
    const assignments = Object.fromEntries([...this.assignments].map(([task, { value }]) => [task, value]));
    const placement = this.lastPlan && {
      at: this.lastPlan.at,
      rebalancing: this.lastPlan.rebalancing,
      unplaced: this.lastPlan.unplaced,
      headroom: this.lastPlan.headroom,
    };
    return { node: this.node, leader: this.leaderName ?? null, nodes, assignments, placement };
  }

  /**
   * The site with the placement verdict: a node that does not lead asks the leader for its last
   * round (LISTING_TIMEOUT_MS), so that every node's console warns when the others could not absorb
   * the node worst to lose; without it (the leader does not answer) as view() has it.
   */
  async siteView(): Promise<ReturnType<ClusterNode['view']>> {
    const view = this.view();
    const { leader } = view;
    if (view.placement || !leader || leader === this.node || !this.isUp(leader)) return view;
    try {
      const answer = await this.conn.nc.request(`vc.node.${leader}.placement`, '', {
        timeout: LISTING_TIMEOUT_MS,
      });
      return { ...view, placement: answer.json<typeof view.placement>() };
    } catch {
      return view;
    }
  }

  /**
   * Every task the site shares (its definition as its node last wrote it) with the node that runs
   * it, oldest first: read from the site's store on each call, at most MAX_SITE_TASKS.
   */
  async siteTasks(): Promise<SiteTask[]> {
    return (await this.definitions())
      .sort((a, b) => a.created_at - b.created_at || a.task_id.localeCompare(b.task_id))
      .map((row) => {
        const assigned = this.assignments.get(row.task_id)?.value;
        return {
          task_id: row.task_id,
          name: row.name,
          mode: row.mode,
          zapk_id: row.zapk_id,
          status: row.status,
          created_at: row.created_at,
          node: assigned?.node ?? null,
          epoch: assigned?.epoch ?? null,
        };
      });
  }

  /**
   * A task's events as the site holds them (site-history.ts): its whole chain, what earlier owners
   * delivered included, with this node's delivery records where it stored the event. While NATS does
   * not answer, what this node stored.
   */
  async history(taskId: string, query: EventQuery): Promise<EventPage | undefined> {
    // Out of the site, the node's store holds what it lists (the history of a task it took included).
    if (this.leaving === 'left') return this.deps.outbox.list(taskId, query);
    const local = this.deps.outbox.list(taskId, { ...query, state: undefined });
    try {
      const [chain, mark, definition] = await Promise.all([
        readChainPage(this.conn, taskId, query.after_seq, query.limit),
        this.deliveryMark(taskId),
        this.deps.tasks.storedRow(taskId) ??
          this.site.tasks
            .get(taskId)
            .then((entry) => (entry?.operation === 'PUT' ? entry.json<TaskRow>() : undefined)),
      ]);
      return mergeHistory(local, chain, query, {
        settledSeq: mark.seq,
        noReceiver: definition?.report_url === '',
        retryForMs: this.deps.outbox.options.retryForMs,
      });
    } catch (error) {
      this.deps.log.warn({ err: error }, `cluster: the events of task ${taskId} listed from this node only`);
      return this.deps.outbox.list(taskId, query);
    }
  }

  /** Every task definition the site shares (closed ones for 24 h), at most MAX_SITE_TASKS. */
  async definitions(): Promise<TaskRow[]> {
    return (await entriesOf<TaskRow>(this.site.tasks, MAX_SITE_TASKS))
      .map(({ value }) => value)
      .filter((row) => !expired(row));
  }

  ownerOf(taskId: string): string | undefined {
    return this.assignments.get(taskId)?.value.node;
  }

  isUp(node: string): boolean {
    return this.stateOf(node) === 'up';
  }

  /**
   * Leaves the site (POST /api/cluster/leave, idempotent): the node drains (it takes no camera, and
   * the leader moves each of its cameras make-before-break), then, holding no task, takes its card
   * out of the site, gives up the leader's lease if it held it, and disconnects. The tasks named in
   * `take` move here instead (make-before-break) and leave the site with it; one that cannot be taken
   * refuses the whole leave before anything starts. Where it stands.
   */
  async leave(take?: LeaveBody['take']): Promise<LeaveState> {
    // One check at a time (each opens sources), and no other leave decided while it runs.
    if (this.checkingTake)
      throw new DomainError<ClusterErrorKind>(
        'cluster.take_refused',
        `${this.node} is checking the tasks a leave takes: ask again once that call has answered`,
      );
    if (!this.leaving) {
      this.checkingTake = true;
      let taken: string[];
      try {
        taken = await this.takeable(take);
      } finally {
        this.checkingTake = false;
      }
      for (const taskId of taken) this.taking.add(taskId);
      this.leaving = 'draining';
      this.deps.log.info(
        `cluster: ${this.node} leaves the site: its cameras move to the other nodes${taken.length > 0 ? `, but for ${taken.length} it takes: ${taken.join(', ')}` : ''}`,
      );
    } else if (Array.isArray(take) && take.some((taskId) => !this.taking.has(taskId))) {
      throw new DomainError<ClusterErrorKind>(
        'cluster.take_refused',
        `${this.node} is leaving already: the tasks it takes were named when the leave started (${[...this.taking].join(', ') || 'none'})`,
      );
    }
    return this.leaveState();
  }

  /**
   * The tasks a leave takes, each checked: a task of the site, not closed, its source opened from
   * here (a video task it does not own yet), and all of them within this node's capacity (cores and
   * cameras, at what each cost where it ran). Refused with every reason at once.
   */
  private async takeable(take: LeaveBody['take']): Promise<string[]> {
    if (take === undefined) return [];
    const ids = take === 'all-mine' ? await this.broughtIn() : take;
    const refusals: string[] = [];
    const rows: TaskRow[] = [];
    for (const taskId of ids) {
      // Read from the site, not from the last tick's copy: a task started a moment ago counts.
      const assigned = await this.site.assignments.get(taskId);
      const entry = assigned?.operation === 'PUT' ? await this.site.tasks.get(taskId) : null;
      const row = entry?.operation === 'PUT' ? entry.json<TaskRow>() : undefined;
      if (!row) refusals.push(`${taskId}: not a task of the site`);
      else if (row.status === 'closed') refusals.push(`${taskId}: closed`);
      else rows.push(row);
    }
    const costs = rows.map(({ task_id }) => {
      const owner = this.assignments.get(task_id)?.value.node ?? '';
      const demand = this.members.get(owner)?.card.demands?.[task_id] ?? this.knownDemands.get(task_id);
      return demand?.cost_cores ?? UNMEASURED_CAMERA_CORES;
    });
    const cores = costs.reduce((sum, cost) => sum + cost, 0);
    const capacity = this.capacityCores();
    if (cores > capacity)
      refusals.push(
        `no room here: the tasks cost ${cores.toFixed(2)} cores, this node has ${capacity.toFixed(2)} for cameras`,
      );
    if (this.limits.maxCameras !== undefined && rows.length > this.limits.maxCameras)
      refusals.push(`no room here: ${rows.length} tasks, this node runs at most ${this.limits.maxCameras}`);
    // A warm copy here proves nothing yet (its source may be failing): only a task this node owns is not probed.
    const probed = rows.filter(
      (row) => row.mode === 'video' && this.assignments.get(row.task_id)?.value.node !== this.node,
    );
    for (let i = 0; i < probed.length; i += TAKE_PROBES)
      await Promise.all(
        probed.slice(i, i + TAKE_PROBES).map((row) =>
          this.deps.probeSource(row.video_url).catch((error: Error) => {
            refusals.push(`${row.task_id}: its source does not open here: ${error.message}`);
          }),
        ),
      );
    if (refusals.length > 0)
      throw new DomainError<ClusterErrorKind>(
        'cluster.take_refused',
        `the leave did not start: ${refusals.join('; ')}`,
      );
    return rows.map((row) => row.task_id);
  }

  /** The tasks of the site this node brought in: their chains begin with it, at epoch 1. */
  private async broughtIn(): Promise<string[]> {
    const ids = [...this.assignments.keys()];
    const first = await Promise.all(ids.map((taskId) => readChain(this.conn, taskId, 0, 1)));
    return ids.filter((_, i) => {
      const entry = first[i]?.[0]?.entry;
      return entry?.kind === 'owner' && entry.node === this.node;
    });
  }

  /** Cores this node gives cameras. */
  private capacityCores(): number {
    return this.limits.capacityCores ?? Math.max(0, availableParallelism() - RESERVED_CORES);
  }

  /** Whether this node is still a member of its site: once it left, it answers for itself alone. */
  get inSite(): boolean {
    return this.leaving !== 'left';
  }

  leaveState(): LeaveState {
    const tasks = this.heldHere().length;
    if (!this.leaving) return { node: this.node, state: 'member', tasks };
    const taking = this.taking.size > 0 ? { taking: [...this.taking] } : {};
    return { node: this.node, state: this.leaving, tasks, ...taking };
  }

  /** The tasks this node still has a part in: assigned or warming here, owned, running or handing over. */
  private heldHere(): string[] {
    const held = new Set<string>([
      ...this.deps.tasks.running(),
      ...this.warming.keys(),
      ...this.handovers.keys(),
    ]);
    for (const [taskId, { value }] of this.assignments)
      if (
        (value.node === this.node && !value.parked) ||
        value.next === this.node ||
        this.appender.owns(taskId)
      )
        held.add(taskId);
    return [...held];
  }

  /**
   * Once it holds nothing but the tasks it takes, each of them run and chained here: those taken out
   * of the site, then the node out of the site, its last delivery progress recorded first.
   */
  private async leaveOnceEmpty(): Promise<void> {
    if (this.heldHere().some((taskId) => !this.taking.has(taskId)) || this.appender.backlog > 0) return;
    for (const taskId of this.taking) if (!(await this.takenHere(taskId))) return;
    await this.recordDelivery();
    for (const taskId of this.taking) await this.takeOut(taskId);
    // No beat may write its card back.
    clearInterval(this.beatTimer);
    await this.beating;
    this.leaving = 'left';
    if (this.leaderName === this.node) await this.site.leases.delete('leader');
    await this.site.nodes.delete(this.node);
    this.deps.log.info(`cluster: ${this.node} left the site`);
  }

  /**
   * Whether a task this node takes is all here: assigned and running here, its chain claimed, and
   * nothing of it left with its previous owner (no other card names it, no late event waits).
   */
  private async takenHere(taskId: string): Promise<boolean> {
    if (this.assignments.get(taskId)?.value.node !== this.node) return false;
    if (!this.appender.owns(taskId) || this.adopting.has(taskId) || this.warming.has(taskId)) return false;
    for (const [name, { card }] of this.members)
      if (name !== this.node && (card.cameras.includes(taskId) || card.warm?.includes(taskId))) return false;
    const late = await readSubject(this.conn, LATE_STREAM, lateSubject(taskId), 0, 1);
    return late.length === 0;
  }

  /**
   * Takes a task out of the site, running on here: the events of its chain this node lacks (those
   * other nodes made and delivered) are copied into its store, settled, so that its history is whole
   * here; then it stops being chained, and its assignment, delivery mark and definition leave the
   * site. Killed before the assignment goes, the task is the site's still (the node joins again
   * owning it); after, it is this node's, with all its history.
   */
  private async takeOut(taskId: string): Promise<void> {
    const row = this.deps.tasks.storedRow(taskId);
    if (!row) return;
    let copied = 0;
    for (let from = 0; ; ) {
      const page = await readChain(this.conn, taskId, from, MAX_CHAIN_IMPORT);
      if (page.length === 0) break;
      from = page.at(-1)?.streamSeq ?? from;
      const bodies = page.flatMap(({ entry }) => (entry.kind === 'event' ? [entry.body] : []));
      copied += this.deps.outbox.importHistory(targetOf(row), bodies);
    }
    this.takenOut.add(taskId);
    this.appender.disown(taskId);
    await this.site.assignments.delete(taskId);
    await this.forgetDeliveryMarks(taskId);
    await this.site.tasks.delete(taskId);
    this.listing.invalidate();
    this.deps.log.info(
      `cluster: ${this.node} took task ${taskId} out of the site (${copied} events of other nodes copied here)`,
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.beatTimer);
    clearInterval(this.tickTimer);
    this.unsubscribe();
    this.packages.close();
    this.rules.close();
    this.appender.close();
    await this.events.close();
    await this.conn.close();
  }

  private stateOf(node: string): MemberView['state'] {
    if (node === this.node) return 'up';
    const goneSince = this.gone.get(node);
    if (goneSince !== undefined && Date.now() - goneSince >= GONE_CONFIRM_MS) return 'gone';
    return this.liveness.silentFor(`node:${node}`) > LEASE_MS ? 'silent' : 'up';
  }

  private async beat(): Promise<void> {
    if (this.closed || this.leaving === 'left') return;
    try {
      await this.site.nodes.put(this.node, JSON.stringify(this.card()));
      this.conn.answered();
      this.liveness.ownBeat(Date.now());
      await this.recordDelivery();
    } catch (error) {
      this.conn.timedOut();
      this.deps.log.warn({ err: error }, 'cluster: the heartbeat was not stored');
    }
  }

  /** This node as placement sees it: its capacity, its models, and what each of its cameras costs. */
  private card(): NodeCard {
    const cameras = [...this.appenderTasks()];
    const demands: NonNullable<NodeCard['demands']> = {};
    for (const taskId of cameras) {
      const row = this.deps.tasks.storedRow(taskId);
      if (!row || !this.deps.tasks.runs(taskId)) continue;
      const { health } = this.deps.tasks.get(taskId);
      // Reported once measured here: until then the leader keeps what the last node measured.
      if (health.frames_analysed === 0) continue;
      const models = this.modelsOf(row);
      demands[taskId] = {
        cost_cores: taskCost({ health, models: models.length }),
        models,
        priority: row.priority ?? PRIORITY_DEFAULT,
        gpu: row.gpu ?? TASK_GPU_DEFAULT,
      };
    }
    const cores = availableParallelism();
    return {
      name: this.node,
      api_url: this.apiUrl,
      version: this.deps.version,
      // A full data disk or leaving: its cameras go to other nodes (a full disk's with the events it
      // could not store).
      state: this.leaving || this.deps.held.held.events > 0 ? 'draining' : 'up',
      capacity_cores: this.capacityCores(),
      max_cameras: this.limits.maxCameras ?? null,
      cpu_used_cores: Math.min(cores, loadavg()[0] ?? 0),
      memory: { total_bytes: totalmem(), free_bytes: freemem() },
      gpu: this.deps.gpu(),
      models: this.installedModels(),
      cameras,
      demands,
      started_at: this.startedAt,
      warm: this.warmTasks(),
    };
  }

  /**
   * The tasks warming up here that analyse already: the leader hands them over. An image or diff
   * task has no source to open: it is ready once it runs.
   */
  private warmTasks(): string[] {
    const warm: string[] = [];
    for (const [taskId, since] of this.warming) {
      if (since !== null) warm.push(taskId);
      else if (this.deps.tasks.runs(taskId) && this.analyses(taskId)) {
        this.warming.set(taskId, Date.now());
        this.deps.log.info(`cluster: ${this.node} analyses task ${taskId}, warming up to take it over`);
        warm.push(taskId);
      }
    }
    return warm;
  }

  private analyses(taskId: string): boolean {
    const { mode, health } = this.deps.tasks.get(taskId);
    return mode !== 'video' || health.frames_analysed > 0;
  }

  /** The models a task's apps run (package/model), as installed here. */
  private modelsOf(row: TaskRow): string[] {
    const names = (JSON.parse(row.app_ids) as string[]).flatMap((appId) => {
      try {
        return [this.deps.packages.app(row.zapk_id, appId).model.name];
      } catch {
        return [];
      }
    });
    return [...new Set(names)];
  }

  private installedModels(): string[] {
    const names = this.deps.packages
      .list()
      .flatMap((pkg) =>
        Object.keys(pkg.apps).map((appId) => this.deps.packages.app(pkg.zapk_id, appId).model.name),
      );
    return [...new Set(names)].sort();
  }

  /**
   * Notes how far an owned task's events were settled (delivered, dead or without a receiver: the
   * delivery worker goes in seq order); recorded for the site with the next beat, so a new owner
   * delivers again only what the last second or so did not record.
   */
  private delivered(record: DeliveryRecord): void {
    if (record.state === 'pending') return;
    const streamSeq = this.appender.chainOf(record.task_id)?.streamSeqOf(record.seq);
    if (streamSeq === undefined) return;
    this.deliveredMarks.set(record.task_id, { seq: record.seq, stream_seq: streamSeq });
    // Without MQTT there is nothing to publish: a new owner that has it starts where delivery is.
    if (!this.deps.mqtt.enabled)
      this.publishedMarks.set(record.task_id, { seq: record.seq, stream_seq: streamSeq });
  }

  /** Notes how far the broker acknowledged an owned task's events; recorded with the next beat. */
  private published(taskId: string, seq: number): void {
    const streamSeq = this.appender.chainOf(taskId)?.streamSeqOf(seq);
    if (streamSeq !== undefined) this.publishedMarks.set(taskId, { seq, stream_seq: streamSeq });
  }

  private async recordDelivery(): Promise<void> {
    const marks = [
      ...this.deliveredMarks,
      ...[...this.publishedMarks].map(([taskId, mark]) => [publishedKey(taskId), mark] as const),
    ];
    this.deliveredMarks.clear();
    this.publishedMarks.clear();
    await Promise.all(marks.map(([key, mark]) => this.site.delivery.put(key, JSON.stringify(mark))));
  }

  private *appenderTasks(): Iterable<string> {
    for (const taskId of this.assignments.keys()) if (this.appender.owns(taskId)) yield taskId;
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.closed) return;
    this.ticking = true;
    try {
      await this.readMembers();
      await this.readAssignments();
      // Events held back until this node knew itself their tasks' owner again.
      this.deps.mqtt.fill();
      // Every node probes every other: a killed leader is seen gone as soon as a killed follower.
      await this.probeMembers();
      await this.lead();
      await this.reconcile();
      if (this.strays.size > 0) await this.settleStrays();
      await this.handOver();
      await this.collectLate();
      if (this.leaving === 'left') {
        await this.close();
        this.onLeft?.();
      }
    } catch (error) {
      this.deps.log.warn({ err: error }, 'cluster: the reconciliation waits for NATS');
    } finally {
      this.ticking = false;
    }
  }

  private async readMembers(): Promise<void> {
    const members = new Map<string, { card: NodeCard; revision: number }>();
    for (const { key, value: card, revision } of await entriesOf<NodeCard>(this.site.nodeCards)) {
      members.set(key, { card, revision });
      // Only the owner's word counts: a dead node's card still names cameras that run elsewhere now.
      for (const [taskId, demand] of Object.entries(card.demands ?? {}))
        if (this.assignments.get(taskId)?.value.node === key) this.knownDemands.set(taskId, demand);
      this.liveness.observe(`node:${key}`, revision);
    }
    this.members = members;
  }

  private async readAssignments(): Promise<void> {
    const askedAt = Date.now();
    const assignments = new Map(
      (await entriesOf<Assignment>(this.site.assignments)).map(({ key, value, revision }) => [
        key,
        { value, revision },
      ]),
    );
    this.assignments = assignments;
    this.assignmentsReadAt = askedAt;
    for (const taskId of this.knownDemands.keys())
      if (!assignments.has(taskId)) this.knownDemands.delete(taskId);
    for (const taskId of this.smoothedCosts.keys())
      if (!assignments.has(taskId)) this.smoothedCosts.delete(taskId);
  }

  /** Holds or takes the leader's lease; while held, moves the tasks of dead or silent nodes. */
  private async lead(): Promise<void> {
    const entry = await this.site.leases.get('leader');
    const current = entry?.operation === 'PUT' ? entry.json<{ node: string; epoch: number }>() : undefined;
    if (entry) this.liveness.observe('leader', entry.revision);
    this.leaderName = current?.node;
    const mine = current?.node === this.node;
    const vacant =
      !current || this.liveness.silentFor('leader') > LEASE_MS || this.stateOf(current.node) === 'gone';
    if (!mine && !vacant) {
      return;
    }
    const epoch = mine ? (current?.epoch ?? 1) : (current?.epoch ?? 0) + 1;
    const value = JSON.stringify({ node: this.node, epoch, at: Date.now() });
    try {
      if (entry) await this.site.leases.update('leader', value, entry.revision);
      else await this.site.leases.create('leader', value);
      if (!mine) this.deps.log.info(`cluster: ${this.node} leads placement (epoch ${epoch})`);
      this.leaderName = this.node;
    } catch {
      // Another node renewed or took it first: it leads.
      return;
    }
    // A new leader goes on from its predecessor's last round (the cameras' cool-downs with it).
    if (!mine) {
      const last = await this.site.leases.get('plan');
      this.lastPlan = last?.operation === 'PUT' ? last.json<Plan>() : null;
    }
    await this.place();
    if (Date.now() - this.purgedAt > PURGE_EVERY_MS) await this.purgeDefinitions();
  }

  /** The leader deletes the definitions of tasks closed more than 24 h ago. */
  private async purgeDefinitions(): Promise<void> {
    this.purgedAt = Date.now();
    for (const { key, value } of await entriesOf<TaskRow>(this.site.tasks))
      if (expired(value)) {
        await this.forgetDeliveryMarks(key);
        await this.site.tasks.delete(key);
      }
  }

  /** A task gone from the site (taken out, or closed a day ago) leaves no delivery mark behind: HTTP's or MQTT's. */
  private async forgetDeliveryMarks(taskId: string): Promise<void> {
    await Promise.all([this.site.delivery.delete(taskId), this.site.delivery.delete(publishedKey(taskId))]);
  }

  /** Asks every other node whether it is there: a killed engine's subscriptions vanish at once. */
  private async probeMembers(): Promise<void> {
    await Promise.all(
      [...this.members.keys()]
        .filter((node) => node !== this.node)
        .map(async (node) => {
          try {
            await this.conn.nc.request(`vc.node.${node}.alive`, '', { timeout: TICK_MS });
            this.gone.delete(node);
          } catch (error) {
            const noResponders =
              (error as { isNoResponders?: () => boolean }).isNoResponders?.() ??
              /no responders/i.test(String(error));
            if (noResponders) {
              if (!this.gone.has(node)) this.gone.set(node, Date.now());
            } else this.gone.delete(node);
          }
        }),
    );
  }

  /**
   * One placement round (placement.ts) over the nodes that are up and every assigned camera, then the
   * assignments brought towards it (carryOut). A camera of a gone or silent node has no node to plan
   * from, and moves at once.
   */
  private async place(): Promise<void> {
    const up = [...this.members.values()]
      .map(({ card }) => card)
      .filter((card) => this.stateOf(card.name) === 'up');
    if (up.length === 0) return;
    const now = Date.now();
    const planned = [...this.assignments].filter(([, { value }]) => !this.takenBy(value));
    const cameras: CameraDemand[] = planned.map(([taskId, { value }]) => {
      const demand = this.members.get(value.node)?.card.demands?.[taskId] ?? this.knownDemands.get(taskId);
      return {
        task_id: taskId,
        cost_cores: this.smoothedCost(taskId, demand?.cost_cores ?? UNMEASURED_CAMERA_CORES, now),
        priority: demand?.priority ?? PRIORITY_DEFAULT,
        needs_gpu: demand?.gpu === 'required',
        prefers_gpu: demand?.gpu === 'preferred',
        models: demand?.models ?? [],
        unreachable_on: this.warmFailedOn(taskId, now),
        node:
          this.stateOf(value.node) === 'up' && this.members.has(value.node) && !value.parked
            ? value.node
            : null,
      };
    });
    const round = plan(up, cameras, this.lastPlan, now);
    this.lastPlan = round;
    const changed = await this.carryOut(round, new Map(planned), now);
    if (round.moves.length > 0 || round.unplaced.length > 0 || changed)
      await this.site.leases.put('plan', JSON.stringify(round));
  }

  /**
   * Brings each assignment one step towards the plan; whether the plan changed on the way (a move
   * called off). A camera whose node is gone is assigned to its new node at once (there is nothing to
   * make before the break). One whose node is up moves make-before-break: its target is named `next`
   * and warms it up (analyses, its output fenced); once the target's card says it analyses, the task
   * is handed over at the next epoch: the new owner claims the chain, the old one stops on seeing it.
   * At most MAX_PLANNED_MOVES warm up at once, each for at most WARM_TIMEOUT_MS.
   */
  private async carryOut(
    round: Plan,
    assignments: ReadonlyMap<string, { value: Assignment; revision: number }>,
    now: number,
  ): Promise<boolean> {
    let warmingUp = [...this.assignments.values()].filter(({ value }) => value.next !== undefined).length;
    let changed = false;
    for (const [taskId, current] of assignments) {
      const { node: from, epoch, next, parked } = current.value;
      const to = round.assignment[taskId];
      let write: Assignment | undefined;
      let why = '';
      if (to === undefined) {
        // Left out (higher priorities took the room): stopped where it runs, until there is room.
        if (!parked) write = { node: from, epoch, parked: true };
        why = 'no node has room for it: it stops';
      } else if (parked) {
        write = { node: to, epoch: epoch + 1 };
        why = 'room for it again';
      } else if (to === from) {
        // Planned back where it runs (its target died, or the move was called off): no warm-up.
        if (next !== undefined) {
          write = { node: from, epoch };
          why = `the move to ${next} is off`;
        }
      } else if (this.stateOf(from) !== 'up' || !this.members.has(from)) {
        write = { node: to, epoch: epoch + 1 };
        why = `its node ${from} is ${this.members.has(from) ? this.stateOf(from) : 'gone from the site'}`;
      } else if (next !== to) {
        if (warmingUp >= MAX_PLANNED_MOVES) continue;
        warmingUp += 1;
        this.warmAsked.set(taskId, now);
        write = { node: from, epoch, next: to };
        why = 'warming up on the target first';
      } else if (this.members.get(to)?.card.warm?.includes(taskId)) {
        write = { node: to, epoch: epoch + 1 };
        why = 'warmed up there: handed over';
      } else if (!this.warmAsked.has(taskId)) {
        // A move a previous leader started: its clock starts now.
        this.warmAsked.set(taskId, now);
      } else if (now - (this.warmAsked.get(taskId) as number) > WARM_TIMEOUT_MS) {
        const failed = this.warmFailed.get(taskId) ?? new Map<string, number>();
        this.warmFailed.set(taskId, failed.set(to, now + WARM_FAILED_MS));
        round.assignment[taskId] = from;
        changed = true;
        write = { node: from, epoch };
        why = `${to} did not analyse it within ${WARM_TIMEOUT_MS / 1000} s: it stays`;
      }
      if (!write) continue;
      if (write.next === undefined) this.warmAsked.delete(taskId);
      try {
        await this.site.assignments.update(taskId, JSON.stringify(write), current.revision);
        this.deps.log.info(
          `cluster: task ${taskId} of ${from} (epoch ${epoch}) -> ${JSON.stringify(write)}: ${why}`,
        );
      } catch {
        // Changed meanwhile (the task closed, or another leader moved it): read again next tick.
      }
    }
    return changed;
  }

  /**
   * Whether a leaving node that is up takes the task out of the site: the leader does not plan it.
   * Its taker gone (killed mid-way), the leader plans it as any other: its write drops the mark.
   */
  private takenBy(value: Assignment): boolean {
    const taker = value.next ?? value.node;
    return value.taking === true && this.members.has(taker) && this.stateOf(taker) === 'up';
  }

  /** The camera's measured cost, smoothed exponentially over COST_SMOOTHING_MS. */
  private smoothedCost(taskId: string, measured: number, now: number): number {
    const last = this.smoothedCosts.get(taskId);
    const weight = last ? Math.min(1, Math.max(0, now - last.at) / COST_SMOOTHING_MS) : 1;
    const cores = last ? last.cores + weight * (measured - last.cores) : measured;
    this.smoothedCosts.set(taskId, { cores, at: now });
    return cores;
  }

  /** The nodes that could not warm the task up lately: placement gives it to none of them. */
  private warmFailedOn(taskId: string, now: number): string[] {
    const failed = this.warmFailed.get(taskId);
    if (!failed) return [];
    for (const [node, until] of failed) if (until <= now) failed.delete(node);
    if (failed.size === 0) this.warmFailed.delete(taskId);
    return [...failed.keys()];
  }

  /**
   * Takes over what is assigned here and not running; releases what runs here but is assigned
   * elsewhere; and brings into the site what runs here and the site does not know (a workstation's
   * tasks when it first starts in a cluster).
   */
  private async reconcile(): Promise<void> {
    // A warm-up whose move is off, or whose task is closed.
    for (const taskId of this.warming.keys()) {
      const assigned = this.assignments.get(taskId)?.value;
      if (assigned?.node !== this.node && assigned?.next !== this.node) await this.unwarm(taskId);
    }
    for (const taskId of this.deps.tasks.running()) {
      if (!this.assignments.has(taskId) && !this.appender.owns(taskId) && !this.sharing.has(taskId))
        await this.started(taskId);
    }
    for (const [taskId, { value }] of this.assignments) {
      if (value.node === this.node && value.parked) {
        if (this.deps.tasks.runs(taskId) || this.appender.owns(taskId))
          await this.release(taskId, 'no room for it in the site: higher priorities run');
      } else if (value.node === this.node) {
        if (!this.appender.owns(taskId) && !this.adopting.has(taskId)) void this.adopt(taskId, value.epoch);
      } else if (value.next === this.node) {
        if (!this.warming.has(taskId) && !this.adopting.has(taskId) && (!this.leaving || value.taking))
          void this.warm(taskId);
      } else if (this.deps.tasks.runs(taskId) || this.appender.owns(taskId)) {
        await this.release(taskId, `assigned to ${value.node}`);
      }
    }
    if (this.leaving === 'draining') {
      for (const taskId of this.taking) await this.take(taskId);
      await this.leaveOnceEmpty();
    }
  }

  /**
   * One step of bringing a task this leaving node takes here: marked as taken (warming up here), then
   * handed over here once it analyses here (or at once, its owner gone), as the leader would. Each
   * step is one compare-and-set write: one that loses a race is tried again next tick.
   */
  private async take(taskId: string): Promise<void> {
    const current = this.assignments.get(taskId);
    if (!current) {
      // Closed (or purged) meanwhile: nothing to take.
      this.taking.delete(taskId);
      return;
    }
    const { node, epoch, next, taking } = current.value;
    let write: Assignment | undefined;
    if (node === this.node) {
      if (!taking) write = { node, epoch, taking: true };
    } else if (next !== this.node || !taking) write = { node, epoch, next: this.node, taking: true };
    else if (!this.members.has(node) || this.stateOf(node) !== 'up')
      write = { node: this.node, epoch: epoch + 1, taking: true };
    else if (this.warming.has(taskId) && this.deps.tasks.runs(taskId) && this.analyses(taskId))
      write = { node: this.node, epoch: epoch + 1, taking: true };
    if (!write) return;
    try {
      await this.site.assignments.update(taskId, JSON.stringify(write), current.revision);
      this.deps.log.info(
        `cluster: ${this.node} takes task ${taskId} out of the site: ${JSON.stringify(write)}`,
      );
    } catch {
      // Changed meanwhile: read again next tick.
    }
  }

  /**
   * Starts a task another node runs, for a planned move to this one: it opens the source and analyses,
   * its output fenced (its owner still reports), until the leader hands it over (adopt).
   */
  private async warm(taskId: string): Promise<void> {
    this.adopting.add(taskId);
    try {
      const definition = await this.site.tasks.get(taskId);
      if (definition?.operation !== 'PUT') return;
      const row = definition.json<TaskRow>();
      if (row.status === 'closed' || this.deps.tasks.runs(taskId)) return;
      this.warming.set(taskId, null);
      this.deps.tasks.adopt(row);
      this.deps.log.info(`cluster: ${this.node} warms task ${taskId} up, to take it over`);
    } catch (error) {
      this.deps.log.warn({ err: error }, `cluster: task ${taskId} was not warmed up`);
    } finally {
      this.adopting.delete(taskId);
    }
  }

  /** Stops a warm-up: nothing of it was stored here, nothing goes anywhere. */
  private async unwarm(taskId: string): Promise<void> {
    this.warming.delete(taskId);
    await this.deps.tasks.release(taskId);
    this.deps.log.info(`cluster: ${this.node} stopped warming task ${taskId} up: its move is off`);
  }

  /** Claims the task's chain at its epoch, brings its undelivered events here, and runs it. */
  private async adopt(taskId: string, epoch: number): Promise<void> {
    this.adopting.add(taskId);
    try {
      const definition = await this.site.tasks.get(taskId);
      if (definition?.operation !== 'PUT') return;
      const row = definition.json<TaskRow>();
      if (row.status === 'closed') return;
      const chain = new TaskChain(this.conn, taskId, this.node, epoch);
      const lastSeq = await chain.claim();
      this.lost.delete(taskId);
      const delivered = await this.deliveryMark(taskId);
      // MQTT resumes from its own mark: the broker may have lagged behind the receivers, or led them.
      const published = this.deps.mqtt.enabled ? await this.publishedMark(taskId, delivered) : delivered;
      const from = published.seq < delivered.seq ? published : delivered;
      const undelivered = (await readChain(this.conn, taskId, from.stream_seq, MAX_CHAIN_IMPORT)).flatMap(
        ({ entry }) => (entry.kind === 'event' && entry.seq > from.seq ? [entry.body] : []),
      );
      this.publishedBefore.set(taskId, published.seq);
      this.deps.outbox.adopt(targetOf(row), undelivered, lastSeq, delivered.seq);
      this.appender.own(chain, this.storedBodies(taskId, lastSeq));
      // Warmed up here: it analyses on, its output now this node's to store and chain. A warm copy
      // older than the definition (changed meanwhile) starts again from the definition.
      const warm = this.warming.has(taskId);
      this.warming.delete(taskId);
      if (warm && this.deps.tasks.storedRow(taskId)?.updated_at !== row.updated_at)
        await this.deps.tasks.release(taskId);
      if (!this.deps.tasks.runs(taskId)) this.deps.tasks.adopt(row);
      this.deps.log.info(
        `cluster: ${this.node} runs task ${taskId} (epoch ${epoch}, events from seq ${lastSeq + 1}${warm ? ', warmed up' : ''})`,
      );
    } catch (error) {
      if (!(error instanceof Superseded))
        this.deps.log.warn({ err: error }, `cluster: task ${taskId} was not taken over`);
    } finally {
      this.adopting.delete(taskId);
    }
  }

  private async release(taskId: string, why: string): Promise<void> {
    const chained = this.appender.chainOf(taskId)?.seq ?? 0;
    await this.letGo(taskId, this.appender.disown(taskId), chained);
    this.deps.log.info(`cluster: ${this.node} stopped task ${taskId}: ${why}`);
  }

  private async superseded(
    taskId: string,
    held: CallbackBody[],
    chained: number,
    error: Superseded,
  ): Promise<void> {
    this.deps.log.warn(`cluster: ${error.message}; ${held.length} events it held go to the new owner`);
    await this.letGo(taskId, held, chained);
  }

  /**
   * Stops the task here for good: the events it stored and could not chain go to the new owner
   * (late), then its pending deliveries here are dropped (the new owner delivers from the chain).
   * Of its stored events only those its chain holds (seq up to `chained`) may still be delivered from
   * here until they are dropped: the others are numbered anew by the new owner. None is published on
   * MQTT from here any more: the new owner publishes from the site's MQTT mark.
   */
  private async letGo(taskId: string, held: CallbackBody[], chained: number): Promise<void> {
    this.lost.set(taskId, chained);
    this.publishedBefore.delete(taskId);
    // Events a full disk kept from being stored here go too, numbered by the new owner (seq 0 here).
    const unstored = this.deps.held
      .take(taskId)
      .map(({ event }) => ({ ...event, event_id: randomUUID(), seq: 0 }) as CallbackBody);
    this.handovers.set(taskId, [...(this.handovers.get(taskId) ?? []), ...held, ...unstored]);
    await this.deps.tasks.release(taskId);
    await this.handOver();
  }

  /**
   * Hands to their owners the events this node stored for tasks that ran elsewhere while it was down
   * and that their chains lack (it died before appending them); its pending deliveries of those tasks
   * go (the owners deliver from the chains). The chains are read from the last delivery mark on.
   */
  private async settleStrays(): Promise<void> {
    for (const taskId of this.strays) {
      try {
        const pending = this.storedBodies(taskId, 0, 'pending');
        const from = await this.deliveryMark(taskId);
        const chained = new Set(
          (await readChain(this.conn, taskId, from.stream_seq, MAX_CHAIN_IMPORT)).flatMap(({ entry }) =>
            entry.kind === 'event' ? [entry.event_id] : [],
          ),
        );
        this.handovers.set(
          taskId,
          pending.filter((body) => !chained.has(body.event_id)),
        );
        this.strays.delete(taskId);
      } catch (error) {
        this.deps.log.warn(
          { err: error },
          `cluster: the events of task ${taskId}, which runs elsewhere, wait for NATS`,
        );
      }
    }
    await this.handOver();
  }

  /** Publishes the events held for other owners; what NATS does not take now goes with the next tick. */
  private async handOver(): Promise<void> {
    for (const [taskId, held] of this.handovers) {
      try {
        for (const body of held)
          await this.conn.js.publish(lateSubject(taskId), JSON.stringify(body), {
            msgID: `late:${body.event_id}`,
          });
        this.handovers.set(taskId, []);
        // Then its pending deliveries here go; a full disk keeps them (never sent: the task is lost
        // here) until there is room.
        this.deps.outbox.release(taskId);
        this.handovers.delete(taskId);
      } catch (error) {
        this.deps.log.warn({ err: error }, `cluster: the events of task ${taskId} wait to be handed over`);
      }
    }
  }

  /** Takes in the late events other nodes handed over for the tasks this node owns. */
  private async collectLate(): Promise<void> {
    const info = await this.conn.jsm.streams.info(LATE_STREAM);
    if (info.state.messages === 0) return;
    for (const taskId of this.assignments.keys()) {
      if (!this.appender.owns(taskId)) continue;
      const row = this.deps.tasks.storedRow(taskId);
      if (!row) continue;
      const target = targetOf(row);
      for (const { streamSeq, json } of await readSubject(
        this.conn,
        LATE_STREAM,
        lateSubject(taskId),
        0,
        MAX_LATE_PER_TICK,
      )) {
        // A body another node handed over is taken in only if it is one the contract allows.
        const body = checkLateBody(json);
        if (body.ok) this.deps.outbox.enqueueLate(target, body.value);
        else this.deps.log.error(`cluster: a late event of task ${taskId} was dropped: ${body.error}`);
        await this.conn.jsm.streams.deleteMessage(LATE_STREAM, streamSeq, false);
      }
    }
  }

  /**
   * A task started on this node: shared, assigned here at epoch 1, and its chain claimed. A task
   * that left the site with a node and comes back with it has a chain already: it goes on from there,
   * at the epoch after its last (its events made away from the site follow the chain's last seq).
   */
  private async started(taskId: string): Promise<void> {
    if (this.sharing.has(taskId)) return;
    this.sharing.add(taskId);
    try {
      await this.share(taskId);
      const epoch = ((await chainTail(this.conn, taskId)).entry?.epoch ?? 0) + 1;
      const assignment: Assignment = { node: this.node, epoch };
      await this.site.assignments.create(taskId, JSON.stringify(assignment));
      const chain = new TaskChain(this.conn, taskId, this.node, epoch);
      // Events stored while the chain was being claimed go first.
      this.appender.own(chain, this.storedBodies(taskId, await chain.claim()));
    } catch (error) {
      this.deps.log.error({ err: error }, `cluster: task ${taskId} was not shared with the site`);
    } finally {
      this.sharing.delete(taskId);
    }
  }

  /** The task's events this node stored after a seq (in a delivery state, when given), in seq order. */
  private storedBodies(taskId: string, afterSeq: number, state?: DeliveryState): CallbackBody[] {
    const page = this.deps.outbox.list(taskId, {
      after_seq: afterSeq,
      limit: MAX_CHAIN_IMPORT,
      state,
      with_body: true,
    });
    return (page?.items ?? []).flatMap((item) => (item.body ? [item.body] : []));
  }

  /** How far the site recorded the task's events delivered: the last settled seq and where it lies in the chain. */
  private deliveryMark(taskId: string): Promise<DeliveryMark> {
    return this.markAt(taskId, { seq: 0, stream_seq: 0 });
  }

  /** How far the site recorded the task's events published on MQTT; one never recorded is where delivery is. */
  private publishedMark(taskId: string, delivered: DeliveryMark): Promise<DeliveryMark> {
    return this.markAt(publishedKey(taskId), delivered);
  }

  private async markAt(key: string, unrecorded: DeliveryMark): Promise<DeliveryMark> {
    const mark = await this.site.delivery.get(key);
    return mark?.operation === 'PUT' ? mark.json<DeliveryMark>() : unrecorded;
  }

  /** Writes the task's definition for the site: what another node needs to take it over. */
  private async share(taskId: string): Promise<void> {
    if (this.takenOut.has(taskId)) return;
    const row = this.deps.tasks.storedRow(taskId);
    if (row) await this.site.tasks.put(taskId, JSON.stringify(row));
  }

  /** A closed task purged here leaves the site's listing too. */
  private async purgedHere(taskId: string): Promise<void> {
    try {
      await this.site.tasks.delete(taskId);
      this.listing.invalidate();
    } catch (error) {
      this.deps.log.warn({ err: error }, `cluster: the purge of task ${taskId} was not shared`);
    }
  }

  private async closedHere(taskId: string): Promise<void> {
    // A warm copy closed on its own (its source never opened here): the task itself runs on, and the
    // copy stays fenced until the leader calls its move off.
    if (this.warming.has(taskId)) return;
    try {
      await this.share(taskId);
      await this.site.assignments.delete(taskId);
      this.appender.retire(taskId);
      this.publishedBefore.delete(taskId);
    } catch (error) {
      this.deps.log.warn({ err: error }, `cluster: the close of task ${taskId} was not shared`);
    }
  }
}

/** Where a task's events go, as its stored row says. */
const targetOf = (row: TaskRow): ReportTarget => ({
  task_id: row.task_id,
  report_url: row.report_url,
  report_secret: row.report_secret,
});

/** A closed task leaves the site's listing, and its definition the store, as it leaves a node's: after 24 h. */
const expired = (row: TaskRow) =>
  row.status === 'closed' && (row.closed_at ?? 0) <= Date.now() - TASK_LIMITS.closedRetentionMs;

/** Every live entry of a bucket (deleted keys left out), its value parsed, read in parallel; at most `limit`. */
async function entriesOf<T>(
  kv: KV,
  limit = Number.POSITIVE_INFINITY,
): Promise<Array<{ key: string; value: T; revision: number }>> {
  const keys: string[] = [];
  for await (const key of await kv.keys()) keys.push(key);
  const entries = await Promise.all(keys.slice(0, limit).map((key) => kv.get(key)));
  return entries.flatMap((entry) =>
    entry?.operation === 'PUT' ? [{ key: entry.key, value: entry.json<T>(), revision: entry.revision }] : [],
  );
}
