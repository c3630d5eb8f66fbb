import { describe, expect, it } from 'vitest';
import config from '../vitest.config';
import { testFiles } from './helpers/imports';
import { HEAVY, loaded, TIERS, tierOf } from './helpers/tiers';

/** The suite's tiers (test/helpers/tiers.ts) as vitest.config.ts runs them. */
const projects = (config.test?.projects ?? []) as Array<{ test: { name: string; include: string[] } }>;

describe('test tiers', () => {
  it('every test file runs in exactly one tier, and the tiers are the four Vitest projects', () => {
    expect(projects.map((project) => project.test.name)).toEqual([...TIERS]);
    const placed = projects.flatMap((project) => project.test.include);
    const files = testFiles();
    expect(files.length).toBeGreaterThan(150);
    expect([...placed].sort()).toEqual([...files].sort());
    expect(new Set(placed).size).toBe(placed.length);
  });

  it('a pure test reaches no engine, no child process and no socket', () => {
    const pure = projects.find((project) => project.test.name === 'pure')?.test.include ?? [];
    expect(pure.length).toBeGreaterThan(40);
    const loading = pure.flatMap((file) => {
      const { outside, engine } = loaded(file);
      return [...outside.values(), ...(engine ? [engine] : [])];
    });
    expect(loading).toEqual([]);
  });

  it('the heavy tests listed apart are pure by what they load, and run with the engine tier', () => {
    for (const file of HEAVY) expect(loaded(file)).toEqual({ outside: new Map(), engine: undefined });
    expect(HEAVY.map(tierOf)).toEqual(HEAVY.map(() => 'engine'));
  });

  it('places tests by what they start', () => {
    const placed = (files: string[]) => files.map((file) => `${file}: ${tierOf(`test/${file}`)}`);
    expect(
      placed([
        'task-lifecycle-unit.test.ts',
        'cluster-liveness.test.ts',
        'cluster-placement.test.ts',
        'rules-zones.test.ts',
        'task-listing.test.ts',
        'api-login.test.ts',
        'cluster-failover.test.ts',
        'cluster-store.test.ts',
        'resume-guard.test.ts',
        'frame-source.test.ts',
        'delivery-mqtt.test.ts',
        'console-e2e.test.ts',
        'live-browser.test.ts',
      ]),
    ).toEqual([
      'task-lifecycle-unit.test.ts: pure',
      'cluster-liveness.test.ts: pure',
      'cluster-placement.test.ts: pure',
      'rules-zones.test.ts: pure',
      // An engine in the test's process.
      'task-listing.test.ts: engine',
      'api-login.test.ts: engine',
      // NATS servers and engine processes.
      'cluster-failover.test.ts: process',
      'cluster-store.test.ts: process',
      'resume-guard.test.ts: process',
      // No engine, but ffmpeg or a broker.
      'frame-source.test.ts: process',
      'delivery-mqtt.test.ts: process',
      'console-e2e.test.ts: browser',
      'live-browser.test.ts: browser',
    ]);
  });
});
