/**
 * The engine's configuration: one schema for every setting, whichever way it arrives (a flag,
 * `<data-dir>/settings.json`, an environment variable, the desktop's engine arguments), with its
 * default and range. engine/config/load.ts reads the three sources into it, engine/config/options.ts
 * holds startEngine's options to it, engine/config/args.ts writes the desktop's flags from it and
 * docs/configuration.md is generated from it (engine/config/doc.ts). Pure: the desktop's main
 * process reaches it through engine/contract.
 */
import { type SchemaOptions, type Static, Type } from '@sinclair/typebox';
import { HWACCELS } from '../contract/health';
import { EXECUTION_PROVIDERS } from '../inference/providers';
import { ANALYSIS_SIZE_RANGE, MAX_FRAME_SIDE } from '../media/analysis-size';
import { DEFAULT_MAX_SOURCE_PIXELS, MAX_SOURCE_PIXELS_SETTING } from '../media/source-pixels';
import { DEFAULT_ANALYSIS_FPS } from '../tasks/limits';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
/**
 * Hardware decoding by default, in-process as from the command line and the desktop: auto tries the
 * platform's hardware decoders and decodes in software when none opens (and per stream when the
 * hardware path fails), so it is safe on every machine, and it is what `npm run engine` and the
 * desktop have always used. `none` in-process only made tests run a default no product runs; a
 * caller that needs software decoding for certain (tests that judge decode figures) says so.
 */
export const DEFAULT_HWACCEL = 'auto';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'] as const;
/** The environment variable the cluster's NATS password may come from (never a flag: ps shows flags). */
export const CLUSTER_PASSWORD_ENV = 'VC_CLUSTER_PASSWORD';
/**
 * The most bytes a password file may hold: a password is short, and a wrong path (a log, a device)
 * is refused instead of being read whole.
 */
export const MAX_SECRET_FILE_BYTES = 4096;

const oneOf = <T extends string>(values: readonly T[], options: SchemaOptions) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );
const Path = (description?: string) => Type.String({ minLength: 1, title: 'a path', description });
const Names = (title: string, description: string) =>
  Type.Array(Type.String({ minLength: 1, title }), { default: [], description });

/**
 * How the engine joins a cluster (settings.json `cluster`, the --cluster flags): ClusterOptions
 * (engine/cluster/options.ts) once the password is read. Servers' URLs carry no credentials: those
 * are the user and the password file (or VC_CLUSTER_PASSWORD), which stay out of logs and `ps`.
 */
export const ClusterConfigSchema = Type.Object(
  {
    servers: Type.Array(
      Type.String({
        pattern: '^(nats|tls)://[^\\s/?#@]+/?$',
        title: 'nats://host:port or tls://host:port, no credentials',
      }),
      { minItems: 1, description: 'The NATS servers of the site, at least one (every node names the same).' },
    ),
    user: Type.String({
      minLength: 1,
      title: 'a user name',
      description:
        "This node's NATS user (named as the node by `npm run cluster -- nats-users`); anonymous access is refused.",
    }),
    password_file: Path("A file holding the NATS user's password (trimmed); else VC_CLUSTER_PASSWORD."),
    node_name: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$',
      title: 'letters, digits, - and _ (a letter or digit first, at most 64)',
      description:
        "This node's name in the cluster, unique per site: letters, digits, - and _, at most 64 (default: the machine's host name).",
    }),
    ca_file: Path("A PEM file of the CA that signed the NATS servers' certificates, for tls:// servers."),
    advertise_url: Type.String({
      pattern: '^https?://[^\\s/?#@]+/?$',
      title: 'http://host:port or https://host:port',
      description:
        "The URL at which the other nodes reach this node's API (default: http://<host>:<port> as bound).",
    }),
    max_cameras: Type.Integer({
      minimum: 1,
      description: 'Cameras this node takes at most (default: its measured CPU capacity decides alone).',
    }),
    capacity_cores: Type.Number({
      minimum: 0.1,
      maximum: 4096,
      description:
        "Cores' worth of CPU this node gives to cameras (default: its cores less 0.5): less on a machine that does other work too.",
    }),
  },
  { additionalProperties: false },
);
export type ClusterConfig = Static<typeof ClusterConfigSchema>;

