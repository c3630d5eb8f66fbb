import type { ConnectionLimits } from './api/connections';
import type { AuditRetention } from './audit/audit-trail';
import type { LoginLimits } from './auth/login-limiter';
import type { HasherLimits } from './auth/passwords';
import type { HeldEventsOptions } from './callbacks/held-events';
import type { Outbox, OutboxOptions } from './callbacks/outbox';
import type { DeliveryOptions } from './callbacks/worker';
import type { Clock } from './clock';
import type { ClusterOptions } from './cluster/options';
import type { EventBus } from './events/bus';
import type { PoolOptions } from './inference/pool';
import type { LiveLimits } from './live/limits';
import type { LogLevel, LogOptions } from './log/logger';
import type { HwaccelSetting } from './media/hwaccel';

export interface EngineOptions {
  /** Address to bind; loopback unless the operator exposes the API on the LAN. */
  host?: string;
  port?: number;
  dataDir: string;
  /** Password for the admin account created on first start; defaults to VC_ADMIN_PASSWORD. */
  adminPassword?: string;
  /** The built-in package's folder (assets/builtin); the desktop app passes where it is packaged. */
  builtinDir?: string;
  /**
   * .zapk files the engine makes sure are installed when it starts: each is installed, or upgraded
   * when its version differs from the installed one (never while a task uses it).
   */
  installPackages?: readonly string[];
  /**
   * Folders whose files may be video sources (tasks and previews), links resolved before the check;
   * any other file is refused like a missing one. Default: <data-dir>/media alone.
   */
  mediaDirs?: readonly string[];
  /** Folder with the built console (index.html) served at "/"; omitted = API only. */
  consoleDir?: string;
  /**
   * Host names the API answers to besides IP addresses and localhost (DNS names on the LAN); any
   * other Host is refused with 403, which shuts out DNS-rebinding pages.
   */
  allowedHosts?: readonly string[];
  /** Origins of pages elsewhere that may call the API (the desktop console); its own is always fine. */
  allowedOrigins?: readonly string[];
  clock?: Clock;
  /**
   * Most frames per second analysed per video stream (default 10): ffmpeg passes no more, so a
   * 25 or 60 fps camera costs what a 10 fps one does. Line crossing stays exact at low rates.
   */
  analysisFps?: number;
  /**
   * Most pixels a video source's frames may have (default 4096 x 2160, DCI 4K): a larger source is
   * refused at task start and preview (422, 42207), and lost with that reason when it grows later.
   */
  maxSourcePixels?: number;
  /**
   * Longest side, in pixels, of the frames analysed, drawn in snapshots and the AI video (default
   * 1280): a smaller one costs less CPU a camera (bench:capacity) and shows less detail. Reported
   * coordinates stay in the source's pixels either way.
   */
  analysisSize?: number;
  /**
   * File sources play at this multiple of real time (default 1), for tests and benchmarks of
   * sources that deliver faster or slower than their pictures were taken: rules time frames by the
   * media's clock either way.
   */
  fileReadRate?: number;
  /**
   * Video decoding (default auto, DEFAULT_HWACCEL in engine/config/schema.ts, as from the command
   * line): an ffmpeg hwaccel, none for software, or auto for the first of the platform's whose device
   * opens. A stream whose hardware path fails decodes in software.
   */
  hwaccel?: HwaccelSetting;
  /**
   * Bytes of image upload bodies received and held at once, all uploads together (default 128 MiB,
   * DEFAULT_UPLOAD_MEMORY_BYTES): an upload beyond it waits up to 10 s, then gets 503 50302.
   */
  uploadMemoryBytes?: number;
  /**
   * Open connections at most (512), of which connections without a valid token may hold all but
   * `reserved` (32), `perClient` (64) from one client; how long headers (10 s) and idle keep-alives
   * (5 s) may take.
   */
  connections?: Partial<ConnectionLimits>;
  /** Failed-login limits and password hashing bounds (defaults: 10 per client, 30 per user a minute). */
  login?: Partial<LoginLimits & HasherLimits>;
  /** Callback delivery tuning (request timeout, concurrency, snapshot bytes kept, retry period, disk-full hold). */
  delivery?: Partial<DeliveryOptions & OutboxOptions & HeldEventsOptions>;
  /**
   * Inference hosts and their bounds: host count, per-frame and model-check deadlines, memory per
   * host, how long a model that overran is refused, installs waiting for a check (POOL_DEFAULTS).
   */
  inference?: Partial<PoolOptions>;
  /**
   * Video processes a caller may start (LIVE_DEFAULTS): previews (4), AI-video encoders (16, 4 per
   * task), RTMP pushes (16), and how long a push may be down before it is ended (60 s).
   */
  live?: Partial<LiveLimits>;
  logLevel?: LogLevel;
  /**
   * The engine log (LOG_DEFAULTS): <data-dir>/logs/engine.log, rotated at maxFileBytes (10 MiB) with
   * maxFiles (5) kept, the current one included; stdout too unless stdout is false.
   */
  log?: Partial<LogOptions>;
  /** Audit trail retention (AUDIT_RETENTION_DEFAULTS: 90 days, 100,000 entries). */
  audit?: Partial<AuditRetention>;
  /**
   * The cluster this engine joins (--cluster and its flags, `cluster` in settings.json); absent, the
   * engine is a single workstation with no NATS connection. The loader (engine/config/load.ts) gives
   * it only when servers are named, with a user and a password (anonymous access is refused).
   */
  cluster?: ClusterOptions;
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export interface Engine {
  /** http://HOST:PORT of the running API. */
  readonly url: string;
  readonly port: number;
  /** A token for a local user without a password: how the desktop main process signs the console in. */
  issueToken(username?: string): IssuedToken;
  resetPassword(username: string, password: string): Promise<void>;
  /** Where results are stored for delivery (the analysis pipeline enqueues here). */
  readonly outbox: Outbox;
  /** Every stored event and delivery change, in process: the desktop main process forwards it over IPC. */
  readonly bus: EventBus;
  close(): Promise<void>;
}

export { startEngine } from './engine';
