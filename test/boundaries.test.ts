import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAst } from 'rolldown/parseAst';
import { describe, expect, it } from 'vitest';

/**
 * The seams between the engine and what runs outside it, read from the import graph with a real
 * TypeScript parser (oxc through rolldown, vite's own: TypeScript 7 has no JS API and es-module-lexer
 * cannot read TSX). Paths are relative to the repository root.
 */
const ROOT = resolve(import.meta.dirname, '..');

/** The engine modules the contract may reach: schemas and pure functions, nothing that runs. */
const CONTRACT_MODULES = [
  'engine/api/errors.ts',
  'engine/api/schemas.ts',
  'engine/audit/audit-schema.ts',
  'engine/config/args.ts',
  'engine/config/problems.ts',
  'engine/config/schema.ts',
  'engine/auth/password-policy.ts',
  'engine/cluster/placement-schema.ts',
  'engine/cluster/site-view.ts',
  'engine/events/delivery.ts',
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
const ENGINE_ENTRIES = ['test/helpers/engine.ts', 'engine/index.ts', 'engine/engine.ts'];

interface Import {
  specifier: string;
  /** The file it resolves to (relative to ROOT), null for a package or builtin. */
  file: string | null;
  typeOnly: boolean;
  names: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

function resolveFile(from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(ROOT, dirname(from), specifier);
  const candidates = [
    base,
    `${base}.ts`,
    `${base}.tsx`,
    join(base, 'index.ts'),
    base.replace(/\.js$/, '.ts'),
  ];
  const found = candidates.find((candidate) => statSync(candidate, { throwIfNoEntry: false })?.isFile());
  if (!found) throw new Error(`${from}: cannot resolve ${specifier}`);
  return relative(ROOT, found);
}

type Node = { type?: string; [key: string]: unknown };

const cache = new Map<string, Import[]>();

/** Every import of a file: static, re-exports and dynamic import() with a literal. */
function importsOf(file: string): Import[] {
  const cached = cache.get(file);
  if (cached) return cached;
  const ast = parseAst(readFileSync(join(ROOT, file), 'utf8'), { lang: file.endsWith('x') ? 'tsx' : 'ts' });
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean, names: string[] = []) =>
    found.push({ specifier, file: resolveFile(file, specifier), typeOnly, names });
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (!node || typeof node !== 'object') return;
    const n = node as Node;
    const source = n.source as { value?: unknown } | null | undefined;
    if (
      (n.type === 'ImportDeclaration' ||
        n.type === 'ExportNamedDeclaration' ||
        n.type === 'ExportAllDeclaration') &&
      typeof source?.value === 'string'
    ) {
      const specifiers = (n.specifiers ?? []) as Array<{ importKind?: string; local?: { name?: string } }>;
      const typeOnly =
        n.importKind === 'type' ||
        n.exportKind === 'type' ||
        (specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type'));
      add(
        source.value,
        typeOnly,
        specifiers.map((s) => s.local?.name ?? ''),
      );
    } else if (n.type === 'ImportExpression' && typeof source?.value === 'string') {
      add(source.value, false);
    }
    for (const value of Object.values(n)) if (value && typeof value === 'object') walk(value);
  };
  walk(ast.body);
  cache.set(file, found);
  return found;
}

/** The files reachable from `start` (itself included), following type imports too unless told not to. */
function closure(start: string[], options: { values?: boolean } = {}): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const queue: Array<[string, string[]]> = start.map((file) => [file, [file]]);
  while (queue.length > 0) {
    const [file, path] = queue.shift() as [string, string[]];
    if (reached.has(file)) continue;
    reached.set(file, path);
    for (const item of importsOf(file)) {
      if (item.file && /\.tsx?$/.test(item.file) && !(options.values && item.typeOnly))
        queue.push([item.file, [...path, item.file]]);
    }
  }
  return reached;
}

const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string);
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

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
    const tests = sourceFiles('test').filter((file) => /\.test\.tsx?$/.test(file));
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
