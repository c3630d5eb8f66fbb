/**
 * The engine's configuration as the desktop's main process uses it: the engine process's flags,
 * written from the one configuration schema (engine/config/schema.ts) and held to it.
 */
export { configArgs } from '../config/args';
export type { PartialConfig } from '../config/schema';