export const EngineConfigSchema = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      default: DEFAULT_HOST,
      description: 'The address to bind: loopback, or 0.0.0.0 to expose the API on the LAN.',
    }),
    port: Type.Integer({
      minimum: 0,
      maximum: 65535,
      default: DEFAULT_PORT,
      description: 'The TCP port to listen on; 0 = any free one.',
    }),
    data_dir: Type.String({
      minLength: 1,
      title: 'a path',
      default: '.data',
      description: 'SQLite database, installed packages, logs, scratch files; holds settings.json.',
    }),
    console_dir: Type.String({
      title: 'a path, or "" for none',
      default: 'out/renderer',
      description: 'The built console, served at / when it exists; "" serves the API only.',
    }),
    builtin_dir: Path(
      'The built-in package installed on the first start (default: assets/builtin beside the engine).',
    ),
    install: Type.Array(Path(), {
      default: [],
      description: 'Packages (.zapk) installed at start, or upgraded when their version differs.',
    }),
    media_dirs: Type.Array(Path(), {
      description:
        'The only folders whose files may be video sources (real paths, links resolved); default <data-dir>/media alone.',
    }),
    allowed_hosts: Names('a host name', 'DNS names the API answers to besides IP addresses and localhost.'),
    allowed_origins: Names(
      'an origin',
      'Origins of pages elsewhere that may call the API (the desktop console).',
    ),
    analysis_fps: Type.Number({
      minimum: 0.1,
      maximum: 60,
      default: DEFAULT_ANALYSIS_FPS,
      description: 'Most frames per second analysed per video stream.',
    }),
    analysis_size: Type.Integer({
      minimum: ANALYSIS_SIZE_RANGE.min,
      maximum: ANALYSIS_SIZE_RANGE.max,
      default: MAX_FRAME_SIDE,
      description: 'Longest side, in pixels, of the frames analysed and drawn in snapshots and the AI video.',
    }),
    max_source_pixels: Type.Integer({
      minimum: 1,
      maximum: MAX_SOURCE_PIXELS_SETTING,
      default: DEFAULT_MAX_SOURCE_PIXELS,
      description:
        'Most pixels a video source may have (4096 x 2160, DCI 4K); a larger one is refused (422 42207). Raise it for e.g. 12 MP cameras.',
    }),
    execution_provider: oneOf(EXECUTION_PROVIDERS, {
      default: 'auto',
      description: 'Where models run (docs/gpu.md); a missing provider falls back to the CPU.',
    }),
    hwaccel: oneOf(HWACCELS, {
      default: DEFAULT_HWACCEL,
      description: 'Where video is decoded (docs/gpu.md); a failing hardware path decodes in software.',
    }),
    log_level: oneOf(LOG_LEVELS, {
      default: 'info',
      description: 'What the log (stdout and <data-dir>/logs/engine.log) gets.',
    }),
    cluster: Type.Optional(ClusterConfigSchema),
  },
  { additionalProperties: false },
);
/** Every setting, defaults filled in (media_dirs, builtin_dir and cluster stay optional). */
export type EngineConfig = Static<typeof EngineConfigSchema>;
export type ConfigKey = keyof EngineConfig;

/** How a setting reaches the engine besides the schema's default. */
export interface ConfigSource {
  /** Its command-line flag, without the dashes. */
  flag: string;
  /** Its environment variable, when it has one. */
  env?: string;
  /** Whether <data-dir>/settings.json may hold it. */
  file: boolean;
  /** A list on the command line: the flag repeated, comma-separated, or either. */
  list?: 'repeat' | 'comma' | 'either';
  /**
   * A path: relative to the working directory on the command line and in the environment, to the
   * data dir in settings.json.
   */
  path?: boolean;
}

/**
 * Where each setting may come from. data_dir cannot be in settings.json (the file is in it); where
 * the program's parts are (console_dir, builtin_dir) and what to install are the command line's.
 */
export const CONFIG_SOURCES: Record<Exclude<ConfigKey, 'cluster'>, ConfigSource> = {
  host: { flag: 'host', env: 'VC_HOST', file: true },
  port: { flag: 'port', env: 'VC_PORT', file: true },
  data_dir: { flag: 'data-dir', env: 'VC_DATA_DIR', file: false, path: true },
  console_dir: { flag: 'console-dir', file: false, path: true },
  builtin_dir: { flag: 'builtin-dir', file: false, path: true },
  install: { flag: 'install', file: false, list: 'repeat', path: true },
  media_dirs: { flag: 'media-dir', file: true, list: 'repeat', path: true },
  allowed_hosts: { flag: 'allowed-hosts', env: 'VC_ALLOWED_HOSTS', file: true, list: 'comma' },
  allowed_origins: { flag: 'allowed-origins', env: 'VC_ALLOWED_ORIGINS', file: true, list: 'comma' },
  analysis_fps: { flag: 'analysis-fps', env: 'VC_ANALYSIS_FPS', file: true },
  analysis_size: { flag: 'analysis-size', env: 'VC_ANALYSIS_SIZE', file: true },
  max_source_pixels: { flag: 'max-source-pixels', env: 'VC_MAX_SOURCE_PIXELS', file: true },
  execution_provider: { flag: 'execution-provider', env: 'VC_EXECUTION_PROVIDER', file: true },
  hwaccel: { flag: 'hwaccel', env: 'VC_HWACCEL', file: true },
  log_level: { flag: 'log-level', env: 'VC_LOG_LEVEL', file: true },
};

/** The cluster's settings: settings.json `cluster.<key>` or a flag; the password never a flag. */
export const CLUSTER_SOURCES: Record<keyof ClusterConfig, ConfigSource> = {
  servers: { flag: 'cluster', file: true, list: 'either' },
  user: { flag: 'cluster-user', file: true },
  password_file: { flag: 'cluster-password-file', file: true, path: true },
  node_name: { flag: 'node-name', file: true },
  ca_file: { flag: 'cluster-ca', file: true, path: true },
  advertise_url: { flag: 'advertise-url', file: true },
  max_cameras: { flag: 'max-cameras', file: true },
  capacity_cores: { flag: 'capacity-cores', file: true },
};

/** Part of the configuration, as one source gives it: the cluster's keys may come from several. */
export const PartialConfigSchema = Type.Partial(
  Type.Object({
    ...EngineConfigSchema.properties,
    cluster: Type.Partial(ClusterConfigSchema, { additionalProperties: false }),
  }),
  { additionalProperties: false },
);
export type PartialConfig = Static<typeof PartialConfigSchema>;

const NOT_IN_FILE = (Object.keys(CONFIG_SOURCES) as Array<keyof typeof CONFIG_SOURCES>).filter(
  (key) => !CONFIG_SOURCES[key].file,
);

/** <data-dir>/settings.json: any of the file's settings, nothing else (a misspelt key is refused). */
export const SettingsFileSchema = Type.Omit(PartialConfigSchema, NOT_IN_FILE, {
  additionalProperties: false,
});
