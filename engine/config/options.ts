/**
 * The configuration as startEngine's options, and startEngine's options held to the same schema: an
 * in-process caller (a test, a benchmark, the lead's cluster) cannot pass what the command line
 * refuses.
 */
import type { TSchema } from '@sinclair/typebox';
import type { ClusterOptions } from '../cluster/options';
import type { EngineOptions } from '../index';
import { ConfigError, firstProblem } from './problems';
import { type ClusterConfig, type ConfigKey, type EngineConfig, EngineConfigSchema } from './schema';

export function toEngineOptions(config: EngineConfig, cluster?: ClusterOptions): EngineOptions {
  return {
    host: config.host,
    port: config.port,
    dataDir: config.data_dir,
    consoleDir: config.console_dir === '' ? undefined : config.console_dir,
    builtinDir: config.builtin_dir,
    installPackages: config.install,
    mediaDirs: config.media_dirs,
    allowedHosts: config.allowed_hosts,
    allowedOrigins: config.allowed_origins,
    analysisFps: config.analysis_fps,
    analysisSize: config.analysis_size,
    maxSourcePixels: config.max_source_pixels,
    inference: { provider: config.execution_provider },
    hwaccel: config.hwaccel,
    logLevel: config.log_level,
    ...(cluster ? { cluster } : {}),
  };
}

/** Each setting's value among startEngine's options, under the option's name. */
const OPTIONS: Record<Exclude<ConfigKey, 'cluster'>, [string, (options: EngineOptions) => unknown]> = {
  host: ['host', (o) => o.host],
  port: ['port', (o) => o.port],
  data_dir: ['dataDir', (o) => o.dataDir],
  console_dir: ['consoleDir', (o) => o.consoleDir],
  builtin_dir: ['builtinDir', (o) => o.builtinDir],
  install: ['installPackages', (o) => o.installPackages],
  media_dirs: ['mediaDirs', (o) => o.mediaDirs],
  allowed_hosts: ['allowedHosts', (o) => o.allowedHosts],
  allowed_origins: ['allowedOrigins', (o) => o.allowedOrigins],
  analysis_fps: ['analysisFps', (o) => o.analysisFps],
  analysis_size: ['analysisSize', (o) => o.analysisSize],
  max_source_pixels: ['maxSourcePixels', (o) => o.maxSourcePixels],
  execution_provider: ['inference.provider', (o) => o.inference?.provider],
  hwaccel: ['hwaccel', (o) => o.hwaccel],
  log_level: ['logLevel', (o) => o.logLevel],
};

const CLUSTER_OPTIONS: Record<Exclude<keyof ClusterConfig, 'password_file'>, keyof ClusterOptions> = {
  servers: 'servers',
  user: 'user',
  node_name: 'nodeName',
  ca_file: 'caFile',
  advertise_url: 'advertiseUrl',
  max_cameras: 'maxCameras',
  capacity_cores: 'capacityCores',
};

function check(schema: TSchema, value: unknown, option: string, field: string): void {
  if (value === undefined) return;
  const problem = firstProblem(schema, value);
  if (problem) throw new ConfigError(field, `engine option ${option} ${problem.text}`);
}

/** Refuses options the configuration schema refuses (a ConfigError naming the option); undefined is the default. */
export function checkEngineOptions(options: EngineOptions): void {
  for (const [key, [option, value]] of Object.entries(OPTIONS))
    check(EngineConfigSchema.properties[key as keyof typeof OPTIONS], value(options), option, key);
  const { cluster } = options;
  if (cluster === undefined) return;
  const schema = EngineConfigSchema.properties.cluster;
  if (cluster.servers === undefined)
    throw new ConfigError('cluster.servers', 'engine option cluster.servers is required');
  for (const [key, option] of Object.entries(CLUSTER_OPTIONS)) {
    const field = key as keyof typeof CLUSTER_OPTIONS;
    check(schema.properties[field], cluster[option], `cluster.${option}`, `cluster.${key}`);
  }
  if (typeof cluster.user !== 'string' || typeof cluster.password !== 'string' || cluster.password === '')
    throw new ConfigError('cluster.password', 'engine option cluster: anonymous access is refused');
}
