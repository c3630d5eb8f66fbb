/**
 * The one way the engine's configuration is read: flags over `<data-dir>/settings.json` over
 * environment variables over the schema's defaults (engine/config/schema.ts). Every value is held to
 * the schema where it arrives, so a refusal names the flag, the file's key or the variable.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ClusterOptions } from '../cluster/options';
import type { EngineOptions } from '../index';
import { toEngineOptions } from './options';
import { ConfigError, fieldName, firstProblem } from './problems';
import {
  CLUSTER_PASSWORD_ENV,
  CLUSTER_SOURCES,
  type ClusterConfig,
  CONFIG_SOURCES,
  type ConfigSource,
  type EngineConfig,
  EngineConfigSchema,
  MAX_SECRET_FILE_BYTES,
  type PartialConfig,
  SettingsFileSchema,
} from './schema';

export const SETTINGS_FILE = 'settings.json';

export type Environment = Record<string, string | undefined>;

export type Loaded =
  | { help: true }
  | {
      help: false;
      /** Every setting, defaults filled in and paths absolute. */
      config: EngineConfig;
      options: EngineOptions;
    };

type Entry = [key: string, source: ConfigSource, schema: TSchema];
const SETTINGS: Entry[] = Object.entries(CONFIG_SOURCES).map(([key, source]) => [
  key,
  source,
  EngineConfigSchema.properties[key as keyof typeof CONFIG_SOURCES],
]);
const CLUSTER_SETTINGS: Entry[] = Object.entries(CLUSTER_SOURCES).map(([key, source]) => [
  key,
  source,
  EngineConfigSchema.properties.cluster.properties[key as keyof ClusterConfig],
]);

/** node:util parseArgs' options for every flag of the schema, and --help. */
function flagOptions() {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [, source] of [...SETTINGS, ...CLUSTER_SETTINGS])
    options[source.flag] = { type: 'string', multiple: source.list === 'repeat' || source.list === 'either' };
  return options;
}

/** Decimal text as a number for a numeric setting; anything else stays text for the schema to refuse. */
function fromText(schema: TSchema, text: string): unknown {
  const numeric = schema.type === 'integer' || schema.type === 'number';
  return numeric && /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text.trim()) ? Number(text) : text;
}

/** One setting from command-line or environment text, held to its schema; `name` is what the operator wrote. */
function fromTexts(entry: Entry, texts: readonly string[], name: string, field: string): unknown {
  const [, source, schema] = entry;
  const value = source.list
    ? texts.flatMap((text) =>
        source.list === 'repeat'
          ? [text]
          : text
              .split(',')
              .map((item) => item.trim())
              .filter((item) => item !== ''),
      )
    : fromText(schema, texts.at(-1) as string);
  const problem = firstProblem(schema, value);
  if (problem) throw new ConfigError(field, `${name} ${problem.text}`);
  return value;
}

/** The settings one textual source gives (flags or environment variables). */
function textSource(
  texts: (source: ConfigSource) => readonly string[] | undefined,
  name: (source: ConfigSource) => string,
): PartialConfig {
  const read = (entries: Entry[], prefix: string) =>
    Object.fromEntries(
      entries.flatMap((entry) => {
        const given = texts(entry[1]);
        return given === undefined
          ? []
          : [[entry[0], fromTexts(entry, given, name(entry[1]), prefix + entry[0])]];
      }),
    );
  const config = read(SETTINGS, '') as PartialConfig;
  const cluster = read(CLUSTER_SETTINGS, 'cluster.');
  if (Object.keys(cluster).length > 0) config.cluster = cluster;
  return config;
}

function flagSource(
  values: Record<string, string | boolean | Array<string | boolean> | undefined>,
): PartialConfig {
  return textSource(
    (source) => {
      const value = values[source.flag];
      return value === undefined ? undefined : ([value].flat() as string[]);
    },
    (source) => `--${source.flag}`,
  );
}

function envSource(env: Environment): PartialConfig {
  return textSource(
    (source) => {
      const value = source.env === undefined ? undefined : env[source.env];
      return value === undefined || value === '' ? undefined : [value];
    },
    (source) => source.env as string,
  );
}

