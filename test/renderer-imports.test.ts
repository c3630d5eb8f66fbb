import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The console validates with the engine's own schemas, so it imports engine modules. Those (and what
 * they import) must stay browser-safe: no Node built-ins, nothing that needs a server. This walks the
 * renderer's import graph and names any engine module that breaks that.
 */
const ROOT = resolve(import.meta.dirname, '..');
const RENDERER = join(ROOT, 'renderer', 'src');
const IMPORT = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'/gm;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? files(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );
}

function resolveModule(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')]) {
    try {
      readFileSync(candidate);
      return candidate;
    } catch {
      // Try the next form.
    }
  }
  return null;
}

/** Runtime (non-type) imports of a file: [specifier, resolved file or null]. */
function runtimeImports(file: string): Array<[string, string | null]> {
  const text = readFileSync(file, 'utf8');
  const found: Array<[string, string | null]> = [];
  for (const match of text.matchAll(IMPORT)) {
    if (match[2]) continue;
    const specifier = (match[3] ?? match[4]) as string;
    found.push([specifier, specifier.startsWith('.') ? resolveModule(file, specifier) : null]);
  }
  return found;
}

describe('renderer import graph', () => {
  it('reaches no Node built-in, through the engine modules it shares', () => {
    const seen = new Set<string>();
    const problems: string[] = [];
    const engineModules = new Set<string>();
    const queue = files(RENDERER);
    while (queue.length > 0) {
      const file = queue.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      if (file.startsWith(join(ROOT, 'engine'))) engineModules.add(relative(ROOT, file));
      for (const [specifier, target] of runtimeImports(file)) {
        if (
          specifier.startsWith('node:') ||
          ['fs', 'path', 'url', 'crypto', 'child_process'].includes(specifier)
        ) {
          problems.push(`${relative(ROOT, file)} imports ${specifier}`);
        }
        if (target) queue.push(target);
      }
    }
    expect(problems).toEqual([]);
    // The shared schemas are really in the graph (the walk follows the imports).
    expect([...engineModules]).toEqual(
      expect.arrayContaining(['engine/api/schemas.ts', 'engine/tasks/polygon.ts']),
    );
  });
});
