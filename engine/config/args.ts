/**
 * The command line that starts an engine with a configuration: how the desktop's main process passes
 * its settings to the engine process (main/engine-args.ts), held to the schema before it leaves.
 */
import { ConfigError, fieldName, firstProblem } from './problems';
import {
  CLUSTER_SOURCES,
  CONFIG_SOURCES,
  type ConfigSource,
  type PartialConfig,
  PartialConfigSchema,
} from './schema';

function flags(source: ConfigSource, value: unknown): string[] {
  const flag = `--${source.flag}`;
  if (!Array.isArray(value)) return [flag, String(value)];
  if (source.list === 'comma') return [flag, value.join(',')];
  return value.flatMap((item) => [flag, String(item)]);
}

/** The flags of the settings given (the engine's defaults for the others); throws a ConfigError on a value the schema refuses. */
export function configArgs(config: PartialConfig): string[] {
  const problem = firstProblem(PartialConfigSchema, config);
  if (problem) {
    const field = fieldName(problem.path);
    throw new ConfigError(field, `engine setting ${field} ${problem.text}`);
  }
  const args: string[] = [];
  for (const [key, source] of Object.entries(CONFIG_SOURCES)) {
    const value = config[key as keyof typeof CONFIG_SOURCES];
    if (value !== undefined) args.push(...flags(source, value));
  }
  for (const [key, source] of Object.entries(CLUSTER_SOURCES)) {
    const value = config.cluster?.[key as keyof typeof CLUSTER_SOURCES];
    if (value !== undefined) args.push(...flags(source, value));
  }
  return args;
}