/** `<data-dir>/settings.json`, held to the file's schema (unknown keys refused); {} when there is none. */
export function readSettingsFile(dataDir: string): PartialConfig {
  const file = join(dataDir, SETTINGS_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(SETTINGS_FILE, `${file} cannot be read: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(SETTINGS_FILE, `${file} is not valid JSON: ${(error as Error).message}`);
  }
  const problem = firstProblem(SettingsFileSchema, parsed);
  if (problem) {
    const field = fieldName(problem.path);
    const known =
      problem.text === 'is not a setting'
        ? `; it takes ${Object.keys(problem.path[0] === 'cluster' && problem.path.length > 1 ? CLUSTER_SOURCES : SettingsFileSchema.properties).join(', ')}`
        : '';
    throw new ConfigError(field, `${file}: ${field || 'the file'} ${problem.text}${known}`);
  }
  // Relative paths in the file are the data dir's, wherever the engine was started from.
  const settings = parsed as PartialConfig;
  if (settings.media_dirs) settings.media_dirs = settings.media_dirs.map((dir) => resolve(dataDir, dir));
  const cluster = settings.cluster;
  if (cluster?.password_file) cluster.password_file = resolve(dataDir, cluster.password_file);
  if (cluster?.ca_file) cluster.ca_file = resolve(dataDir, cluster.ca_file);
  return settings;
}

/** A secret kept in a file: its text, trimmed. Refuses what cannot be one (not a file, too large, empty). */
export function readSecretFile(file: string, name: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    throw new ConfigError(
      'cluster.password_file',
      `${name} ${file} cannot be read: ${(error as Error).message}`,
    );
  }
  try {
    if (!fstatSync(fd).isFile())
      throw new ConfigError('cluster.password_file', `${name} ${file} is not a file`);
    const buffer = Buffer.alloc(MAX_SECRET_FILE_BYTES + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > MAX_SECRET_FILE_BYTES)
      throw new ConfigError(
        'cluster.password_file',
        `${name} ${file} holds more than ${MAX_SECRET_FILE_BYTES} bytes: not a password file`,
      );
    const secret = buffer.subarray(0, length).toString('utf8').trim();
    if (secret === '') throw new ConfigError('cluster.password_file', `${name} ${file} is empty`);
    return secret;
  } finally {
    closeSync(fd);
  }
}

const ANONYMOUS =
  'cluster: anonymous access is refused: name a user (--cluster-user or cluster.user) and a password ' +
  `(--cluster-password-file, cluster.password_file or ${CLUSTER_PASSWORD_ENV})`;

/** The cluster to join, when servers are named: the settings given, the password read. */
function clusterOptions(cluster: Partial<ClusterConfig>, env: Environment): ClusterOptions | undefined {
  const { servers, user, password_file, node_name, ca_file, advertise_url, max_cameras, capacity_cores } =
    cluster;
  if (servers === undefined) {
    const given = Object.keys(cluster);
    if (given.length === 0) return undefined;
    throw new ConfigError(
      'cluster.servers',
      `cluster: ${given.join(', ')} given but no servers to join (--cluster or cluster.servers)`,
    );
  }
  const fromEnv = env[CLUSTER_PASSWORD_ENV]?.trim();
  const password = password_file
    ? readSecretFile(password_file, 'cluster.password_file')
    : fromEnv === ''
      ? undefined
      : fromEnv;
  if (!user || !password) throw new ConfigError(user ? 'cluster.password_file' : 'cluster.user', ANONYMOUS);
  if (ca_file && !statSync(ca_file, { throwIfNoEntry: false })?.isFile())
    throw new ConfigError('cluster.ca_file', `cluster.ca_file ${ca_file} is not a file`);
  return {
    servers,
    user,
    password,
    ...(node_name === undefined ? {} : { nodeName: node_name }),
    ...(ca_file === undefined ? {} : { caFile: ca_file }),
    ...(advertise_url === undefined ? {} : { advertiseUrl: advertise_url }),
    ...(max_cameras === undefined ? {} : { maxCameras: max_cameras }),
    ...(capacity_cores === undefined ? {} : { capacityCores: capacity_cores }),
  };
}

/** The sources merged key by key, the first that gives a key winning. */
function merge(...sources: PartialConfig[]): PartialConfig {
  const merged: Record<string, unknown> = {};
  for (const source of [...sources].reverse())
    for (const [key, value] of Object.entries(source)) if (value !== undefined) merged[key] = value;
  return merged as PartialConfig;
}

/**
 * Reads the configuration: flags (argv as after `npm run engine --`; the process's when undefined),
 * then settings.json in the data dir they (or VC_DATA_DIR, or the default) name, then the
 * environment. Throws a ConfigError naming the setting for any value the schema refuses, and
 * node:util's ERR_PARSE_ARGS_* for an unknown flag.
 */
export function loadEngineConfig(argv: readonly string[] | undefined, env: Environment, cwd: string): Loaded {
  // Without argv, node:util's own choice of the process's arguments (under Electron's utility process too).
  const args = argv === undefined ? {} : { args: [...argv] };
  const { values } = parseArgs({ ...args, options: flagOptions(), strict: true });
  if (values.help) return { help: true };
  const flags = flagSource(values);
  const fromEnv = envSource(env);
  const dataDir = resolve(
    cwd,
    flags.data_dir ?? fromEnv.data_dir ?? EngineConfigSchema.properties.data_dir.default,
  );
  const file = readSettingsFile(dataDir);
  const cluster = { ...file.cluster, ...flags.cluster };
  const { cluster: _, ...merged } = merge(flags, file, fromEnv);
  const config = Value.Default(EngineConfigSchema, { ...merged, data_dir: dataDir }) as EngineConfig;
  // Paths from the command line, the environment and the defaults are the working directory's.
  const absolute = (path: string) => (path === '' ? path : resolve(cwd, path));
  for (const [key, source] of SETTINGS) {
    const value = config[key as keyof EngineConfig];
    if (!source.path || value === undefined) continue;
    Object.assign(config, { [key]: Array.isArray(value) ? value.map(absolute) : absolute(value as string) });
  }
  for (const key of ['password_file', 'ca_file'] as const) {
    const path = cluster[key];
    if (path !== undefined) cluster[key] = absolute(path);
  }
  const joined = clusterOptions(cluster, env);
  if (joined) config.cluster = cluster as ClusterConfig;
  return { help: false, config, options: toEngineOptions(config, joined) };
}
