import { closure, importsOf, isBuiltin, packageOf, testFiles } from './imports';

/**
 * The suite's tiers, decided from what each test file loads (its value imports, followed through
 * every file it reaches), so that a test lands in its tier without a list to keep:
 * - browser: drives Chromium (reaches playwright-core);
 * - process: the test itself starts child processes (engines, nats-server, mosquitto, nginx, ffmpeg
 *   cameras: a test-side file imports node:child_process), or, with no engine in its process, reaches
 *   a child process or a socket through the engine's modules;
 * - engine: an engine in the test's own process (reaches an engine entry) and nothing of the above;
 * - pure: none of these: no engine, no child process, no network. These run in seconds, but for
 *   HEAVY ones, which run with the engine tier.
 * vitest.config.ts makes one Vitest project of each; test/tiers.test.ts holds the rules to account.
 */
export const TIERS = ['pure', 'engine', 'process', 'browser'] as const;
export type Tier = (typeof TIERS)[number];

/** What runs an engine in the test's process. */
export const ENGINE_ENTRIES = ['test/helpers/engine.ts', 'engine/index.ts', 'engine/engine.ts'];
/** Node modules that start a process or open a socket. */
export const OUTSIDE_BUILTINS = ['child_process', 'net', 'http', 'https', 'http2', 'dgram', 'tls', 'cluster'];
/** Packages that open sockets or start processes. */
export const OUTSIDE_PACKAGES = ['playwright-core', 'undici', 'mqtt', '@nats-io/transport-node'];

/**
 * Pure by what they load, but a minute of CPU on a loaded machine: benchmarks over generated data
 * (the change detector on 40 generated pairs). They run with the engine tier, whose files take as long.
 */
export const HEAVY = ['test/change-benchmark.test.ts'];

const builtinName = (specifier: string) => specifier.replace(/^node:/, '').split('/')[0] as string;

export interface Loaded {
  /** The first import path (file -> ... -> module) to each outside module the file reaches. */
  outside: Map<string, string>;
  /** The path to the first engine entry it reaches, if any. */
  engine: string | undefined;
}

/** What a test file loads that decides its tier. */
export function loaded(file: string): Loaded {
  const reached = closure([file], { values: true });
  const outside = new Map<string, string>();
  for (const [from, path] of reached) {
    for (const item of importsOf(from)) {
      if (item.file || item.typeOnly) continue;
      const name = isBuiltin(item.specifier) ? builtinName(item.specifier) : packageOf(item.specifier);
      const listed = isBuiltin(item.specifier) ? OUTSIDE_BUILTINS : OUTSIDE_PACKAGES;
      if (listed.includes(name) && !outside.has(`${from}:${name}`))
        outside.set(`${from}:${name}`, [...path, item.specifier].join(' -> '));
    }
  }
  const entry = ENGINE_ENTRIES.find((candidate) => reached.has(candidate));
  return { outside, engine: entry && (reached.get(entry) as string[]).join(' -> ') };
}

export function tierOf(file: string): Tier {
  const { outside, engine } = loaded(file);
  const keys = [...outside.keys()];
  if (keys.some((key) => key.endsWith(':playwright-core'))) return 'browser';
  if (keys.some((key) => key.startsWith('test/') && key.endsWith(':child_process'))) return 'process';
  if (engine) return 'engine';
  if (keys.length > 0) return 'process';
  return HEAVY.includes(file) ? 'engine' : 'pure';
}

/** Every test file by tier. */
export function testTiers(): Record<Tier, string[]> {
  const tiers: Record<Tier, string[]> = { pure: [], engine: [], process: [], browser: [] };
  for (const file of testFiles()) tiers[tierOf(file)].push(file);
  return tiers;
}
