import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Engine tests spawn ffmpeg and engine processes; two cores cannot run many files at once.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
