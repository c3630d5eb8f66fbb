import { defineConfig } from 'vitest/config';
import { TIERS, testTiers } from './test/helpers/tiers';

// One project per tier, each file placed by what it loads (test/helpers/tiers.ts): `vitest run` runs
// them all, `vitest run --project pure` one alone. The projects name their options rather than
// extend this file: an extending project loads it again, classifying the suite once more.
const tiers = testTiers();

export default defineConfig({
  test: {
    // Engine tests spawn ffmpeg and engine processes; two cores cannot run many files at once.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
    projects: TIERS.map((name) => ({
      test: { name, include: tiers[name], testTimeout: 30_000, hookTimeout: 60_000 },
    })),
  },
});
