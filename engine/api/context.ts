import type { AuditTrail } from '../audit/audit-trail';
import type { Accounts } from '../auth/accounts';
import type { StreamTokens } from '../auth/stream-tokens';
import type { DefaultReceiver } from '../callbacks/default-receiver';
import type { HeldEvents } from '../callbacks/held-events';
import type { MqttPublisher } from '../callbacks/mqtt';
import type { Outbox } from '../callbacks/outbox';
import type { DeliveryWorker } from '../callbacks/worker';
import type { AlarmClips } from '../clips/alarm-clips';
import type { Clock } from '../clock';
import type { ClusterNode } from '../cluster/cluster-node';
import type { ErrorKind } from '../contract/errors';
import type { EventBus } from '../events/bus';
import type { AlarmReview } from '../events/review';
import type { ReviewItems } from '../events/review-items';
import type { ImageAnalysis } from '../images/analysis';
import type { WaitingBudget } from '../images/budget';
import type { PreviewStreams } from '../live/preview';
import type { Optimizations } from '../optimization/service';
import type { PackageStore } from '../packages/package-store';
import type { PackageRegistry } from '../packages/registry';
import type { FrameSnapshots } from '../pipeline/frame-snapshots';
import type { VideoAnalysis } from '../pipeline/video-analysis';
import type { SystemMonitor } from '../system/monitor';
import type { TaskRegistry } from '../tasks/registry';
import type { ConnectionSlots } from './connection-slots';
import type { AllowedPeers } from './host-check';
import type { LinkScope } from './links';
import type { UploadParts } from './openapi';

/** What the HTTP layer needs from the engine; routes reach the domain only through this. */
export interface ApiContext {
  accounts: Accounts;
  /** Short-lived tokens for the segment URIs of one HLS stream. */
  streamTokens: StreamTokens;
  packages: PackageRegistry;
  /** Where uploads are installed and removals made: the registry, or in cluster mode the site's store. */
  packageStore: PackageStore;
  tasks: TaskRegistry;
  /** Analysis of the uploads of image and diff tasks (4.8, 4.9). */
  images: ImageAnalysis;
  /** Effect optimization runs of video tasks (4.13): hard samples, proposals, dataset export. */
  optimizations: Optimizations;
  /** Running video tasks, with their AI video (4.10, 4.11). */
  video: VideoAnalysis;
  /** Stored alarms as an operator reviews them. */
  alarms: AlarmReview;
  /** Alarms grouped per visit (review items), marked, counted and ignored. */
  review: ReviewItems;
  /** Alarm clips (issue 35). */
  clips: AlarmClips;
  /** Small pictures of running video tasks, for a wall of many cameras. */
  snapshots: FrameSnapshots;
  /** Raw previews of sources (4.12). */
  previews: PreviewStreams;
  /** Bytes of image upload bodies received and held at once, all uploads together. */
  uploadMemory: WaitingBudget;
  /**
   * Result delivery: the outbox, the in-process bus of events, the MQTT publisher, the events held
   * in memory and the delivery worker (what waits for disk space when the disk is full).
   */
  events: {
    outbox: Outbox;
    bus: EventBus;
    mqtt: MqttPublisher;
    held: HeldEvents;
    delivery: DeliveryWorker;
    /** The site-wide callback URL of tasks without their own. */
    receiver: DefaultReceiver;
  };
  /** Who changed what (api/audit-hook.ts records, GET /api/audit reads). */
  audit: AuditTrail;
  /** GET /api/system: the machine's figures. */
  system: SystemMonitor;
  clock: Clock;
  /** Scratch folder for uploads being validated. */
  tmpDir: string;
  version: string;
  startedAt: number;
  consoleDir?: string;
  /** The cluster this engine is a node of; absent on a single workstation. */
  cluster?: ClusterNode;
  /** Host names and page origins accepted besides IP literals, localhost and the engine's own origin. */
  allowed: AllowedPeers;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Who keeps a connection when they are all taken (api/connection-slots.ts). */
    connectionSlots: ConnectionSlots;
  }
  interface FastifyContextConfig {
    /** Reachable without a token (only the token and health endpoints). */
    public?: boolean;
    /** Also takes the token as ?token= (EventSource cannot send headers). */
    queryToken?: boolean;
    /**
     * For an HLS file route: the scope of the stream a request's params name when the file is a
     * segment; a segment token of exactly that scope is accepted there (and nowhere else).
     */
    segmentScope?: (params: unknown) => string | undefined;
    /**
     * A link route (an image or download a page links to): its ?token= takes a link token of the
     * scope the params give (links.ts), never the API token.
     */
    linkScope?: LinkScope;
    /** Content types the route accepts for a body; JSON when unset. */
    accepts?: readonly string[];
    /**
     * The envelope errors the route's handler and the domain calls it makes can answer with, beyond
     * those every route of its kind answers (openapi.ts: routeRefusals); the OpenAPI document lists them.
     */
    refusals?: readonly ErrorKind[];
    /**
     * Cluster mode: the route's answer comes from the node that runs its task (params.task_id); asked
     * of another node, it is forwarded there: as a NATS request (engine/cluster/owner-routing.ts), or,
     * with 'http', proxied to the owner's API, for the bodies and answers a NATS message cannot carry
     * (uploads, video, zips, pictures; engine/cluster/owner-proxy.ts), and a video socket's upgrade
     * (engine/cluster/socket-proxy.ts).
     */
    ownerBound?: boolean | 'http';
    /** Media types of a success answer that is not the JSON envelope (a JPEG, a zip, HLS, SSE). */
    answers?: readonly string[];
    /** The file parts of an upload route, for its documented request body (the body has no schema). */
    upload?: UploadParts;
  }
  interface FastifyRequest {
    username?: string;
    /** The SHA-256 hash of the API token the request was authenticated with (not a segment token). */
    tokenHash?: string;
  }
}
