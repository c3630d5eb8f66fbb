import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseAst } from 'rolldown/parseAst';

/**
 * The import graph of the repository's TypeScript, read with a real parser (oxc through rolldown,
 * vite's own: TypeScript 7 has no JS API and es-module-lexer cannot read TSX). Paths are relative to
 * the repository root. Read by the boundary rules and by the test tiers (vitest.config.ts).
 */
export const ROOT = resolve(import.meta.dirname, '../..');

export interface Import {
  specifier: string;
  /** The file it resolves to (relative to ROOT), null for a package or builtin. */
  file: string | null;
  typeOnly: boolean;
  names: string[];
}

export function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/** The test files: every file the suite runs. */
export const testFiles = (): string[] => sourceFiles('test').filter((file) => /\.test\.tsx?$/.test(file));

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
export function importsOf(file: string): Import[] {
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
export function closure(start: string[], options: { values?: boolean } = {}): Map<string, string[]> {
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

export const isBuiltin = (specifier: string) =>
  specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string);
export const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
