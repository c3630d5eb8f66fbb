import { describe, expect, it } from 'vitest';
import { closure, importsOf, isBuiltin, packageOf, sourceFiles, testFiles } from './helpers/imports';
import { ENGINE_ENTRIES } from './helpers/tiers';

/**
 * The seams between the engine and what runs outside it, read from the import graph
 * (test/helpers/imports.ts). Paths are relative to the repository root.
 */

/** The engine modules the contract may reach: schemas and pure functions, nothing that runs. */
const CONTRACT_MODULES = [
  'engine/api/errors.ts',
  'engine/api/schemas.ts',
  'engine/audit/audit-schema.ts',
  'engine/config/args.ts',
  'engine/config/problems.ts',
  'engine/config/schema.ts',
  'engine/auth/password-policy.ts',
  'engine/clips/clip-schema.ts',
  'engine/cluster/placement-schema.ts',
  'engine/cluster/site-view.ts',
  'engine/events/delivery.ts',
  'engine/events/review-items-schema.ts',
  'engine/events/review-schema.ts',
  'engine/events/schema.ts',
  'engine/inference/providers.ts',
  'engine/media/analysis-size.ts',
  'engine/media/source-pixels.ts',
  'engine/optimization/schema.ts',
  'engine/osd/label-placement.ts',
  'engine/rules/counts.ts',
  'engine/rules/ground.ts',
  'engine/rules/inertia.ts',
  'engine/rules/override.ts',
  'engine/rules/schema.ts',
  'engine/rules/validate.ts',
  'engine/schema/ajv.ts',
  'engine/schema/text.ts',
  'engine/tasks/limits.ts',
  'engine/tasks/polygon.ts',
  'engine/tasks/schema.ts',
  'engine/vision/geometry.ts',
  'engine/vision/types.ts',
];
/** The packages the contract may reach: pure JavaScript that runs in a browser. */
const CONTRACT_PACKAGES = ['@sinclair/typebox', 'ajv'];

/** What starts an engine in a test; a test that names none of these must not load one. */
const ENGINE_STARTERS = ['startTestEngine', 'spawnEngine', 'startEngine'];

describe('module boundaries', () => {
  it('renderer, preload and main import nothing of the engine but engine/contract', () => {
    const outside = [...sourceFiles('renderer'), ...sourceFiles('preload'), ...sourceFiles('main')];
    expect(outside.length).toBeGreaterThan(50);
    const crossings = outside.flatMap((file) =>
      importsOf(file)
        .filter((item) => item.file?.startsWith('engine/') && !item.file.startsWith('engine/contract/'))
        .map((item) => `${file} -> ${item.file}`),
    );
    expect(crossings).toEqual([]);
  });

  it('the contract reaches only schema and pure modules: no Node builtin, no native package, no runtime', () => {
    const start = sourceFiles('engine/contract');
    const reached = closure(start);
    const problems: string[] = [];
    for (const [file, path] of reached) {
      if (!file.startsWith('engine/contract/') && !CONTRACT_MODULES.includes(file)) {
        problems.push(`engine module ${path.join(' -> ')}`);
      }
      for (const item of importsOf(file)) {
        if (item.file) continue;
        if (isBuiltin(item.specifier)) problems.push(`builtin ${item.specifier} in ${path.join(' -> ')}`);
        else if (!CONTRACT_PACKAGES.includes(packageOf(item.specifier))) {
          problems.push(`package ${item.specifier} in ${path.join(' -> ')}`);
        }
      }
    }
    expect(problems).toEqual([]);
    // The walk really follows the re-exports (a contract of one empty file would pass vacuously).
    expect([...reached.keys()]).toEqual(
      expect.arrayContaining(['engine/tasks/schema.ts', 'engine/schema/ajv.ts']),
    );
  });

  it('test files that start no engine load none', () => {
    const tests = testFiles();
    const pure = tests.filter(
      (file) => !importsOf(file).some((item) => item.names.some((name) => ENGINE_STARTERS.includes(name))),
    );
    // Most test files drive an engine; the pure ones are the many maths and renderer tests.
    expect(pure.length).toBeGreaterThan(10);
    const loading = pure.flatMap((file) => {
      const reached = closure([file], { values: true });
      return ENGINE_ENTRIES.filter((entry) => reached.has(entry)).map((entry) =>
        (reached.get(entry) as string[]).join(' -> '),
      );
    });
    expect(loading).toEqual([]);
  });
});
